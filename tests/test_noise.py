"""vitbias.noise: one run's standard deviation, measured from run caches, and the module it is written to."""

import copy
import json
import os
import warnings

import numpy as np
import pytest

from vitbias import chapters, noise, plan, profile, runs
from vitbias.chapters.crossover import recipe_seeds


def test_a_glued_numbers_sd_below_one_step_is_rounded_up_to_one_significant_figure_instead():
    assert noise.rounded_up_to_scale(0.000179) == 0.0002
    assert noise.rounded_up_to_scale(0.000993) == 0.001
    assert noise.rounded_up_to_scale(0.0035) == 0.004
    assert noise.rounded_up_to_scale(0.004) == 0.004
    assert noise.rounded_up_to_scale(0.0712) == noise.rounded_up(0.0712) == 0.075
    assert noise.rounded_up_to_scale(0.0) == noise.rounded_up_to_scale(3e-11) == noise.FINEST == 1e-4
    for bad in (-0.01, float("nan")):
        with pytest.raises(ValueError, match="finite and non-negative"):
            noise.rounded_up_to_scale(bad)


def test_a_standard_deviation_is_rounded_up_to_the_step_and_never_below_one_step():
    assert noise.rounded_up(0.0712) == 0.075
    assert noise.rounded_up(0.075) == 0.075
    assert noise.rounded_up(0.0) == noise.STEP
    assert noise.rounded_up(1e-9) == noise.STEP
    for bad in (-0.01, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite and non-negative"):
            noise.rounded_up(bad)


def test_the_largest_sd_over_groups_is_found_with_its_group():
    sd, where = noise.largest_sd({"a": [0.5, 0.5, 0.5], "b": [0.4, 0.5, 0.6], "c": [0.45, 0.55]})
    assert where == "b" and sd == pytest.approx(0.1)
    with pytest.raises(ValueError, match="no groups"):
        noise.largest_sd({})
    with pytest.raises(ValueError, match="two or more"):
        noise.largest_sd({"a": [0.5]})


def _without_seed(config):
    """``config`` less its seeds (a distilled run's teacher's too)."""
    config = json.loads(json.dumps(config))
    config["data"].pop("seed")
    config["train"].pop("seed")
    if config["train"].get("teacher"):
        config["train"]["teacher"] = _without_seed(config["train"]["teacher"])
    return config


def test_every_crossover_group_holds_one_run_per_seed_that_differ_by_nothing_else():
    budget = profile.budget("quick")
    kinds = chapters.noise_groups("crossover", budget)
    sized = {noise.accuracy_kind(m, n) for m in ("cnn", "vit") for n in budget.train_sizes}
    others = {"cnn, recipe default", "vit, recipe default", "cnn, recipe switched", "vit, recipe switched",
              "train", "train, recipe default", "train, recipe switched"}
    changes = {"cnn, recipe change", "vit, recipe change"}
    assert set(kinds) == sized | others | changes  # the one half-step run has no spread to measure
    every = {name: configs for kind in set(kinds) - changes for name, configs in kinds[kind].items()}
    assert recipe_seeds(budget, "cnn") == recipe_seeds(budget, "vit") == budget.seeds
    for name, configs in every.items():
        in_recipe = name[1] in ("recipe default", "recipe switched")
        wanted = set(recipe_seeds(budget, name[0]) if in_recipe else budget.seeds)
        assert len(configs) == len(wanted) and {c["data"]["seed"] for c in configs} == wanted
        assert all(_without_seed(c) == _without_seed(configs[0]) for c in configs)
    trained = {name for kind in kinds if kind.startswith("train") for name in kinds[kind]}
    tested = {name for kind in set(kinds) - changes if not kind.startswith("train") for name in kinds[kind]}
    assert trained == tested == set(every)  # every group once as a test and once as a training accuracy


def _differences(before, after):
    """Where two run configs differ: the dotted paths of the leaves that differ."""
    if isinstance(before, dict) and isinstance(after, dict):
        return sorted({f"{k}.{d}" if d else k for k in before.keys() | after.keys()
                       for d in _differences(before.get(k), after.get(k))})
    return [""] if before != after else []


def test_a_crossover_change_pairs_each_seeds_two_runs_that_differ_only_by_what_changed():
    budget = profile.budget("quick")
    kinds = chapters.noise_groups("crossover", budget)
    planned = chapters.chapter_runs("crossover", budget)
    for m in ("cnn", "vit"):
        (name, pairs), = kinds[noise.accuracy_kind(m, "recipe change")].items()
        assert name == (m, "recipe change") and len(pairs) == len(recipe_seeds(budget, m))
        for s, (before, after) in zip(recipe_seeds(budget, m), pairs):
            assert before == planned[m, "recipe default", s] and after == planned[m, s]
            # with crop and flip a run also trains plan.AUGMENTED_PASSES times the steps, to fit its set
            assert _differences(before, after) == ["train.augment", "train.steps", "train.warmup"]
            assert after["train"]["steps"] == plan.AUGMENTED_PASSES * before["train"]["steps"]
            if s in budget.seeds:  # the default recipe's runs of the budget's seeds are the plain curve's
                assert before == planned[m, budget.recipe_size, s, "plain"]


def test_a_seed_of_a_group_is_one_run_or_a_pair_and_nothing_else():
    run = {"model": {"kind": "cnn"}}
    assert noise.run_configs([run, (run, run)]) == [run, run, run]
    for bad in ((run,) * 3, (run, "x"), "x", 3):
        with pytest.raises(ValueError, match="pair"):
            noise.seed_runs(bad)


def test_a_crossover_size_kind_holds_that_models_runs_at_that_size_in_every_world_trained_there():
    budget = profile.budget("quick")
    kinds = chapters.noise_groups("crossover", budget)
    for m in ("cnn", "vit"):
        for n in budget.train_sizes:
            groups = kinds[noise.accuracy_kind(m, n)]
            assert ("plain" in {world for _, _, world in groups}) and all(name[:2] == (m, n) for name in groups)
            assert all(c["model"]["kind"] == m and c["data"]["train"] == n for g in groups.values() for c in g)
    assert len(kinds[noise.accuracy_kind("cnn", budget.train_sizes[0])]) == len(plan.ladder(budget))


def test_a_kind_is_named_by_model_and_size_and_bad_names_are_refused():
    assert noise.accuracy_kind("vit", 2000) == "vit, 2,000 images"
    assert noise.accuracy_kind("cnn", "recipe switched") == "cnn, recipe switched"
    assert noise.accuracy_kind("vit", "recipe change") == "vit, recipe change"
    for model, where in (("mlp", 50), ("vit", 0), ("vit", "halfway"), ("cnn", True), ("cnn", 12.5)):
        with pytest.raises(ValueError):
            noise.accuracy_kind(model, where)


def test_a_kind_named_train_reads_training_accuracy_and_any_other_test_accuracy():
    assert noise.metric_of("train") == noise.metric_of("train, half steps") == "train_accuracy"
    assert noise.metric_of("vit, 50 images") == noise.metric_of("trained shift") == "test_accuracy"


def _fake_cache(folder, budget, planted):
    """A run cache holding metrics for every crossover group: 0.5 everywhere, ``planted`` values in one group.
    The changes pair runs of the other groups, so they are written with those."""
    every = {name: configs for kind, groups in chapters.noise_groups("crossover", budget).items()
             if not kind.endswith(noise.CHANGES) for name, configs in groups.items()}
    for name, configs in every.items():
        for i, config in enumerate(configs):
            entry = folder / runs.run_key(config)
            entry.mkdir(parents=True, exist_ok=True)
            value = planted[1][i] if name == planted[0] else 0.5
            (entry / "metrics.json").write_text(json.dumps({"test_accuracy": value, "train_accuracy": 1.0}))


def test_the_measurement_pools_both_kernel_sets_and_names_the_widest_group(tmp_path):
    budget = profile.budget("quick")
    group = ("vit", budget.train_sizes[-1], "plain")
    _fake_cache(tmp_path / "own", budget, (group, [0.70, 0.80, 0.90]))
    _fake_cache(tmp_path / "other", budget, (group, [0.70, 0.80, 0.90]))
    measured = noise.measure(chapters.noise_groups("crossover", budget), [tmp_path / "own", tmp_path / "other"])
    expected = np.std([0.7, 0.8, 0.9] * 2, ddof=1)
    largest = noise.accuracy_kind("vit", budget.train_sizes[-1])
    assert measured[largest]["measured"] == pytest.approx(expected, abs=1e-6)
    assert measured[largest]["sd"] == noise.rounded_up(expected)
    assert measured[largest]["largest_in"] == " / ".join(map(str, group))
    others = set(measured) - {largest}
    assert others and all(measured[kind]["sd"] == noise.STEP for kind in others)  # only that size is wide
    trained = chapters.noise_groups("crossover", budget)["train"]
    assert measured["train"]["runs"] == 2 * sum(len(g) for g in trained.values())


def test_a_change_is_measured_as_the_sd_of_its_seeds_differences_not_of_their_runs(tmp_path):
    groups = chapters.noise_groups("crossover", profile.budget("quick"))
    change = noise.accuracy_kind("cnn", "recipe change")
    (pairs,) = groups[change].values()
    before = np.linspace(0.4, 0.7, len(pairs))  # each run's sd near 0.1; the changes' near 0.01
    after = before + 0.05 + 0.01 * np.resize([1, -1, 0], len(pairs))
    for folder in ("own", "other"):
        for (first, second), b, a in zip(pairs, before, after):
            for config, value in ((first, b), (second, a)):
                entry = tmp_path / folder / runs.run_key(config)
                entry.mkdir(parents=True, exist_ok=True)
                (entry / "metrics.json").write_text(json.dumps({"test_accuracy": value, "train_accuracy": 1.0}))
    measured = noise.measure(groups, [tmp_path / "own", tmp_path / "other"], kinds=[change])[change]
    changes = np.subtract(after, before)
    assert measured["measured"] == pytest.approx(np.std(np.tile(changes, 2), ddof=1), abs=1e-6)
    assert measured["runs"] == 2 * len(pairs) and measured["kernel_sets"] == 2
    assert measured["largest_in"] == "cnn / recipe change"
    assert measured["sd"] == noise.rounded_up(measured["measured"]) < np.std(before, ddof=1)
    (tmp_path / "own" / runs.run_key(pairs[0][1]) / "metrics.json").unlink()
    (tmp_path / "own" / runs.run_key(pairs[0][1])).rmdir()
    with pytest.raises(ValueError, match="lacks a seed"):  # half a pair is no seed
        noise.measure(groups, [tmp_path / "own", tmp_path / "other"], kinds=[change])


def test_a_seed_missing_from_the_builds_own_cache_is_refused(tmp_path):
    with pytest.raises(ValueError, match="lacks a seed"):
        noise.measure(chapters.noise_groups("crossover", profile.budget("quick")), [tmp_path])


def test_the_generated_module_holds_exactly_what_was_measured():
    table = {"quick": {"crossover": {"kinds": {"vit": {"sd": 0.03, "measured": 0.0281, "largest_in": "x",
                                                       "runs": 6}}, "kernel_sets": 2}}}
    namespace = {}
    exec(noise.module_source(table), namespace)
    assert namespace["MEASURED"] == table


def test_a_chapter_reads_the_committed_measurement_and_an_unmeasured_kind_is_refused():
    table = noise.measured_table()
    kinds = table["quick"]["crossover"]["kinds"]
    for kind, entry in kinds.items():
        assert noise.one_run_sd("crossover", kind, "quick") == entry["sd"] >= noise.STEP
    with pytest.raises(ValueError, match="no measured noise of kind"):
        noise.one_run_sd("crossover", "mlp", "quick")
    with pytest.raises(ValueError, match="no measured noise for"):
        noise.one_run_sd("no such chapter", "vit", "quick")


def test_a_profile_without_its_own_measurement_takes_the_quick_ones_and_says_so():
    if "full" in noise.measured_table():
        pytest.fail("the full profile has a measurement now: test its own values instead")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sd = noise.one_run_sd("crossover", "train", "full")
    assert sd == noise.one_run_sd("crossover", "train", "quick")
    assert any("using the quick profile's" in str(w.message) for w in caught)


@pytest.fixture
def one_planted_cache(tmp_path, monkeypatch):
    """The build's run cache with one CNN group planted at 0.60, 0.65, 0.70 (sd 0.05): where a measurement
    may be written."""
    budget = profile.budget("quick")
    group = ("cnn", budget.train_sizes[0], "plain")
    _fake_cache(tmp_path / "own", budget, (group, [0.60, 0.65, 0.70]))
    monkeypatch.setenv(runs.RUNS_VARIABLE, str(tmp_path / "own"))
    return budget, tmp_path / "noise_measured.py"


def test_the_noise_command_writes_this_profiles_measurement_beside_the_others(tmp_path, one_planted_cache):
    from tools import booktools

    _, module = one_planted_cache
    record = booktools.write_noise("quick", [], module=module, chapters=["crossover"])["crossover"]
    namespace = {}
    exec(module.read_text(), namespace)
    assert namespace["MEASURED"]["quick"]["crossover"] == record
    assert namespace["MEASURED"]["quick"]["symmetry"] == noise.measured_table()["quick"]["symmetry"]  # kept
    smallest = noise.accuracy_kind("cnn", profile.budget("quick").train_sizes[0])
    assert record["kernel_sets"] == 1 and record["kinds"][smallest]["sd"] == noise.rounded_up(0.05)
    assert set(namespace["MEASURED"]) >= set(noise.measured_table())  # the other profiles' are kept
    with pytest.raises(ValueError, match="no run cache"):
        booktools.write_noise("quick", [tmp_path / "absent"], module=module, chapters=["crossover"])


def test_one_kind_is_measured_again_and_the_chapters_other_kinds_are_kept_as_they_were(tmp_path, one_planted_cache):
    from tools import booktools

    budget, module = one_planted_cache
    before = noise.measured_table()["quick"]["crossover"]
    smallest = noise.accuracy_kind("cnn", budget.train_sizes[0])
    record = booktools.write_noise("quick", [], module=module, chapters=["crossover"], kinds=[smallest])["crossover"]
    assert record["kinds"][smallest]["sd"] == noise.rounded_up(0.05) and record["kinds"][smallest]["kernel_sets"] == 1
    for kind in set(before["kinds"]) - {smallest}:
        assert record["kinds"][kind] == {"kernel_sets": before["kernel_sets"], **before["kinds"][kind]}
    assert record["kernel_sets"] == 1  # the fewest over its kinds
    with pytest.raises(ValueError, match="no kinds"):
        noise.measure(chapters.noise_groups("crossover", budget), [tmp_path / "own"], kinds=["mlp"])


def test_the_other_kernel_set_is_the_generic_one_or_the_native_one_when_the_build_ran_the_generic():
    from tools import booktools

    assert booktools.other_kernels_env({"PATH": "x"}) == {"PATH": "x", "ATEN_CPU_CAPABILITY": "default"}
    assert booktools.other_kernels_env({"ATEN_CPU_CAPABILITY": "default"}) == {}
    assert booktools.other_kernels_env({"ATEN_CPU_CAPABILITY": "avx2"}) == {"ATEN_CPU_CAPABILITY": "default"}


def test_each_symmetry_model_is_one_kind_whose_group_holds_its_seeds_and_train_holds_every_group():
    budget = profile.budget("quick")
    kinds = chapters.noise_groups("symmetry", budget)
    assert set(kinds) == set(plan.SYMMETRY_MODELS) | {"train"}
    for model in plan.SYMMETRY_MODELS:
        [configs] = kinds[model].values()
        assert sorted(c["data"]["seed"] for c in configs) == sorted(budget.seeds)
        assert all(_without_seed(c) == _without_seed(configs[0]) for c in configs)
    every = {group: configs for model in plan.SYMMETRY_MODELS for group, configs in kinds[model].items()}
    assert kinds["train"] == every
    assert noise.metric_of("train") == "train_accuracy"


def test_a_chapter_without_a_noise_measurement_is_refused():
    with pytest.raises(ValueError, match="no noise measurement"):
        chapters.noise_groups("exercises", profile.budget("quick"))


def test_every_measured_chapter_has_runs_to_train_on_the_other_kernel_set_and_no_other_is_accepted(tmp_path):
    from tools import booktools

    assert set(booktools.OTHER_KERNEL_RUNS) == set(chapters.NOISY)
    with pytest.raises(ValueError, match="no other-kernel runs"):
        booktools.train_on_other_kernels(tmp_path, ["exercises"])


def _one_run_per_seed_differing_by_nothing_else(configs, budget):
    assert sorted(c["data"]["seed"] for c in configs) == sorted(budget.seeds)
    assert all(_without_seed(c) == _without_seed(configs[0]) for c in configs)


def test_the_priors_routes_are_one_kind_and_each_model_of_the_locality_grid_another():
    budget = profile.budget("quick")
    kinds = chapters.noise_groups("priors", budget)
    n = budget.route_sizes[-1]
    assert set(kinds) == {"routes", "finer grid", "hard locality", "train"}
    assert set(kinds["routes"]) == {(name, n, 0.0) for name in plan.prior_routes(budget)}
    assert {name for name, *_ in kinds["finer grid"]} == {"ViT, finer grid"}
    assert {name for name, *_ in kinds["hard locality"]} == {plan.LOCAL_ROUTE_NAME}
    assert set(kinds["train"]) == set(kinds["routes"]) | {("ViT", n, 0.0), ("CNN", n, 0.0), ("CNN", n, 1.0)}
    for groups in kinds.values():
        for configs in groups.values():
            _one_run_per_seed_differing_by_nothing_else(configs, budget)


def test_each_robustness_model_is_a_kind_over_its_conditions_and_recipes():
    budget = profile.budget("quick")
    kinds = chapters.noise_groups("robustness", budget)
    assert set(kinds) == {"CNN", "ViT", "train"}
    assert set(kinds["ViT"]) == {("ViT", condition) for condition in (*plan.TEXTURES, "erasing")}
    assert len(kinds["train"]) == 2 * (len(plan.TEXTURES) + 1)
    for groups in kinds.values():
        for configs in groups.values():
            _one_run_per_seed_differing_by_nothing_else(configs, budget)


# Kinds of glued numbers: measured from a chapter executed once per run cache.


def test_one_run_sd_names_its_chapter_and_kind_and_arithmetic_on_it_names_none():
    sd = noise.one_run_sd("crossover", "train", "quick")
    assert isinstance(sd, noise.KindSD) and (sd.chapter, sd.kind) == ("crossover", "train")
    assert sd == noise.measured_table()["quick"]["crossover"]["kinds"]["train"]["sd"]
    for derived in (np.hypot(sd, sd), np.sqrt(2) * sd, sd * 2, sd + 0.0):
        assert not isinstance(derived, noise.KindSD)


def test_while_recording_glue_trained_files_its_seeds_under_its_kind_and_a_derived_sd_is_not_filed(
        tmp_path, monkeypatch):
    from vitbias import book

    record = tmp_path / "record.jsonl"
    monkeypatch.setenv(noise.RECORD_VARIABLE, str(record))
    sd = noise.KindSD(0.01, "robustness", "shape bias, ViT")
    # seeds far wider than the sd: recorded, not refused, since the spread is what is measured
    book.glue_trained("x_bias", [0.2, 0.5, 0.8], sd, what="shape bias")
    book.glue_trained("x_gap", [0.1, 0.2, 0.3], np.hypot(sd, sd), what="a difference")
    assert noise.read_recorded(record) == [
        {"chapter": "robustness", "kind": "shape bias, ViT", "name": "x_bias", "values": [0.2, 0.5, 0.8]}]
    monkeypatch.delenv(noise.RECORD_VARIABLE)
    with pytest.raises(ValueError, match="measure the spread again"):
        book.glue_trained("x_bias", [0.2, 0.5, 0.8], sd, what="shape bias")


def test_while_recording_a_kind_not_yet_measured_gets_the_placeholder_and_otherwise_is_refused(
        tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="no measured noise of kind"):
        noise.one_run_sd("robustness", "no such kind", "quick")
    monkeypatch.setenv(noise.RECORD_VARIABLE, str(tmp_path / "record.jsonl"))
    sd = noise.one_run_sd("robustness", "no such kind", "quick")
    assert sd == noise.PLACEHOLDER_SD and sd.kind == "no such kind"
    assert noise.one_run_sd("no such chapter", "any", "quick") == noise.PLACEHOLDER_SD


def _line(kind, name, values, chapter="robustness"):
    return {"chapter": chapter, "kind": kind, "name": name, "values": values}


def test_a_glued_kind_takes_the_largest_sd_of_its_numbers_seeds_pooled_over_the_kernel_sets():
    own = [_line("bias", "a", [0.1, 0.2, 0.3]), _line("bias", "b", [0.5, 0.5, 0.5]),
           _line("kept", "c", [0.9, 0.8, 0.7]), _line("vit", "d", [0.0, 1.0]), _line("bias", "z", [9, 0], "other")]
    other = [_line("bias", "a", [0.15, 0.25, 0.45]), _line("bias", "b", [0.5, 0.6, 0.5]),
             _line("kept", "c", [0.9, 0.8, 0.7])]
    measured = noise.measure_glued("robustness", [own, other], skip={"vit"})
    assert set(measured) == {"bias", "kept"}  # a kind from the run cache, and another chapter's, are not
    expected = np.std([0.1, 0.2, 0.3, 0.15, 0.25, 0.45], ddof=1)
    assert measured["bias"] == {"sd": noise.rounded_up(expected), "measured": round(expected, 6),
                                "largest_in": "a", "runs": 12, "kernel_sets": 2, "from": noise.GLUED}
    assert measured["kept"]["measured"] == pytest.approx(np.std([0.9, 0.8, 0.7] * 2, ddof=1), abs=1e-6)


def test_a_glued_number_of_one_run_is_not_measured_and_a_kind_of_only_such_numbers_is_refused():
    own = [_line("bias", "a", [0.1, 0.3]), _line("bias", "single", [0.0]), _line("probe", "p", [0.4])]
    other = [_line("bias", "a", [0.2, 0.2]), _line("bias", "single", [1.0]), _line("probe", "p", [0.6])]
    with pytest.raises(ValueError, match="'probe'.*two or more seeds"):
        noise.measure_glued("robustness", [own, other])
    measured = noise.measure_glued("robustness", [own, other], skip={"probe"})
    assert measured["bias"]["largest_in"] == "a" and measured["bias"]["runs"] == 4
    with pytest.raises(ValueError, match="nothing was recorded"):
        noise.measure_glued("robustness", [[], other])


TINY_CHAPTER = '''---
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A chapter that glues one trained number

```{code-cell} ipython3
import os
from vitbias import noise
from vitbias.book import glue_trained

other = os.environ.get("ATEN_CPU_CAPABILITY") == "default"
values = [0.55, 0.65, 0.80] if other else [0.50, 0.60, 0.70]
glue_trained("tiny_value", values, noise.one_run_sd("tiny", "spread"), what="a planted number")
glue_trained("tiny_cache", [len(os.environ["VITBIAS_RUNS"])] * 2, noise.one_run_sd("tiny", "cache"),
             what="which cache the chapter read")
```
'''


def test_the_glued_noise_command_executes_the_chapter_once_per_cache_and_writes_its_kinds(tmp_path, monkeypatch):
    from tools import booktools

    book = tmp_path / "book"
    book.mkdir()
    (book / "tiny.md").write_text(TINY_CHAPTER)
    monkeypatch.setattr(booktools, "BOOK", book)
    monkeypatch.setenv(runs.RUNS_VARIABLE, str(tmp_path / "own"))
    monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
    (tmp_path / "the other kernels").mkdir()
    module = tmp_path / "noise_measured.py"
    record = booktools.write_glued_noise("quick", "tiny", [tmp_path / "the other kernels"], module=module)
    expected = np.std([0.50, 0.60, 0.70, 0.55, 0.65, 0.80], ddof=1)
    assert record["kinds"]["spread"]["measured"] == pytest.approx(expected, abs=1e-6)
    assert record["kinds"]["spread"]["kernel_sets"] == record["kernel_sets"] == 2
    lengths = sorted({len(str(tmp_path / "own")), len(str(tmp_path / "the other kernels"))})
    assert record["kinds"]["cache"]["measured"] == pytest.approx(np.std(lengths * 2, ddof=1), abs=1e-6)
    namespace = {}
    exec(module.read_text(), namespace)
    assert namespace["MEASURED"]["quick"]["tiny"] == record
    assert namespace["MEASURED"]["quick"]["crossover"] == noise.measured_table()["quick"]["crossover"]  # kept
    assert "ATEN_CPU_CAPABILITY" not in os.environ and noise.RECORD_VARIABLE not in os.environ
    with pytest.raises(ValueError, match="no run cache"):
        booktools.write_glued_noise("quick", "tiny", [tmp_path / "absent"], module=module)


def test_measuring_a_chapter_from_the_run_cache_again_keeps_its_kinds_of_glued_numbers(
        one_planted_cache, monkeypatch):
    from tools import booktools
    from vitbias import noise_measured

    _, module = one_planted_cache
    glued = {"sd": 0.1, "measured": 0.09, "largest_in": "x", "runs": 6, "kernel_sets": 2, "from": noise.GLUED}
    table = copy.deepcopy(noise.measured_table())
    table["quick"]["crossover"]["kinds"]["exponent"] = glued
    monkeypatch.setattr(noise_measured, "MEASURED", table)
    record = booktools.write_noise("quick", [], module=module, chapters=["crossover"])["crossover"]
    assert record["kinds"]["exponent"] == {"kernel_sets": table["quick"]["crossover"]["kernel_sets"], **glued}
    assert record["kinds"][noise.accuracy_kind("cnn", profile.budget("quick").train_sizes[0])]["sd"] == \
        noise.rounded_up(0.05)
