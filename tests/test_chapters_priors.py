"""The priors chapter's evidence (``vitbias.chapters.priors``), on made-up accuracies and small budgets."""

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from vitbias import chapters, cost, literature, masks, plan, profile
from vitbias.chapters import priors as chapter
from vitbias.evidence import Evidence
from vitbias.priors import GATE_INIT

BUDGET = profile.budget("quick")
N, SIZES = BUDGET.route_sizes[-1], BUDGET.train_sizes
ROUTES = tuple(plan.prior_routes(BUDGET))
VIT = np.array([0.50, 0.52, 0.51])  # (seeds,)
NOISE = np.array([0.001, -0.002, 0.0005])  # a difference no three seeds resolve


def accuracies(**moved):
    """name -> (seeds,): every route level with the plain ViT unless moved, the CNN far above."""
    found = {"CNN": VIT + 0.3, "ViT": VIT}
    for name in ROUTES:
        found[name] = VIT + moved.get(name, NOISE)
    return found


def evidence():
    return Evidence("priors")


GRID, _ = plan.locality_grid(BUDGET)
MASK = masks.grid_local_mask(GRID, GRID, radius=1, n_prefix=1)  # (N, N), [CLS] free
# grid side -> dense over radius-1 multiply-adds at ViT-B's width
RATIO = {side: cost.global_attention_macs(side * side + 1, chapter.WIDTH)
         / masks.local_attention_macs(side, side, 1, chapter.WIDTH, n_prefix=1) for side in (4, 14, 56)}
MOVED = {"relative bias": [1e-15, 2e-15, 1e-15], "plain ViT": [3.0, 4.0, 2.0]}  # each seed's largest logit change


class FakeModel(torch.nn.Linear):
    """A stand-in for a trained model: a parameter count, a number of classes and gates."""

    def __init__(self):
        super().__init__(4, 2)
        self.config = SimpleNamespace(num_classes=10)

    def gates(self):
        return np.linspace(0.8, 0.2, 4)[:, None].repeat(2, axis=1)  # (layers, heads): positional early


def made_up_runs(budget=BUDGET):
    """``done`` for ``budget``: every run of :func:`vitbias.chapters.priors.planned_runs`, the plain ViT rising with the
    size, the CNN far above it, the routes and hard locality level with their plain ViT."""
    rng = np.random.default_rng(0)
    sizes = budget.train_sizes
    done = {}
    for name, size, seed, shuffled in chapters.chapter_runs("priors", budget):
        level = 0.2 + 0.3 * sizes.index(size) / (len(sizes) - 1) if size in sizes else 0.4
        level += 0.3 * (name == "CNN")
        done[name, size, seed, shuffled] = SimpleNamespace(
            accuracy=level + rng.normal(0, 0.002), train_accuracy=1.0, model=FakeModel(),
            metrics={"seconds": 2.0, "losses": [0.0] * 100})
    return done


def test_the_mask_keeps_exactly_the_pairs_of_a_radius_one_neighbourhood_and_every_mask_claim_holds():
    found = evidence()
    chapter.mask_shares(found, BUDGET, MASK)
    assert found["prior_mask_grid"] == GRID
    assert found["prior_mask_pairs"] == (GRID * GRID + 1) ** 2
    assert found["prior_local_open_fraction"] == found["prior_mask_allowed"] / found["prior_mask_pairs"]
    assert found["prior_testbed_grid"] == BUDGET.vit["img_size"] // BUDGET.vit["patch_size"]
    assert all(found.claims.values()) and len(found.claims) == 2


def test_a_mask_of_another_grid_or_one_that_keeps_other_pairs_is_refused():
    with pytest.raises(ValueError, match="must be"):
        chapter.mask_shares(evidence(), BUDGET, masks.grid_local_mask(GRID + 1, GRID + 1, radius=1, n_prefix=1))
    with pytest.raises(ValueError, match="masks.allowed_pairs counts"):
        chapter.mask_shares(evidence(), BUDGET, masks.grid_local_mask(GRID, GRID, radius=2, n_prefix=1))


def test_the_saving_claim_fails_when_the_larger_grid_saves_less():
    found = evidence()
    chapter.kernel_savings(found, RATIO)
    assert found["prior_ratio_56"] == RATIO[56] and all(found.claims.values())
    found = evidence()
    chapter.kernel_savings(found, {14: 5.0, 56: 4.0})
    assert found.claims == {"the saving of a local kernel grows with the grid": False}
    with pytest.raises(ValueError, match="sides 14 and 56"):
        chapter.kernel_savings(evidence(), {4: 1.0, 14: 5.0})


def test_radius_two_restricts_from_the_first_side_past_which_fewer_than_half_the_pairs_stay_open():
    found = evidence()
    chapter.mask_shares(found, BUDGET, MASK)
    side = found["prior_r2_restricts_from"]

    def share(g):
        return masks.allowed_pairs(g, g, 2, 1) / (g * g + 1) ** 2

    assert share(side - 1) >= 0.5 and all(share(g) < 0.5 for g in range(side, 33))


