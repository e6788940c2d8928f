"""The crossover chapter's evidence (``vitbias.chapters.crossover``), on made-up runs."""

import types

import numpy as np
import pytest
from torch import nn

from vitbias import chapters, plan, profile, toy
from vitbias.chapters import crossover as crossover_chapter
from vitbias.chapters.crossover import add_probe, add_twins, measure
from vitbias.evidence import Evidence

BUDGET = profile.budget("quick")
SIZES = BUDGET.train_sizes
CNN = (0.60, 0.75, 0.85, 0.92, 0.96)  # the CNN's test accuracy at each size, on the plain images
VIT = (0.15, 0.25, 0.35, 0.50, 0.62)
RUNG_COST = 0.12  # what each rung of the ladder costs the CNN at every size
BUILT = {"cnn": nn.Linear(10, 10), "vit": nn.Linear(10, 100)}  # 110 and 1,100 parameters


def run(accuracy, train_accuracy=0.998, steps=100):
    return types.SimpleNamespace(accuracy=accuracy, train_accuracy=train_accuracy,
                                 config={"train": {"steps": steps}})


def made_up_runs(changes=None):
    """Every run of ``chapters.chapter_runs("crossover", BUDGET)`` but the pretraining, each seed a little
    off the levels above (by a fixed draw); ``changes``: key -> the run to put there instead."""
    rng = np.random.default_rng(0)
    ladder = plan.ladder(BUDGET)
    theorem_n, control_n = plan.world_check_sizes(BUDGET)
    done = {}
    for key in chapters.chapter_runs("crossover", BUDGET):
        if key[0] == "pretraining":
            continue
        if len(key) == 4:
            model, n, _, world = key
            level = (CNN if model == "cnn" else VIT)[SIZES.index(n)]
            if world in ladder and model == "cnn":
                level -= RUNG_COST * ladder.index(world)
            elif world in plan.CONTROL_WORLDS:
                level = 0.5 if model == "cnn" else 0.4
        elif key[1] == "half steps":
            level = VIT[-1] - 0.05
        elif key[1] == "recipe default":  # the plain curve's own run for the budget's seeds
            if key[2] in BUDGET.seeds:
                done[key] = done[key[0], BUDGET.recipe_size, key[2], "plain"]
                continue
            level = (CNN if key[0] == "cnn" else VIT)[SIZES.index(BUDGET.recipe_size)]
        else:  # the recipe switched, at the recipe's size: crop and flip help a little
            level = (CNN if key[0] == "cnn" else VIT)[SIZES.index(BUDGET.recipe_size)] + 0.03
        noise = rng.uniform(-0.004, 0.004, size=2)
        fit = 0.9 if len(key) == 2 else 0.998
        done[key] = run(level + noise[0], fit + noise[1] / 4)
    assert theorem_n in SIZES and control_n in SIZES
    return done | (changes or {})


@pytest.fixture(scope="module")
def found():
    return measure(BUDGET, made_up_runs(), BUILT)


def test_the_testbed_numbers_are_the_budgets_exactly(found):
    assert found["cross_size_span"] == SIZES[-1] / SIZES[0]
    assert found["cross_epochs_0"] == BUDGET.steps(SIZES[0], "cnn") * BUDGET.train["batch_size"] / SIZES[0]
    assert found["cross_n_rungs"] == len(plan.ladder(BUDGET)) - 1
    assert found["cross_chance"] == 0.1
    assert found["cross_recipe_default"] == ("with" if BUDGET.train["augment"] else "without")
    assert (found["cross_cnn_params"], found["cross_vit_params"]) == (110, 1_100)
    assert found.entries["cross_size_span.tol"] == {"rel": 1e-9, "abs": 0.0}


def test_a_trained_accuracy_is_the_mean_over_seeds_with_a_band():
    done = made_up_runs()
    found = measure(BUDGET, done, BUILT)
    seeds = [done["cnn", SIZES[0], s, "plain"].accuracy for s in BUDGET.seeds]
    assert found["cross_cnn_acc_0"] == pytest.approx(np.mean(seeds), abs=1e-15)
    assert found.entries["cross_cnn_acc_0.tol"]["abs"] > 0


def test_the_toys_crossing_is_the_formulas(found):
    t = toy.Toy()
    assert found["cross_toy_rows_1"] == pytest.approx(t.n + 1 + t.sigma**2 * t.n / 0.6**2, rel=1e-12)
    assert found["cross_toy_rows_0"] > found["cross_toy_rows_1"]


def test_every_claim_holds_on_runs_that_behave_as_the_prose_says(found):
    assert found.claims and all(found.claims.values()), {k: v for k, v in found.claims.items() if not v}
    assert found["cross_wins_text"] == "the CNN wins at every size"
    assert found["cross_world_cnn_steps"] == "every rung costs it accuracy"


