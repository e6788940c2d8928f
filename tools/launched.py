"""A chapter launched as a reader launches it, timed and weighed.

    python -m tools.launched [--notebooks lab,patches] [--limit-gb 2] [--work DIR] [--report FILE]

What a reader who opens a notebook in Binder gets: a fresh environment with
only what ``binder/requirements.txt`` installs, the notebook as ``make
notebooks`` writes it (its first cell installs ``vitbias``, here from the
wheel next to it, as on a site published without a repository URL), an empty
run cache, and a memory limit (Binder's is about 2 GB). Each notebook is
executed by ``nbclient`` in that environment, through its own install cell;
its wall time and the peak memory of the whole process tree (the executor,
the kernel and every training worker it starts) are measured.

The limit is given to the book as ``VITBIAS_MEMORY_LIMIT``
(:func:`vitbias.runs.available_memory`), as a container's cgroup would show
it, so that ``vitbias.runs.default_workers`` starts no more workers than the
memory holds; nothing here enforces it. The peak is the largest sum, over one
sample, of the processes' proportional set sizes (``Pss`` in
``/proc/PID/smaps_rollup``: shared pages counted once over all processes),
or their resident sizes where that cannot be read (an over-count), sampled
every :data:`SAMPLE_SECONDS`. The command exits 1 when a notebook fails or its
peak reaches the limit, and writes a JSON report.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "binder" / "requirements.txt"
NOTEBOOKS = ("lab", "patches")
LIMIT_GB = 2.0
SAMPLE_SECONDS = 0.5
CELL_TIMEOUT = 3600

# Run by the fresh environment's Python: execute one notebook in its own folder, write it back.
EXECUTE = """
import sys, nbformat
from nbclient import NotebookClient
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
NotebookClient(nb, timeout=int(sys.argv[2]), kernel_name="python3",
               resources={"metadata": {"path": sys.argv[3]}}).execute()
nbformat.write(nb, path)
"""


def _children() -> dict[int, list[int]]:
    """Every process's children, from ``/proc/PID/stat``."""
    found: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state
        found.setdefault(parent, []).append(int(entry.name))
    return found


def tree(root: int) -> list[int]:
    """``root`` and all its descendants, as ``/proc`` shows them now."""
    children, todo, seen = _children(), [root], []
    while todo:
        pid = todo.pop()
        seen.append(pid)
        todo += children.get(pid, [])
    return seen


def process_bytes(pid: int) -> int:
    """A process's proportional set size (``Pss``), else its resident size (``VmRSS``); 0 once it is gone."""
    for name, key in (("smaps_rollup", "Pss:"), ("status", "VmRSS:")):
        try:
            for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
        except (OSError, ValueError):
            continue
    return 0


def tree_bytes(root: int) -> int:
    """The memory of ``root``'s process tree now: the sum of :func:`process_bytes`."""
    return sum(process_bytes(pid) for pid in tree(root))


class PeakSampler:
    """Samples :func:`tree_bytes` of one process every ``every`` seconds; ``peak`` is the largest sample."""

    def __init__(self, pid: int, every: float = SAMPLE_SECONDS):
        if every <= 0:
            raise ValueError(f"the sampling interval must be positive, got {every}")
        self.pid, self.every, self.peak, self.samples = pid, every, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_bytes(self.pid))
            self.samples += 1
            self._stop.wait(self.every)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def fresh_environment(where: Path) -> Path:
    """A new virtual environment at ``where`` with ``binder/requirements.txt`` installed; its Python."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    python = where / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)], check=True)
    return python


def write_notebooks(folder: Path) -> None:
    """The launched notebooks, and the wheel their install cell looks for next to them."""
    environment = {k: v for k, v in os.environ.items() if k not in ("BOOK_REPOSITORY_URL", "BOOK_BRANCH")}
    for extra in (["--out", str(folder)], ["--wheel", str(folder)]):
        subprocess.run([sys.executable, "-m", "tools.notebooks", *extra], cwd=ROOT, env=environment,
                       check=True, stdout=subprocess.DEVNULL)


def execute(python: Path, notebook: Path, runs: Path, limit: int) -> dict:
    """Execute ``notebook`` with ``python`` in a clean environment: seconds, peak bytes, whether it ran."""
    environment = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    environment |= {"VITBIAS_RUNS": str(runs), "VITBIAS_MEMORY_LIMIT": str(limit), "MPLBACKEND": "agg",
                    "PYTHONNOUSERSITE": "1"}
    start = time.perf_counter()
    process = subprocess.Popen([str(python), "-c", EXECUTE, str(notebook), str(CELL_TIMEOUT), str(notebook.parent)],
                               env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with PeakSampler(process.pid) as sampler:
        output, _ = process.communicate()
    return {"notebook": notebook.stem, "seconds": round(time.perf_counter() - start, 1),
            "peak_bytes": sampler.peak, "peak_gb": round(sampler.peak / 1e9, 3), "samples": sampler.samples,
            "ok": process.returncode == 0, "limit_gb": round(limit / 1e9, 3),
            "output_tail": output[-3000:] if process.returncode else ""}


def parse(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notebooks", default=",".join(NOTEBOOKS), help="chapters, comma-separated")
    parser.add_argument("--limit-gb", type=float, default=LIMIT_GB, help="the session's memory, in GB (1e9 bytes)")
    parser.add_argument("--work", type=Path, help="a folder to work in (default: a temporary one)")
    parser.add_argument("--report", type=Path, default=ROOT / "_build" / "reports" / "launched.json")
    args = parser.parse_args(argv)
    args.notebooks = [name.strip() for name in args.notebooks.split(",") if name.strip()]
    if not args.notebooks:
        parser.error("name at least one notebook")
    if not args.limit_gb > 0:
        parser.error(f"--limit-gb must be positive, got {args.limit_gb}")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    limit = int(args.limit_gb * 1e9)
    with tempfile.TemporaryDirectory(prefix="launched-") as scratch:
        work = args.work or Path(scratch)
        start = time.perf_counter()
        python = fresh_environment(work / "env")
        setup = round(time.perf_counter() - start, 1)
        folder = work / "notebooks"
        write_notebooks(folder)
        missing = [name for name in args.notebooks if not (folder / f"{name}.ipynb").is_file()]
        if missing:
            raise SystemExit(f"no launched notebook for {missing} in {folder}")
        results = [execute(python, folder / f"{name}.ipynb", work / "runs", limit) for name in args.notebooks]
    report = {"limit_gb": args.limit_gb, "environment_seconds": setup, "cores": os.cpu_count(), "notebooks": results}
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps(report, indent=1))
    failed = False
    for result in results:
        verdict = "ran" if result["ok"] else "FAILED"
        over = result["peak_bytes"] >= limit
        failed |= over or not result["ok"]
        print(f"{result['notebook']}: {verdict} in {result['seconds']} s, peak {result['peak_gb']} GB "
              f"of {args.limit_gb} GB{' (OVER THE LIMIT)' if over else ''}")
        if result["output_tail"]:
            print(result["output_tail"])
    print(f"environment: {setup} s; report: {args.report}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