def test_the_plain_vit_is_data_scarce_at_the_routes_size_only_when_the_seeds_resolve_both_sides():
    scarce = {SIZES[0]: np.array([0.10, 0.11, 0.12]), N: VIT, SIZES[-1]: VIT + 0.3}
    found = evidence()
    chapter.data_scarcity(found, BUDGET, scarce, num_classes=10)
    assert all(found.claims.values())
    assert found["prior_floor_chance"] == 0.1 and found["prior_floor_text"].startswith("close to chance")
    assert found["prior_larger_factor"] > 1
    at_the_top = {**scarce, N: scarce[SIZES[-1]] + NOISE}
    found = evidence()
    chapter.data_scarcity(found, BUDGET, at_the_top, num_classes=20)
    assert found.claims == {
        "at the routes' size the plain ViT is well above what it scores on the smallest set": True,
        "at the routes' size the plain ViT is well below what it reaches on the largest set": False}
    assert found["prior_floor_text"] == "well above chance"
    with pytest.raises(ValueError, match=f"lacks the plain ViT at \\[{SIZES[-1]}\\]"):
        chapter.data_scarcity(evidence(), BUDGET, {SIZES[0]: VIT, N: VIT}, num_classes=10)


def test_the_routes_verdict_counts_and_names_the_routes_on_each_side():
    found = evidence()
    chapter.routes_against_baselines(found, BUDGET, accuracies(**{"gated positional": np.array([0.10, 0.11, 0.10])}))
    assert found["prior_routes_large_text"].startswith(
        "One route is above the plain ViT (gated positional), no route is below it and no route is "
        "level with the CNN or above it. For every route, three paired seeds resolve a difference of ")
    assert found["prior_summary_large_text"] == (
        f"At {N:,} images, by a paired t test over the seeds, one route is above the plain ViT "
        "(gated positional) and no route is below it.")
    assert found["prior_n_routes"] == len(ROUTES) and found["prior_gated_large"] == pytest.approx(0.61333333)


def test_a_harder_task_is_named_only_for_the_recipe_that_fits_less_and_equal_fits_read_as_tied():
    fitted = {name: np.ones(3) for name in ("CNN", "ViT", *ROUTES)}
    fitted["crop and flip"] = np.array([0.90, 0.92, 0.91])
    params = dict.fromkeys(fitted, 1000)
    found = evidence()
    chapter.fits_and_costs(found, BUDGET, fitted, params, step_ms=dict.fromkeys(fitted, 5.0))
    assert found["prior_augment_fit_text"] == "a smaller share than the plain ViT"
    assert found["prior_distill_fit_text"] == chapter.TIED
    assert found["prior_harder_text"] == "the augmented ViT has"
    assert found["prior_plain_recipe_fit_text"].startswith("Every model")
    assert all(found.claims.values())


def test_the_size_claim_fails_when_a_route_grows_the_model_by_a_tenth():
    fitted = {name: np.ones(3) for name in ("CNN", "ViT", *ROUTES)}
    params = {**dict.fromkeys(fitted, 1000), "conv stem": 1100}
    found = evidence()
    chapter.fits_and_costs(found, BUDGET, fitted, params, step_ms=dict.fromkeys(fitted, 5.0))
    assert found.claims == {"none of the routes changes the model's size much (within 10 %)": False}
    assert found["prior_harder_text"] == "neither has" and found["prior_stem_params"] == 1100


def test_convits_table_backs_both_of_its_claims_and_the_epochs_scale_with_the_inverse_share():
    found = evidence()
    chapter.convit_study(found, chapter.convit_gains())
    assert all(found.claims.values()) and len(found.claims) == 2
    smallest = min(literature.CONVIT_SAMPLE_EFFICIENCY)
    assert found["prior_convit_small_epochs"] == literature.DEIT_EPOCHS.value / smallest
    assert found["prior_convit_gain_small"] == chapter.convit_gains()[smallest]


def test_gains_off_the_tables_gap_column_or_missing_a_share_are_refused():
    gains = chapter.convit_gains()
    rising = dict(zip(gains, sorted(gains.values())))  # the gains, smallest at the smallest share
    with pytest.raises(ValueError, match="gap column"):
        chapter.convit_study(evidence(), rising)
    shares = sorted(gains)
    with pytest.raises(ValueError, match="ConViT's shares"):
        chapter.convit_study(evidence(), {share: gains[share] for share in shares[1:]})


def test_relative_gains_are_percentages_over_the_plain_vits_mean():
    gains = chapter.relative_gains(accuracies(**{"gated positional": np.array([0.00, 0.00, 0.00])}))
    assert set(gains) == {"gated positional", "conv stem"}
    np.testing.assert_allclose(gains["gated positional"], 100 * (VIT / VIT.mean() - 1))


def test_the_gates_of_the_first_and_last_layers_are_their_means_over_heads_and_seeds():
    gates = np.zeros((3, 4, 2))
    gates[:, 0], gates[:, -1] = 0.8, 0.2
    found = evidence()
    chapter.learned_gates(found, gates)
    assert found["prior_gate_first"] == pytest.approx(0.8) and found["prior_gate_last"] == pytest.approx(0.2)
    assert found["prior_gate_init"] == 1 / (1 + np.exp(-GATE_INIT)) and found["prior_gate_layers"] == 4
    with pytest.raises(ValueError, match="seeds, layers, heads"):
        chapter.learned_gates(evidence(), np.zeros((3, 4)))