def test_the_tinyvit_passes_the_cnn_only_in_the_worlds_where_it_ends_ahead(found):
    # at the largest size the ViT (0.62) is behind the CNN on the plain images (0.96) and on the first
    # rung (0.84), ahead from the third rung on (0.72, 0.60, 0.48 against ...)
    ahead = [w for r, w in enumerate(plan.ladder(BUDGET)) if VIT[-1] > CNN[-1] - RUNG_COST * r]
    assert found["cross_n_crossed"] == len(ahead)


def test_a_seed_that_does_not_learn_its_smallest_set_breaks_the_claim():
    key = ("cnn", SIZES[0], BUDGET.seeds[0], "plain")
    found = measure(BUDGET, made_up_runs({key: run(CNN[0], train_accuracy=0.94)}), BUILT)
    assert not found.claims["both models learn their smallest training set by heart, every seed at least 0.95"]
    assert found["cross_cnn_train_acc_min_0"] == 0.94


def test_a_last_rung_that_costs_the_cnn_nothing_breaks_the_claims_and_changes_the_verdict():
    top, (theorem_n, _) = plan.ladder(BUDGET)[-1], plan.world_check_sizes(BUDGET)
    # free everywhere but at the theorem's size, where the equivalence margin is set against the cost
    same = {("cnn", n, s, top): run(CNN[i] + 0.001 * (s - 1))
            for i, n in enumerate(SIZES) if n != theorem_n for s in BUDGET.seeds}
    found = measure(BUDGET, made_up_runs(same), BUILT)
    assert not found.claims["the CNN on the largest set falls from the plain images to the last rung"]
    assert not found.claims["on the last rung the CNN is below its plain self at every size"]
    assert found["cross_world_cnn_steps"] == "not every rung costs it accuracy that its seeds resolve"


def test_one_seeds_gain_from_doubling_the_steps_is_read_by_its_side_of_the_limit_and_not_as_a_test():
    found = measure(BUDGET, made_up_runs(), BUILT)  # the made-up gain is 0.05
    reading = found["cross_steps_reading"]
    assert "above the limit of 0.02" in reading and "still limited by our compute" in reading
    assert "one seed is not a test" in reading and found["cross_half_seeds_text"] == "the first seed's TinyViT"
    full = {("vit", "half steps", s): run(VIT[-1] - 0.001) for s in BUDGET.seeds[:1]}
    reading = measure(BUDGET, made_up_runs(full), BUILT)["cross_steps_reading"]
    assert "within the limit of 0.02" in reading and "one seed is not a test" in reading


def test_the_steps_reading_of_several_seeds_follows_their_paired_test(monkeypatch):
    monkeypatch.setattr(crossover_chapter, "HALF_STEP_SEEDS", len(BUDGET.seeds))
    reading = measure(BUDGET, made_up_runs(), BUILT)["cross_steps_reading"]  # the made-up gain is 0.05
    assert "above the limit of 0.02" in reading and "more than the" in reading
    full = {("vit", "half steps", s): run(VIT[-1] + 0.002 * (s - 1)) for s in BUDGET.seeds}
    reading = measure(BUDGET, made_up_runs(full), BUILT)["cross_steps_reading"]
    assert "below the limit of 0.02" in reading and "measures the data" in reading
    # each seed's gain is about minus its offset: means 0.0 and 0.032, seeds 0.012 apart, which resolve
    # only about 0.03
    for offsets, words in (((0.012, -0.012, 0.0), "within the limit of 0.02"),
                           ((-0.02, -0.044, -0.032), "cannot say whether the largest point is limited")):
        half = {("vit", "half steps", s): run(VIT[-1] + d) for s, d in zip(BUDGET.seeds, offsets)}
        reading = measure(BUDGET, made_up_runs(half), BUILT)["cross_steps_reading"]
        assert words in reading, reading


def test_a_cnn_larger_than_the_tinyvit_breaks_the_claim_and_a_missing_model_is_refused():
    found = measure(BUDGET, made_up_runs(), {"cnn": BUILT["vit"], "vit": BUILT["cnn"]})
    assert not found.claims["the CNN is the smaller of the two models"]
    with pytest.raises(ValueError, match="built must map"):
        measure(BUDGET, made_up_runs(), {"cnn": BUILT["cnn"]})


def test_a_missing_run_is_refused_by_name():
    done = made_up_runs()
    del done["vit", "half steps", BUDGET.seeds[0]]
    with pytest.raises(ValueError, match="missing 1: \\('vit', 'half steps', 0\\)"):
        measure(BUDGET, done, BUILT)


