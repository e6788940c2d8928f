"""vitbias: the code behind the book on the inductive bias of Vision Transformers.

One module per idea the book teaches, plus the plumbing:

- ``toy``: the bias trade-off toy (a shared 3-tap convolution against a full
  linear map), its error formulas and its Monte Carlo experiment.
- ``profile``: the build profile (``quick`` or ``full``) and the device.
- ``book``: gluing numbers into the prose with a declared tolerance, and the
  record of how a build was made.
- ``plots``: the figures.
"""

import warnings

# timm imports tqdm.auto, which warns in a kernel without ipywidgets; the
# warning is about progress bars, which the book never shows.
warnings.filterwarnings("ignore", message="IProgress not found")

__version__ = "0.1.0"
