"""The build's training step: the runs of the chapters about to execute, in one pool, teachers first."""

import json

from tools import booktools
from vitbias import chapters, runs

CNN = {"data": {"name": "shapes", "train": 64, "test": 32, "seed": 0},
       "model": {"kind": "cnn", "channels": [4, 8], "depth": [1, 1]},
       "train": {"steps": 4, "batch_size": 16, "lr": 1e-3, "weight_decay": 0.05, "schedule": "cosine",
                 "augment": True, "seed": 0}}


def seeded(seed, **train):
    return {**CNN, "train": {**CNN["train"], "seed": seed, **train}}


TEACHER = seeded(5)
STUDENT = seeded(6, teacher=TEACHER)
CHAPTER_RUNS = {"first": {"a": seeded(0), "distilled": STUDENT},
                "second": {"shared": seeded(0), "own": seeded(1)},
                "cached": {"only here": seeded(2)}}


def pretend_training(calls, folder):
    """A stand-in for ``runs.run_many`` that records each pool's runs and stores them as trained."""
    def run_many(configs, into=None):
        calls.append([runs.run_key(c) for c in configs])
        for config in configs:
            entry = folder / runs.run_key(config)
            entry.mkdir(parents=True, exist_ok=True)
            (entry / "metrics.json").write_text(json.dumps({"seconds": 1.0}))
    return run_many


def test_the_runs_of_the_chapters_to_execute_train_in_one_pool_after_their_teachers_and_once(
        tmp_path, monkeypatch):
    monkeypatch.setenv(runs.RUNS_VARIABLE, str(tmp_path))
    monkeypatch.setattr(chapters, "PLANNED", tuple(CHAPTER_RUNS))
    monkeypatch.setattr(chapters, "chapter_runs", lambda chapter, budget: CHAPTER_RUNS[chapter])
    monkeypatch.setattr(booktools, "cached_chapters", lambda: {"cached"})
    calls = []
    monkeypatch.setattr(runs, "run_many", pretend_training(calls, tmp_path))

    trained, _ = booktools.train_runs()
    assert trained == 4  # seeds 0, 1, 5 (the teacher) and 6 (the student): the shared run counts once
    assert calls[0] == [runs.run_key(TEACHER)]
    assert sorted(set(calls[1])) == sorted(runs.run_key(c) for c in (seeded(0), STUDENT, seeded(1)))
    assert runs.run_key(seeded(2)) not in calls[1]  # its chapter comes from the execution cache

    calls.clear()
    assert booktools.train_runs()[0] == 0  # everything is in the run cache now
