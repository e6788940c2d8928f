"""Import vitbias from this checkout's code/, whatever is installed (as tests/conftest.py does)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "code"))