def test_a_margin_wider_than_half_the_cnns_cost_is_refused():
    # the theorem's margin must rule out half of what the last rung costs the CNN at that size
    theorem_n, _ = plan.world_check_sizes(BUDGET)
    top = plan.ladder(BUDGET)[-1]
    i = SIZES.index(theorem_n)
    cheap = {("cnn", theorem_n, s, top): run(CNN[i] - 0.05 + 0.002 * (s - 1)) for s in BUDGET.seeds}
    with pytest.raises(ValueError, match="wider than half the effect"):
        measure(BUDGET, made_up_runs(cheap), BUILT)


def test_the_twins_gap_is_their_largest_loss_difference_and_within_the_rounding_bound():
    losses = np.stack([np.linspace(2.3, 1.0, 50)] * 2)
    losses[1, 7] += 3e-12
    found = Evidence("crossover")
    add_twins(found, losses, 1e-12, 50)
    assert found["cross_pixel_max_loss_diff"] == np.abs(losses[0] - losses[1]).max()
    assert found["cross_pixel_steps"] == 50
    with pytest.raises(ValueError, match="rounding noise"):
        add_twins(Evidence("crossover"), losses, 1e-6, 50)


def test_twins_that_learn_nothing_or_have_another_step_count_are_refused():
    with pytest.raises(ValueError, match="did not learn"):
        add_twins(Evidence("crossover"), np.full((2, 50), 2.3), 0.0, 50)
    with pytest.raises(ValueError, match="two curves of 40 steps"):
        add_twins(Evidence("crossover"), np.ones((2, 50)), 0.0, 40)


def test_the_probe_is_compared_with_random_features_and_the_models_on_its_labels():
    done = made_up_runs()
    # the probe scores between the TinyViT trained on 800 images (0.50) and on 2,000 (0.62)
    probe_acc = {"pretrained": [0.55, 0.56, 0.57], "random weights": [0.20, 0.21, 0.19]}
    found = Evidence("crossover")
    add_probe(found, BUDGET, done, probe_acc)
    assert found["cross_probe_pretrained"] == pytest.approx(0.56)
    assert found["cross_probe_vs_random"] == "beat"
    assert found["cross_probe_vs_vit"] == "beat"  # the TinyViT scores 0.25 on the probe's labels
    assert found["cross_probe_vit_text"] == f"needs {SIZES[-1]:,} labelled images of its own to do better"
    weak = Evidence("crossover")
    add_probe(weak, BUDGET, done, {"pretrained": [0.20, 0.22, 0.21], "random weights": [0.20, 0.21, 0.19]})
    assert weak["cross_probe_vs_random"].startswith("cannot be told apart")


def test_probe_accuracies_of_other_features_or_seeds_are_refused():
    with pytest.raises(ValueError, match="one accuracy per seed"):
        add_probe(Evidence("crossover"), BUDGET, made_up_runs(), {"pretrained": [0.7, 0.7, 0.7]})


def cache_of(done, folder):
    """A run cache in ``folder`` holding each run's metrics as ``vitbias.runs`` stores them (no model)."""
    import json

    from vitbias import runs

    wanted = chapters.chapter_runs("crossover", BUDGET)
    for key, made_up in done.items():
        entry = folder / runs.run_key(wanted[key])
        entry.mkdir(parents=True, exist_ok=True)  # two keys of one run (the recipe's default) share it
        (entry / "metrics.json").write_text(json.dumps({"test_accuracy": made_up.accuracy}))
    return folder


def test_the_ladder_at_the_largest_size_is_each_worlds_cnn_mean_and_the_vits_plain_mean():
    from vitbias.chapters.crossover import ladder_at_largest

    cnn, vit_plain = ladder_at_largest(BUDGET, made_up_runs())
    ladder = plan.ladder(BUDGET)
    assert list(cnn) == list(ladder)
    for rung, world in enumerate(ladder):
        assert cnn[world] == pytest.approx(CNN[-1] - RUNG_COST * rung, abs=0.02)
    assert vit_plain == pytest.approx(VIT[-1], abs=0.02)


def test_the_measured_ladder_is_read_from_the_run_caches_metrics_and_is_none_with_a_run_missing(tmp_path):
    from vitbias.chapters.crossover import ladder_at_largest, measured_ladder

    done = made_up_runs()
    assert measured_ladder(BUDGET, cache_of(done, tmp_path / "all")) == ladder_at_largest(BUDGET, done)
    without = {k: r for k, r in done.items() if k != ("cnn", SIZES[-1], BUDGET.seeds[0], "patches shuffled")}
    assert measured_ladder(BUDGET, cache_of(without, tmp_path / "one missing")) is None
    assert measured_ladder(BUDGET, tmp_path / "nothing") is None


