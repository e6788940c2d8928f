"""The GPU command, dry-run on a CPU: ``python -m tools.gpu_run`` and ``python -m tools.gpu_import``.

The command a GPU machine runs is run here with the gpu budget shrunk to a
few images and one step (a test-only override, as in ``test_gpu_profile.py``),
so that it cannot rot while no GPU is at hand: it trains the chapters' runs
into ``DIR/runs``, writes ``DIR/summary.json``, stops before its time limit,
and what it wrote can be imported into a run cache that a build then reads.
"""

import contextlib
import io
import json
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import torch

from tools import gpu_import, gpu_run
from vitbias import chapters, plan, profile, runs


def tiny_gpu_budget():
    """The gpu budget with two sizes, one seed, a few images and one step of batch 8 (two for the
    ViT's fitting rule, so that its largest set has a half-step run)."""
    full = profile.BUDGETS["gpu"]
    return replace(full, train_sizes=(20, 40), seeds=(0,), test_size=20, min_steps=1, max_steps=1,
                   fitted={"vit": {"min_steps": 2, "max_steps": 2}},
                   recipe_size=20, probe_labels=20, route_sizes=(20, 40), train={**full.train, "batch_size": 8},
                   pretrain={**full.pretrain, "data": {**full.pretrain["data"], "train": 20, "test": 20},
                             "steps": 1})


@dataclass
class Called:
    code: int
    printed: str
    out: Path

    @property
    def summary(self) -> dict:
        return json.loads((self.out / "summary.json").read_text())


