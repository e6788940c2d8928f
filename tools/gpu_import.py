"""Put the runs that ``python -m tools.gpu_run --out DIR`` brought back into the local run cache.

    python -m tools.gpu_import DIR [--runs FOLDER]

A run's cache key (:func:`vitbias.runs.run_key`) holds the library versions and
the kind of device, so a run trained on a CUDA machine is not found by a build
on a CPU. This copies each run of ``DIR/runs/`` (``config.json``,
``metrics.json``, ``model.pt``) into the run cache (``FOLDER``, else
``$VITBIAS_RUNS``, else ``.runs/``) under the key this machine computes for
its configuration, and records in its metrics where it was trained
(``"trained_on"``: the device, the key, the versions and the source digest of
the machine that trained it). The build then reads those runs instead of
training them.

It refuses, and copies nothing, when the source digest in ``DIR/summary.json``
differs from this checkout's: the modules a trained model depends on
(:data:`vitbias.runs.KEY_MODULES`) changed, and the runs would be filed under
code that did not train them. A run brought back without its ``model.pt``
(``--no-weights``) is left out, since a build cannot load it; a run the cache
already holds is left as it is. Different library versions are reported, not
refused: the key already ignores the device, which changes the numbers more.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "code") not in sys.path:
    sys.path.insert(0, str(ROOT / "code"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from vitbias import runs  # noqa: E402

SUMMARY = "summary.json"
RUNS = "runs"


class Refused(Exception):
    """The brought-back runs cannot be filed under this checkout's keys."""


def local_versions() -> dict:
    import timm

    return {"torch": torch.__version__, "timm": timm.__version__, "numpy": np.__version__}


def read_summary(brought: Path) -> dict:
    """``brought/summary.json``, checked against this checkout's source digest (:class:`Refused` otherwise)."""
    path = brought / SUMMARY
    if not path.is_file():
        raise Refused(f"{path} is missing: give the folder that python -m tools.gpu_run --out wrote")
    summary = json.loads(path.read_text())
    here = runs.source_digest()
    if summary.get("source_digest") != here:
        raise Refused(
            f"the runs in {brought} were trained with other sources of {', '.join(runs.KEY_MODULES)} "
            f"(source digest {summary.get('source_digest')}, commit {summary.get('commit')}) than this "
            f"checkout's (source digest {here}). Train them again from this checkout, or import them into "
            f"a checkout of the commit that trained them.")
    return summary


def import_runs(brought: Path | str, folder: Path | str | None = None) -> dict[str, list]:
    """Copy the runs of ``brought/runs`` into the run cache ``folder``; returns what happened to each:
    ``{"imported": [(brought key, local key)], "present": [...], "without weights": [brought key]}``."""
    brought = Path(brought)
    folder = Path(folder) if folder is not None else runs.runs_folder()
    summary = read_summary(brought)
    trained_on = {"device": summary.get("device"), "versions": summary.get("versions"),
                  "source_digest": summary["source_digest"], "commit": summary.get("commit")}
    outcome = {"imported": [], "present": [], "without weights": []}
    for entry in sorted(path for path in (brought / RUNS).glob("*") if path.is_dir()):
        files = {name: entry / name for name in ("config.json", "metrics.json", "model.pt")}
        if not files["config.json"].is_file() or not files["metrics.json"].is_file():
            continue  # a staging folder left by a killed run
        if not files["model.pt"].is_file():
            outcome["without weights"].append(entry.name)
            continue
        config = json.loads(files["config.json"].read_text())
        key = runs.run_key(config)
        target = folder / key
        if (target / "metrics.json").is_file() and (target / "model.pt").is_file():
            outcome["present"].append((entry.name, key))
            continue
        metrics = json.loads(files["metrics.json"].read_text())
        metrics["trained_on"] = {**trained_on, "key": entry.name}
        _store(target, config, metrics, files["model.pt"])
        outcome["imported"].append((entry.name, key))
    return outcome


def _store(target: Path, config: dict, metrics: dict, model: Path) -> None:
    """Write one run into a staging folder beside ``target``, then rename it into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=target.parent))
    try:
        (staging / "config.json").write_text(json.dumps(config, indent=1, sort_keys=True))
        (staging / "metrics.json").write_text(json.dumps(metrics, indent=1, sort_keys=True))
        shutil.copyfile(model, staging / "model.pt")
        if target.exists():  # an incomplete entry: the imported run replaces it
            shutil.rmtree(target)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gpu_import", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("brought", type=Path, help="the folder python -m tools.gpu_run --out wrote")
    parser.add_argument("--runs", type=Path, default=None, help="the run cache (default: $VITBIAS_RUNS or .runs/)")
    args = parser.parse_args(argv)
    folder = args.runs if args.runs is not None else runs.runs_folder()
    try:
        summary = read_summary(args.brought)
        outcome = import_runs(args.brought, folder)
    except Refused as error:
        print(f"refused: {error}", file=sys.stderr)
        return 2
    device = summary.get("device") or {}
    print(f"runs trained on {device.get('kind')} ({device.get('name')}), profile {summary.get('profile')}:")
    print(f"  imported into {folder}: {len(outcome['imported'])}")
    print(f"  already in the run cache: {len(outcome['present'])}")
    if outcome["without weights"]:
        print(f"  left out, brought back without model.pt: {len(outcome['without weights'])}")
    theirs, ours = summary.get("versions") or {}, local_versions()
    differ = {name: (theirs.get(name), ours[name]) for name in ours if theirs.get(name) != ours[name]}
    if differ:
        print("  trained with other library versions: "
              + ", ".join(f"{name} {a} there, {b} here" for name, (a, b) in differ.items()))
    print(f"Build the pages with VITBIAS_PROFILE={summary.get('profile')} and VITBIAS_RUNS={folder}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