def test_the_ladders_places_are_read_from_the_run_caches_metrics_as_the_page_computes_them(tmp_path):
    from vitbias import scaling
    from vitbias.chapters.crossover import curve, ladder_places

    done = made_up_runs()
    places = ladder_places(BUDGET, cache_of(done, tmp_path / "all"))
    assert list(places) == list(plan.ladder(BUDGET))
    vit = curve(done, BUDGET, "vit")
    for world, place in places.items():
        assert place == scaling.overtaking_spread(SIZES, curve(done, BUDGET, "cnn", world), vit)
    without = {k: r for k, r in done.items() if k != ("vit", SIZES[0], BUDGET.seeds[-1], "plain")}
    assert ladder_places(BUDGET, cache_of(without, tmp_path / "one missing")) is None


def test_the_ladder_command_says_a_rung_agrees_only_where_every_cache_puts_it_in_the_same_decided_place(tmp_path):
    from tools.booktools import ladder_table
    from vitbias.chapters.crossover import DECIDED

    done = made_up_runs()
    top = plan.ladder(BUDGET)[-1]
    # on the other kernel set the CNN is far better on the last rung at the largest size: no crossing
    moved = {**done, **{("cnn", SIZES[-1], s, top): run(0.99) for s in BUDGET.seeds}}
    lines = ladder_table([cache_of(done, tmp_path / "own"), cache_of(moved, tmp_path / "other")])
    rows = {line.split(" | ")[0]: line for line in lines[1:]}
    assert list(rows) == list(plan.ladder(BUDGET))
    assert rows[top].endswith("| no") and "beyond" in rows[top].split(" | ")[2]
    same = ladder_table([tmp_path / "own", tmp_path / "own"])
    assert all(line.endswith("| yes") == (max(map(float, _shares(line))) >= 100 * DECIDED) for line in same[1:])
    with pytest.raises(ValueError, match="lacks a run"):
        ladder_table([tmp_path / "own", tmp_path / "empty"])


def _shares(line):
    """The bootstrap shares (percent) of a ladder table row's first cache."""
    return line.split(" | ")[1].split(" ")[-1].replace("%", "").split("/")


def test_each_world_of_the_ladder_has_its_own_glue_name_and_a_name_outside_the_ladder_is_refused():
    from vitbias.chapters.crossover import world_slug

    slugs = [world_slug(w) for w in plan.ladder(BUDGET)]
    assert slugs[:2] == ["plain", "shuffled"] and len(set(slugs)) == len(slugs)
    assert slugs[2:] == [f"blocks_{b}" for b in plan.world_blocks(BUDGET.vit["patch_size"])]
    with pytest.raises(ValueError, match="not a world of the ladder"):
        world_slug("pixels shuffled")


def placed(**shares):
    """An overtaking whose bootstrap draws split as ``shares`` (before, inside, beyond)."""
    from vitbias.scaling import Overtaking

    return Overtaking("inside", 300.0, {"before": 0.0, "inside": 0.0, "beyond": 0.0, **shares}, 200.0, 400.0)


def test_a_crossing_is_undecided_when_no_place_holds_the_decided_share_of_the_draws():
    from vitbias.chapters.crossover import DECIDED, add_undecided

    ladder = plan.ladder(BUDGET)
    passes = {w: placed(beyond=1.0) for w in ladder}
    passes[ladder[1]] = placed(inside=DECIDED)  # decided, just
    passes[ladder[2]] = placed(before=0.5, inside=0.5)
    passes[ladder[-1]] = placed(before=DECIDED - 0.01, inside=0.01)
    found = Evidence("crossover")
    add_undecided(found, BUDGET, passes)
    assert found["cross_n_undecided"] == 2
    assert found["cross_decided_share"] == DECIDED
    assert found.claims["the undecided crossings lie near the smallest sizes"]
    assert found["cross_undecided_lead"].startswith("Three seeds do not place every crossing")
    decided = Evidence("crossover")
    add_undecided(decided, BUDGET, {w: placed(beyond=1.0) for w in ladder})
    assert decided["cross_n_undecided"] == 0
    assert decided["cross_undecided_lead"] == "Three seeds place every crossing: in"
    passes[ladder[2]] = placed(inside=0.5, beyond=0.5)._replace(size=float(SIZES[-2]))
    late = Evidence("crossover")
    add_undecided(late, BUDGET, passes)
    assert not late.claims["the undecided crossings lie near the smallest sizes"]


def test_undecided_crossings_need_every_world_of_the_ladder_in_order():
    from vitbias.chapters.crossover import add_undecided

    ladder = plan.ladder(BUDGET)
    with pytest.raises(ValueError, match="the ladder's worlds"):
        add_undecided(Evidence("crossover"), BUDGET, {w: placed(beyond=1.0) for w in reversed(ladder)})