def call(out: Path, *options, clock=None) -> Called:
    """``python -m tools.gpu_run --out OUT OPTIONS`` in this process, its output captured; what it trains
    in this process it trains on one thread, as a worker process does (a few tiny runs gain nothing from more)."""
    printed = io.StringIO()
    extra = {} if clock is None else {"clock": clock}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with contextlib.redirect_stdout(printed):
            code = gpu_run.main(["--out", str(out), *options], **extra)
    finally:
        torch.set_num_threads(threads)
    return Called(code, printed.getvalue(), out)


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setitem(profile.BUDGETS, "gpu", tiny_gpu_budget())
    monkeypatch.delenv(profile.PROFILE_VARIABLE, raising=False)
    return profile.BUDGETS["gpu"]


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    """One dry run of the locality and crossover chapters, shared by the tests that read what it wrote; one run
    at a time in this process, as on a GPU (the worker processes of a CPU are tested apart)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(profile.BUDGETS, "gpu", tiny_gpu_budget())
        patch.delenv(profile.PROFILE_VARIABLE, raising=False)
        return call(tmp_path_factory.mktemp("gpu") / "out", "--chapters", "locality,crossover", "--workers", "1")


def copy_of(called: Called, tmp_path: Path) -> Path:
    return Path(shutil.copytree(called.out, tmp_path / "copy"))


def finished(summary: dict) -> list[dict]:
    return [r for r in summary["runs"] if r["status"] in ("trained", "cached")]


# ---------------------------------------------------------------------------
# Which runs, in which order
# ---------------------------------------------------------------------------

def test_the_profile_is_gpu_unless_VITBIAS_PROFILE_names_another(monkeypatch):
    monkeypatch.delenv(profile.PROFILE_VARIABLE, raising=False)
    assert gpu_run.profile_name() == "gpu"
    monkeypatch.setenv(profile.PROFILE_VARIABLE, "quick")
    assert gpu_run.profile_name() == "quick"
    monkeypatch.setenv(profile.PROFILE_VARIABLE, "huge")
    with pytest.raises(ValueError, match="VITBIAS_PROFILE"):
        gpu_run.profile_name()


def test_the_crossover_chapter_comes_first_and_an_unknown_chapter_is_refused():
    assert gpu_run.chapter_order(["lab", "crossover", "lab", "priors"]) == ("crossover", "lab", "priors")
    with pytest.raises(ValueError, match="chapters must be among"):
        gpu_run.chapter_order(["bias-toy"])
    with pytest.raises(SystemExit):
        gpu_run.main(["--out", "unused", "--chapters", "bias-toy"])


def test_each_run_is_gathered_once_the_crossovers_first_and_a_teacher_before_its_student(tiny):
    planned = gpu_run.gather(tiny, ["priors", "crossover"])
    keys = [entry.key for entry in planned]
    assert len(keys) == len(set(keys))
    wanted = {runs.run_key(c) for chapter in ("priors", "crossover")
              for c in chapters.chapter_runs(chapter, tiny).values()}
    assert set(keys) == wanted
    crossover = {runs.run_key(c) for c in chapters.chapter_runs("crossover", tiny).values()}
    assert set(keys[:len(crossover)]) == crossover
    shared = [entry for entry in planned if entry.chapters == ["crossover", "priors"]]
    assert shared, "the priors chapter shares the crossover chapter's plain runs"
    students = [entry for entry in planned if "teacher" in entry.config["train"]]
    assert students
    for student in students:
        assert student.teacher == runs.run_key(student.config["train"]["teacher"])
        assert keys.index(student.teacher) < keys.index(student.key)


def test_an_estimate_bounds_a_run_of_fixed_plus_proportional_cost_from_above():
    def config(kind, steps, n):
        return {"data": {"train": n, "test": 100}, "model": {"kind": kind}, "train": {"steps": steps, "batch_size": 10}}

    def cost(c):  # (loop, rest): a fixed cost plus one proportional to the work and to the images
        return 2.0 + 0.01 * gpu_run.work(c), 1.0 + 0.001 * gpu_run.images(c)

    timing = gpu_run.Timing()
    assert timing.seconds(config("cnn", 10, 50)) is None
    for c in (config("cnn", 10, 50), config("cnn", 100, 400)):
        loop, rest = cost(c)
        timing.add(c, loop + rest, loop)
    for c in (config("cnn", 10, 50), config("cnn", 300, 1000), config("cnn", 2000, 50), config("cnn", 50, 200)):
        assert sum(cost(c)) <= timing.seconds(c) <= gpu_run.MARGIN * 2 * sum(cost(c))
    # a model not seen yet is given UNSEEN times the slowest rate seen
    assert timing.seconds(config("vit", 100, 400)) > gpu_run.UNSEEN * timing.seconds(config("cnn", 100, 400)) / 2


# ---------------------------------------------------------------------------
# The dry run
# ---------------------------------------------------------------------------

def test_the_dry_run_trains_every_planned_run_into_DIR_runs_and_says_where_it_ran(dry_run):
    assert dry_run.code == 0
    assert "device: no CUDA device, running on the CPU" in dry_run.printed
    summary = dry_run.summary
    assert summary["profile"] == "gpu" and summary["chapters"] == ["crossover", "locality"]
    assert summary["workers"] == 1
    assert [r["status"] for r in summary["runs"]] == ["trained"] * len(summary["runs"])
    for record in summary["runs"]:
        entry = dry_run.out / "runs" / record["key"]
        assert {p.name for p in entry.iterdir()} == {"config.json", "metrics.json", "model.pt"}
        assert json.loads((entry / "config.json").read_text()) == record["config"]
        assert runs.run_key(record["config"]) == record["key"]
    crossover = [r for r in summary["runs"] if "crossover" in r["chapters"]]
    assert summary["runs"][:len(crossover)] == crossover


def test_the_summary_names_the_device_versions_and_sources_and_each_runs_time_and_accuracy(dry_run):
    import timm

    summary = dry_run.summary
    assert summary["device"]["kind"] == "cpu" and summary["device"]["name"]
    assert summary["versions"]["torch"] == torch.__version__ and summary["versions"]["timm"] == timm.__version__
    assert summary["source_digest"] == runs.source_digest()
    assert summary["weights"] is True and summary["limit_minutes"] is None
    for record in summary["runs"]:
        metrics = json.loads((dry_run.out / "runs" / record["key"] / "metrics.json").read_text())
        assert record["accuracy"] == metrics["test_accuracy"] and record["seconds"] == metrics["seconds"]
        assert record["chapters"] and record["labels"] and record["trained_on"] == "cpu"
        assert 0 < record["seconds"] <= record["wall_seconds"]
        assert 0 <= record["started_at"] < record["ended_at"]
        assert record["weights_bytes"] == (dry_run.out / "runs" / record["key"] / "model.pt").stat().st_size


def test_the_totals_count_the_runs_their_speed_and_the_crossover_chapters_training_seconds(dry_run, tiny):
    summary, totals = dry_run.summary, dry_run.summary["totals"]
    count = len(summary["runs"])
    assert (totals["planned"], totals["finished"], totals["trained"], totals["skipped"]) == (count, count, count, 0)
    assert totals["runs_per_second"] == pytest.approx(count / totals["wall_seconds"])
    pushed = sum(gpu_run.work(r["config"]) for r in summary["runs"])
    assert totals["images_per_second"] == pytest.approx(pushed / totals["training_seconds"])
    outside = sum(r["wall_seconds"] - r["seconds"] for r in summary["runs"])
    assert totals["outside_training_seconds"] == pytest.approx(outside)
    assert totals["training_seconds"] + outside <= totals["wall_seconds"]
    assert totals["gpu_utilisation"] is None and totals["gpu_peak_memory_bytes"] is None
    planned = chapters.chapter_runs("crossover", tiny).values()
    seconds, distinct, missing = plan.training_seconds(planned, dry_run.out / "runs")
    assert totals["crossover"]["runs"] == distinct and missing == 0 and totals["crossover"]["complete"]
    assert totals["crossover"]["training_seconds"] == pytest.approx(seconds)
    assert totals["folder_bytes"] == pytest.approx(gpu_run.folder_bytes(dry_run.out), rel=0.01)
    assert f"crossover chapter: {distinct}/{distinct} runs" in dry_run.printed


def test_a_second_call_reads_the_finished_runs_instead_of_training_them(dry_run, tiny, tmp_path):
    again = call(copy_of(dry_run, tmp_path), "--chapters", "crossover,locality", "--minutes", "0")
    totals = again.summary["totals"]
    assert again.code == 0 and totals["cached"] == totals["planned"] and totals["trained"] == totals["skipped"] == 0


def test_asked_for_cuda_on_a_cpu_the_command_stops_before_training(tiny, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    called = call(tmp_path / "out", "--require-cuda")
    assert called.code == 2 and "running on the CPU" in called.printed
    assert not (tmp_path / "out").exists()


def test_a_limit_of_zero_minutes_trains_nothing_and_says_so(tiny, tmp_path):
    called = call(tmp_path / "out", "--chapters", "crossover", "--minutes", "0", "--workers", "1")
    totals = called.summary["totals"]
    assert called.code == 0
    assert totals["trained"] == 0
    planned = {runs.run_key(c) for c in chapters.chapter_runs("crossover", tiny).values()}  # a run under two keys once
    assert totals["skipped_for_time"] == totals["planned"] == len(planned)
    assert list((tmp_path / "out" / "runs").iterdir()) == []
    assert f"stopped by the time limit of 0 min: {totals['planned']} runs not started" in called.printed


def test_under_a_limit_only_runs_expected_to_end_before_it_start(tiny, tmp_path, monkeypatch):
    now = [0.0]
    real = runs.run

    def ten_seconds_each(config, folder=None):  # every training takes ten seconds on the command's clock
        trained = real(config, folder)
        now[0] += 10.0
        return trained

    monkeypatch.setattr(runs, "run", ten_seconds_each)
    called = call(tmp_path / "out", "--chapters", "crossover", "--minutes", "0.5", "--workers", "1",
                  clock=lambda: now[0])
    summary = called.summary
    trained = [r for r in summary["runs"] if r["status"] == "trained"]
    assert called.code == 0 and summary["limit_minutes"] == 0.5
    assert 1 <= len(trained) <= 3 and all(r["ended_at"] <= 30.0 for r in trained)
    assert summary["totals"]["skipped_for_time"] == len(summary["runs"]) - len(trained)
    assert all(r["estimate_seconds"] is None for r in trained[:1])
    assert "stopped by the time limit of 0.5 min" in called.printed
    assert sorted(p.name for p in (tmp_path / "out" / "runs").iterdir()) == sorted(r["key"] for r in trained)


def test_on_a_cpu_the_missing_runs_train_side_by_side_in_worker_processes(dry_run, tiny, tmp_path):
    out = copy_of(dry_run, tmp_path)
    removed = [r["key"] for r in dry_run.summary["runs"][:2]]
    for key in removed:
        shutil.rmtree(out / "runs" / key)
    called = call(out, "--chapters", "crossover,locality")
    summary = called.summary
    assert called.code == 0 and summary["workers"] == runs.default_workers()
    assert [r["key"] for r in summary["runs"] if r["status"] == "trained"] == removed
    assert summary["totals"]["cached"] == len(summary["runs"]) - len(removed)
    assert all((out / "runs" / key / "model.pt").is_file() for key in removed)


def test_without_weights_the_folder_keeps_configs_and_metrics_only(dry_run, tiny, tmp_path):
    out = copy_of(dry_run, tmp_path)
    called = call(out, "--chapters", "crossover,locality", "--minutes", "0", "--no-weights")
    assert called.code == 0 and called.summary["weights"] is False
    assert not list(out.glob("runs/*/model.pt"))
    assert len(list(out.glob("runs/*/metrics.json"))) == len(called.summary["runs"])
    assert all(r["weights_bytes"] is None for r in called.summary["runs"])
    outcome = gpu_import.import_runs(out, tmp_path / "cache")
    assert outcome["imported"] == [] and len(outcome["without weights"]) == len(called.summary["runs"])


# ---------------------------------------------------------------------------
# From what came back to a run cache a build reads
# ---------------------------------------------------------------------------

def test_imported_runs_are_read_by_the_build_from_the_cache_under_its_own_keys(dry_run, tiny, tmp_path, monkeypatch):
    brought = copy_of(dry_run, tmp_path)
    # another machine's keys (a CUDA device, other versions): the runs arrive under names this one does not compute
    foreign = {}
    for record in dry_run.summary["runs"]:
        foreign[record["key"]] = "cuda" + record["key"][4:]
        (brought / "runs" / record["key"]).rename(brought / "runs" / foreign[record["key"]])
    cache = tmp_path / "cache"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert gpu_import.main([str(brought), "--runs", str(cache)]) == 0
    assert f"imported into {cache}: {len(foreign)}" in printed.getvalue()

    def no_training(*args, **kwargs):
        raise AssertionError("an imported run was trained again")

    monkeypatch.setattr(runs, "_train", no_training)
    for record in dry_run.summary["runs"]:
        loaded = runs.run(record["config"], cache)
        assert loaded.cached and loaded.key == record["key"] and loaded.accuracy == record["accuracy"]
        assert loaded.metrics["trained_on"]["key"] == foreign[record["key"]]
        assert loaded.metrics["trained_on"]["device"]["kind"] == "cpu"
    assert plan.training_seconds(chapters.chapter_runs("crossover", tiny).values(), cache)[2] == 0
    again = gpu_import.import_runs(brought, cache)
    assert again["imported"] == [] and len(again["present"]) == len(foreign)


def test_runs_trained_from_other_sources_are_refused_and_nothing_is_copied(dry_run, tmp_path, capsys):
    brought = copy_of(dry_run, tmp_path)
    summary = dry_run.summary
    summary["source_digest"] = "0" * 64
    (brought / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(gpu_import.Refused, match="other sources"):
        gpu_import.import_runs(brought, tmp_path / "cache")
    assert gpu_import.main([str(brought), "--runs", str(tmp_path / "cache")]) == 2
    assert runs.source_digest() in capsys.readouterr().err
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").iterdir())
