"""Train a profile's runs without the book, time them, and write what the pages need.

    python -m tools.gpu_run --out DIR [--minutes M] [--chapters crossover,locality,...]
                            [--workers N] [--no-weights] [--require-cuda]

Needs ``code/`` (for ``vitbias``) and the checkout's root (for ``tools``) on
``sys.path``, and PyTorch, timm and NumPy: no Jupyter. The profile is ``gpu``
unless ``VITBIAS_PROFILE`` names another. The runs are those of
:func:`vitbias.chapters.chapter_runs`, the crossover chapter's first, then the
other chapters' (a run two chapters share is trained once); within a chapter
the cheapest first, and a distilled run after its teacher. They are trained
by :func:`vitbias.runs.run` into the run cache ``DIR/runs`` (so the trainer's
bf16 autocast and ``channels_last`` apply on CUDA): on CUDA one at a time in
this process, on a CPU side by side, one single-threaded process per core
(``--workers``), as :func:`vitbias.runs.run_many` trains them. A run already
in ``DIR/runs`` is read, not trained again, so a second call continues the first.

``--minutes`` bounds the wall time. A run starts only when the time it is
expected to take ends before the limit. The expectation comes from the runs
finished so far, and bounds the time from above when a run's time is a fixed
cost plus a cost proportional to its work: for a run of ``w`` images trained
(steps x batch) and ``m`` images generated and scored (training and test
sets), each finished run of the same model gives ``t_i max(1, w / w_i)`` for
the training loop and ``o_i max(1, m / m_i)`` for the rest, and the smallest
of these is taken, with a margin (:class:`Timing`). A run is started without
an estimate only while no run has finished yet; a run whose model has not
been seen is given :data:`UNSEEN` times the slowest rate seen. A run that
would not fit is skipped, and the next ones are tried.

``DIR/summary.json`` (rewritten after every run, so a killed command leaves
what finished) holds the device, the profile, the library versions, the source
digest of :func:`vitbias.runs.source_digest`, every run (its key, chapters,
configuration, status, estimate, wall and training seconds, accuracy) and the
totals: runs finished and skipped, runs and images per second, the GPU's
utilisation sampled once a second (``null`` where it cannot be read), and the
crossover chapter's training seconds. ``--no-weights`` removes the
``model.pt`` files at the end, for when they would not fit what can be
carried back; ``python -m tools.gpu_import DIR`` then refuses those runs,
since a build cannot load a run without its model.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "code") not in sys.path:
    sys.path.insert(0, str(ROOT / "code"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from vitbias import chapters as book_chapters  # noqa: E402
from vitbias import profile, runs  # noqa: E402

DEFAULT_PROFILE = "gpu"
FIRST_CHAPTER = "crossover"
SUMMARY = "summary.json"
RUNS = "runs"
MARGIN = 1.15   # an estimate is multiplied by this before it is compared with the time left
UNSEEN = 3.0    # a model not trained yet is given this many times the slowest rate seen
SAMPLE_SECONDS = 1.0


# ---------------------------------------------------------------------------
# Which runs, in which order
# ---------------------------------------------------------------------------

@dataclass
class Planned:
    """A distinct run: its key, configuration, the chapters that use it, their names for it, and the key of
    its teacher (a distilled run's)."""

    key: str
    config: dict
    chapters: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    teacher: str | None = None


def chapter_order(names) -> tuple[str, ...]:
    """``names`` without repeats, the crossover chapter first; ``ValueError`` for a chapter with no runs."""
    names = [name.strip() for name in names if name.strip()]
    unknown = [name for name in names if name not in book_chapters.PLANNED]
    if unknown or not names:
        raise ValueError(f"chapters must be among {book_chapters.PLANNED}, got {names}")
    ordered = list(dict.fromkeys(names))
    if FIRST_CHAPTER in ordered:
        ordered.remove(FIRST_CHAPTER)
        ordered.insert(0, FIRST_CHAPTER)
    return tuple(ordered)


def work(config: dict) -> int:
    """Images a run pushes through its model in training (twice for a distilled run: the teacher reads them)."""
    recipe = config["train"]
    return recipe["steps"] * recipe["batch_size"] * (2 if "teacher" in recipe else 1)


def gather(budget, chapters) -> list[Planned]:
    """The distinct runs of ``chapters`` (in :func:`chapter_order`), each once, in the order they are trained:
    chapter by chapter, the cheapest first within one (by :func:`work`), a distilled run's teacher before it."""
    found: dict[str, Planned] = {}

    def place(config, chapter, label):
        teacher = config["train"].get("teacher")
        if teacher is not None:
            teacher = place(teacher, chapter, f"teacher of {label}")
        key = runs.run_key(config)
        entry = found.setdefault(key, Planned(key, runs.check_config(config), teacher=teacher))
        if chapter not in entry.chapters:
            entry.chapters.append(chapter)
        entry.labels.append(f"{chapter} {label}")
        return key

    for chapter in chapter_order(chapters):
        wanted = book_chapters.chapter_runs(chapter, budget)
        for label, config in sorted(wanted.items(), key=lambda item: work(item[1])):
            place(config, chapter, str(label))
    return list(found.values())


# ---------------------------------------------------------------------------
# How long a run will take
# ---------------------------------------------------------------------------

def model_kind(config: dict) -> str:
    """What decides a run's speed besides its work: the model, and whether a teacher reads each batch."""
    return json.dumps([config["model"], "teacher" in config["train"]], sort_keys=True)


def images(config: dict) -> int:
    """Images a run generates (or reads) and scores: its training and test sets."""
    return config["data"]["train"] + config["data"]["test"]


class Timing:
    """Estimates a run's wall time from the runs finished so far (see the module's docstring)."""

    def __init__(self):
        self.finished: list[tuple[str, int, int, float, float]] = []  # kind, work, images, loop s, rest s

    def add(self, config: dict, wall: float, loop: float) -> None:
        """Record a finished run: ``wall`` seconds in all, ``loop`` of them in the training loop."""
        loop = min(max(loop, 0.0), wall)
        self.finished.append((model_kind(config), work(config), images(config), loop, wall - loop))

    def seconds(self, config: dict) -> float | None:
        """The expected wall time of ``config`` (with the margin), or ``None`` before any run finished."""
        if not self.finished:
            return None
        kind, w, m = model_kind(config), work(config), images(config)
        same = [f for f in self.finished if f[0] == kind]
        if same:
            loop = min(t * max(1.0, w / wi) for _, wi, _, t, _ in same)
        else:
            loop = UNSEEN * w * max(t / wi for _, wi, _, t, _ in self.finished)
        rest = min(o * max(1.0, m / mi) for _, _, mi, _, o in (same or self.finished))
        return MARGIN * (loop + rest)


# ---------------------------------------------------------------------------
# The device and its utilisation
# ---------------------------------------------------------------------------

def describe_device() -> dict:
    """The device the runs train on: its kind, its name and, on CUDA, its memory."""
    kind = profile.device_name()
    if kind == "cuda":
        props = torch.cuda.get_device_properties(0)
        return {"kind": kind, "name": props.name, "memory_bytes": int(props.total_memory),
                "count": torch.cuda.device_count()}
    return {"kind": kind, "name": _cpu_name(), "memory_bytes": None,
            "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()}


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _utilisation_reader():
    """A function returning the GPU's utilisation in percent, or ``None`` when none can be read."""
    try:
        torch.cuda.utilization()
        return lambda: float(torch.cuda.utilization())
    except Exception:  # torch reads it through pynvml, which may be missing
        pass
    if shutil.which("nvidia-smi") is None:
        return None

    def smi():
        out = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=5, check=True).stdout
        return float(out.split()[0])

    try:
        smi()
    except Exception:
        return None
    return smi


class Utilisation:
    """Samples the GPU's utilisation once a second while the runs train (nothing on a CPU)."""

    def __init__(self, active: bool):
        self.samples: list[float] = []
        self.source = None
        self._stop = threading.Event()
        self._read = _utilisation_reader() if active else None
        self._thread = None
        if self._read is not None:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()

    def _loop(self):
        while not self._stop.wait(SAMPLE_SECONDS):
            try:
                self.samples.append(self._read())
            except Exception:
                return

    def current(self) -> dict | None:
        """``{"mean", "max", "samples"}`` in percent so far, or ``None`` when it could not be measured."""
        samples = list(self.samples)
        if not samples:
            return None
        return {"mean": float(np.mean(samples)), "max": float(np.max(samples)), "samples": len(samples)}

    def stop(self) -> dict | None:
        """Stop sampling; :meth:`current`."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        return self.current()


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------

def cached(folder: Path, key: str) -> bool:
    """Whether the run cache holds the run: its metrics and its model (what :func:`vitbias.runs.run` loads)."""
    return (folder / key / "metrics.json").is_file() and (folder / key / "model.pt").is_file()


def read_metrics(folder: Path, key: str) -> dict:
    """What the summary keeps of a run's ``metrics.json``: its training seconds, speed and accuracies."""
    metrics = json.loads((folder / key / "metrics.json").read_text())
    return {"seconds": metrics["seconds"], "accuracy": metrics["test_accuracy"],
            "train_accuracy": metrics["train_accuracy"], "images_per_second": metrics["images_per_second"],
            "trained_on": metrics["device"]}


def _train_one(config: dict, folder: str) -> None:
    """A worker's task: train ``config`` into ``folder`` on one thread."""
    torch.set_num_threads(1)
    runs.run(config, folder)


class Trainer:
    """Trains the planned runs into ``folder`` before ``deadline`` (seconds of ``clock``), reporting each."""

    def __init__(self, planned, folder: Path, deadline: float, clock, start: float, workers: int, report):
        self.planned, self.folder, self.deadline, self.clock = planned, folder, deadline, clock
        self.start, self.workers, self.report = start, workers, report
        self.timing = Timing()
        self.status: dict[str, dict] = {}

    def _decide(self, entry: Planned) -> float | None | str:
        """The estimate to start ``entry`` with, or the reason it is skipped."""
        if entry.teacher is not None:
            state = self.status.get(entry.teacher, {}).get("status")
            if state not in ("trained", "cached"):
                return "its teacher was not trained"
        estimate = self.timing.seconds(entry.config)
        left = self.deadline - self.clock()
        if left <= 0:
            return "the time limit was reached"
        if estimate is not None and estimate > left:
            return f"the time limit: expected {estimate:.1f} s, {left:.1f} s left"
        return estimate

    def _finished(self, entry: Planned, began: float, estimate, error: BaseException | None = None):
        ended = self.clock()
        record = {"status": "trained", "estimate_seconds": estimate, "started_at": began - self.start,
                  "ended_at": ended - self.start, "wall_seconds": ended - began}
        if error is not None:
            record |= {"status": "failed", "reason": f"{type(error).__name__}: {error}"}
        else:
            record |= read_metrics(self.folder, entry.key)
            self.timing.add(entry.config, ended - began, record["seconds"])
        self.status[entry.key] = record
        self.report(entry, record)

    def _skip(self, entry: Planned, reason: str):
        self.status[entry.key] = {"status": "skipped", "reason": reason}
        self.report(entry, self.status[entry.key])

    def run(self) -> dict[str, dict]:
        pending = []
        for entry in self.planned:
            if cached(self.folder, entry.key):
                self.status[entry.key] = {"status": "cached", **read_metrics(self.folder, entry.key)}
                self.report(entry, self.status[entry.key])
            else:
                # an entry without its model (--no-weights) would block the store of a new training
                shutil.rmtree(self.folder / entry.key, ignore_errors=True)
                pending.append(entry)
        if self.workers == 1:
            self._in_process(pending)
        else:
            self._side_by_side(pending)
        return self.status

    def _in_process(self, pending):
        for entry in pending:
            decision = self._decide(entry)
            if isinstance(decision, str):
                self._skip(entry, decision)
                continue
            began = self.clock()
            try:
                runs.run(entry.config, self.folder)
            except Exception as error:  # a diverged run is reported, and the others still train
                self._finished(entry, began, decision, error)
            else:
                self._finished(entry, began, decision)

    def _side_by_side(self, pending):
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(self.workers, mp_context=context) as pool:
            flying: dict = {}
            while pending or flying:
                while len(flying) < self.workers:
                    # a distilled run waits until its teacher is decided (trained, cached or skipped)
                    ready = [e for e in pending if e.teacher is None or e.teacher in self.status]
                    if not ready:
                        break
                    entry = ready[0]
                    pending.remove(entry)
                    decision = self._decide(entry)
                    if isinstance(decision, str):
                        self._skip(entry, decision)
                        continue
                    future = pool.submit(_train_one, entry.config, str(self.folder))
                    flying[future] = (entry, self.clock(), decision)
                if not flying:
                    for entry in pending:  # teachers come first in the plan, so this is never reached
                        self._skip(entry, "its teacher was not planned")
                    break
                done, _ = wait(flying, return_when=FIRST_COMPLETED)
                for future in done:
                    entry, began, estimate = flying.pop(future)
                    self._finished(entry, began, estimate, future.exception())


# ---------------------------------------------------------------------------
# The summary
# ---------------------------------------------------------------------------

def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def _commit() -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _per_second(amount: float, seconds: float) -> float | None:
    return amount / seconds if seconds > 0 and amount > 0 else None


def summarise(header: dict, planned, status: dict, folder: Path, elapsed: float, utilisation) -> dict:
    """The summary: ``header``, every run with its status and metrics, and the totals."""
    entries = []
    for entry in planned:
        record = {"key": entry.key, "chapters": entry.chapters, "labels": entry.labels, "config": entry.config,
                  "status": "not started", **status.get(entry.key, {})}
        if record["status"] in ("trained", "cached"):
            model = folder / entry.key / "model.pt"
            record["weights_bytes"] = model.stat().st_size if model.is_file() else None
        entries.append(record)
    trained = [r for r in entries if r["status"] == "trained"]
    done = [r for r in entries if r["status"] in ("trained", "cached")]
    loop = sum(r["seconds"] for r in trained)
    pushed = sum(work(r["config"]) for r in trained)
    crossover = [r for r in entries if FIRST_CHAPTER in r["chapters"]]
    crossover_done = [r for r in crossover if r["status"] in ("trained", "cached")]
    totals = {
        "planned": len(entries), "finished": len(done), "trained": len(trained),
        "cached": len(done) - len(trained), "skipped": sum(r["status"] == "skipped" for r in entries),
        "failed": sum(r["status"] == "failed" for r in entries),
        "skipped_for_time": sum(r["status"] == "skipped" and "time limit" in r["reason"] for r in entries),
        "wall_seconds": elapsed, "training_seconds": loop,
        # the rest of the trained runs' time: generating and scoring their images, building and storing the models
        "outside_training_seconds": sum(r["wall_seconds"] - r["seconds"] for r in trained),
        "runs_per_second": _per_second(len(trained), elapsed),
        "images_per_second": _per_second(pushed, loop),
        "images_per_wall_second": _per_second(pushed, elapsed),
        "gpu_utilisation": utilisation,
        "gpu_peak_memory_bytes": (int(torch.cuda.max_memory_allocated()) if torch.cuda.is_available() else None),
        "crossover": None if not crossover else {
            "runs": len(crossover), "finished": len(crossover_done),
            "complete": len(crossover_done) == len(crossover),
            "training_seconds": sum(r["seconds"] for r in crossover_done),
            "wall_seconds": (max(r["ended_at"] for r in crossover) if all(r["status"] == "trained"
                                                                          for r in crossover) else None),
        },
    }
    return {**header, "runs": entries, "totals": totals}


def write_json(path: Path, content: dict) -> None:
    """Write ``content`` to ``path`` through a temporary file, so that a reader never sees half of it."""
    staging = path.with_name(path.name + ".tmp")
    staging.write_text(json.dumps(content, indent=1, sort_keys=True))
    os.replace(staging, path)


# ---------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------

def profile_name() -> str:
    """``VITBIAS_PROFILE`` when set, else ``gpu``."""
    name = os.environ.get(profile.PROFILE_VARIABLE, "").strip() or DEFAULT_PROFILE
    if name not in profile.PROFILES:
        raise ValueError(f"{profile.PROFILE_VARIABLE} must be one of {profile.PROFILES}, got {name!r}")
    return name


def _describe(entry: Planned) -> str:
    data, model = entry.config["data"], entry.config["model"]
    return f"{model['kind']} n={data['train']} ({entry.labels[0]})"


def main(argv=None, *, clock=time.monotonic) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gpu_run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="the folder for runs/ and summary.json")
    parser.add_argument("--minutes", type=float, default=math.inf, help="wall-time limit (default: none)")
    parser.add_argument("--chapters", default=",".join(book_chapters.PLANNED),
                        help=f"comma-separated, among {','.join(book_chapters.PLANNED)} (default: all)")
    parser.add_argument("--workers", type=int, default=None,
                        help="runs trained side by side (default: 1 on CUDA, one per core on a CPU)")
    parser.add_argument("--no-weights", action="store_true", help="remove model.pt files at the end")
    parser.add_argument("--require-cuda", action="store_true", help="stop when no CUDA device is found")
    args = parser.parse_args(argv)
    if not args.minutes >= 0:
        parser.error(f"--minutes must be non-negative, got {args.minutes}")
    try:
        chapters = chapter_order(args.chapters.split(","))
        name = profile_name()
    except ValueError as error:
        parser.error(str(error))
    workers = runs.default_workers() if args.workers is None else args.workers
    if workers < 1:
        parser.error(f"--workers must be positive, got {workers}")

    start = clock()
    device = describe_device()
    if device["kind"] == "cuda":
        print(f"device: CUDA, {device['name']} ({device['memory_bytes'] / 2**30:.0f} GiB)", flush=True)
    else:
        print(f"device: no CUDA device, running on the CPU ({device['name']}, {workers} worker"
              f"{'s' if workers > 1 else ''})", flush=True)
        if args.require_cuda:
            print("--require-cuda: stopping.", file=sys.stderr)
            return 2
    import timm

    out = args.out
    folder = out / RUNS
    folder.mkdir(parents=True, exist_ok=True)
    budget = profile.budget(name)
    planned = gather(budget, chapters)
    limit = f"limit {args.minutes:g} min" if math.isfinite(args.minutes) else "no time limit"
    print(f"profile {name}: {len(planned)} distinct runs of {', '.join(chapters)}; {limit}; run cache {folder}",
          flush=True)
    header = {"device": device, "profile": name, "chapters": list(chapters), "limit_minutes": args.minutes
              if math.isfinite(args.minutes) else None, "workers": workers, "weights": not args.no_weights,
              "versions": {"torch": torch.__version__, "timm": timm.__version__, "numpy": np.__version__,
                           "python": platform.python_version()},
              "source_digest": runs.source_digest(), "commit": _commit()}
    utilisation = Utilisation(device["kind"] == "cuda")
    count = {"n": 0}

    def report(entry, record):
        count["n"] += 1
        detail = {"trained": lambda: f"{record['wall_seconds']:.1f} s", "cached": lambda: "in the run cache",
                  "skipped": lambda: f"skipped: {record['reason']}",
                  "failed": lambda: f"FAILED: {record['reason']}"}[record["status"]]()
        print(f"[{count['n']}/{len(planned)}] {_describe(entry)}: {detail}", flush=True)
        if record["status"] in ("trained", "failed"):
            write_json(out / SUMMARY, summarise(header, planned, trainer.status, folder, clock() - start,
                                                utilisation.current()))

    trainer = Trainer(planned, folder, start + 60 * args.minutes, clock, start, workers, report)
    status = trainer.run()
    summary = summarise(header, planned, status, folder, clock() - start, utilisation.stop())
    if args.no_weights:
        for model in folder.glob("*/model.pt"):
            model.unlink()
        for record in summary["runs"]:
            if "weights_bytes" in record:
                record["weights_bytes"] = None
    write_json(out / SUMMARY, summary)
    summary["totals"]["folder_bytes"] = folder_bytes(out)
    write_json(out / SUMMARY, summary)

    totals = summary["totals"]
    print(f"trained {totals['trained']}, from the run cache {totals['cached']}, skipped {totals['skipped']} "
          f"({totals['skipped_for_time']} for the time limit), failed {totals['failed']}, "
          f"in {totals['wall_seconds']:.1f} s", flush=True)
    if totals["skipped_for_time"]:
        print(f"stopped by the time limit of {args.minutes:g} min: {totals['skipped_for_time']} runs not started",
              flush=True)
    cross = totals["crossover"]
    if cross is not None:
        print(f"crossover chapter: {cross['finished']}/{cross['runs']} runs, "
              f"{cross['training_seconds']:.1f} s of training", flush=True)
    print(f"summary: {out / SUMMARY}; {out} holds {totals['folder_bytes'] / 2**20:.1f} MiB", flush=True)
    return 1 if totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