def test_the_shift_claim_fails_when_the_plain_vit_moves_less_than_a_thousand_times_as_far():
    found = evidence()
    chapter.shift_symmetry(found, {"relative bias": [1e-12, 1e-13, 1e-12], "plain ViT": [3.0, 2.5, 3.5]})
    assert all(found.claims.values())
    found = evidence()  # one seed's plain ViT barely moves: the claim is about every seed
    chapter.shift_symmetry(found, {"relative bias": [1e-12, 1e-12, 1e-12], "plain ViT": [3.0, 1e-10, 3.5]})
    assert not any(found.claims.values())
    with pytest.raises(ValueError, match="rounding noise"):
        chapter.shift_symmetry(evidence(), {"relative bias": [1e-12, 1e-6, 1e-12], "plain ViT": [3.0, 2.5, 3.5]})
    with pytest.raises(ValueError, match="'relative bias' and 'plain ViT'"):
        chapter.shift_symmetry(evidence(), {"relative bias": [1e-12]})
    with pytest.raises(ValueError, match="one change per seed"):
        chapter.shift_symmetry(evidence(), {"relative bias": [1e-12, 1e-12], "plain ViT": [3.0, 2.5, 3.5]})


def test_hard_locality_below_the_plain_vit_on_shuffled_images_is_counted_as_hurt():
    local = np.array([0.30, 0.31, 0.30])
    shuffled = {"CNN": VIT - 0.2, chapter.FINE: VIT, chapter.LOCAL: local}
    found = evidence()
    chapter.shuffled_images(found, BUDGET, shuffled, VIT, local + 0.2)
    assert found["prior_shuffled_sides_text"] == (
        "On shuffled images, where the grid prior is false, no route is above the plain ViT on its grid "
        "and one route is below it (local (radius 1)).")
    assert found["prior_shuffled_local1_text"] == "below it" and found["prior_local1_cost_text"] == "below it"


def test_hard_locality_level_with_the_plain_vit_on_the_finer_grid_says_how_close():
    found = evidence()
    chapter.hard_locality_on_finer_grid(found, BUDGET, {chapter.FINE: np.stack([VIT, VIT]),
                                       chapter.LOCAL: np.stack([VIT + NOISE, VIT + 0.2])})
    assert found["prior_local1_small_text"].startswith("level with it as far as three paired seeds can tell (")
    assert found["prior_local1_large_text"] == "above it"
    assert found["prior_local1_summary_text"] == "above the plain ViT on the same grid"
    assert found["prior_fine_size_small"] == plan.locality_sizes(BUDGET)[0]


def test_the_time_per_step_is_the_mean_over_the_runs_in_milliseconds():
    trained = [SimpleNamespace(metrics={"seconds": s, "losses": [0.0] * 100}) for s in (1.0, 3.0)]
    assert chapter.ms_per_step(trained) == pytest.approx(20.0)
    with pytest.raises(ValueError, match="one run at least"):
        chapter.ms_per_step([])


def test_measure_on_made_up_runs_backs_every_claim_of_the_page_and_glues_what_the_sections_glue():
    done = made_up_runs()
    found = chapter.measure(BUDGET, {"free": 0.1, "sealed": 0.0}, done, MOVED)
    assert all(found.claims.values()) and len(found.claims) == 11
    assert found["prior_shift_plain"] == pytest.approx(3.0) and found["prior_ratio_14"] == RATIO[14]
    assert found["prior_cnn_params"] == sum(p.numel() for p in FakeModel().parameters())
    assert found["prior_gate_first"] == pytest.approx(0.8) and found["prior_gated_ms"] == pytest.approx(20.0)
    sections = evidence()
    chapter.mask_shares(sections, BUDGET, MASK)
    chapter.convit_study(sections, chapter.convit_gains())
    assert set(sections.names()) <= set(found.names())


def test_measure_fails_the_relay_claims_when_the_change_arrives_through_a_sealed_cls():
    found = chapter.measure(BUDGET, {"free": 0.1, "sealed": 0.1}, made_up_runs(), MOVED)
    assert found.claims["with [CLS] free, the change arrives at the corner"]
    assert not found.claims["with [CLS] sealed, the change never arrives at the corner"]


def test_a_budget_that_augments_every_run_is_refused():
    augmenting = dataclasses.replace(BUDGET, train={**BUDGET.train, "augment": True})
    with pytest.raises(ValueError, match="without augmentation"):
        chapter.measure(augmenting, {"free": 0.1, "sealed": 0.0}, {}, MOVED)


def test_a_relay_without_both_masks_or_runs_missing_from_done_are_refused():
    with pytest.raises(ValueError, match="'free' and 'sealed'"):
        chapter.measure(BUDGET, {"free": 0.1}, {}, MOVED)
    with pytest.raises(ValueError, match="done lacks"):
        chapter.measure(BUDGET, {"free": 0.1, "sealed": 0.0}, {}, MOVED)
