"""The lab chapter's evidence (``vitbias.chapters.lab``), on made-up runs and measurements."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from vitbias import chapters, cost, plan, profile, vit
from vitbias.chapters import lab as chapter
from vitbias.evidence import Evidence

BUDGET = profile.budget("quick")
SEEDS = BUDGET.seeds
CNN, VIT = torch.nn.Linear(2, 2), torch.nn.Linear(20, 20)  # 6 and 420 parameters


@pytest.fixture(autouse=True)
def no_book_run(monkeypatch):
    """Whether an entry repeats one of the book's runs is asked of the run cache: here it repeats none
    (:func:`vitbias.chapters.lab.is_the_stem_run` is specified below on its own)."""
    monkeypatch.setattr(chapter.challenge, "book_run", lambda *args, **kwargs: None)


class Images:
    def __init__(self, n):
        self.images = np.zeros((n, 3, 32, 32), dtype=np.uint8)

    def __len__(self):
        return len(self.images)


def run(config, accuracy, train_accuracy=1.0, model=VIT, seconds=10.0):
    return SimpleNamespace(config=config, accuracy=accuracy, train_accuracy=train_accuracy, model=model,
                           metrics={"seconds": seconds})


def spread(mean):
    return [mean - 0.01, mean, mean + 0.01]


def price():
    """Section 4's counts of ViT-L/16, as the page computes them."""
    found = {}
    for px in (224, 384):
        cfg = vit.VIT_L_16.replace(img_size=px)
        counts = cost.parameter_counts(cfg)
        dense, attention = cost.block_macs(cfg.num_patches, cfg.embed_dim, cfg.mlp_ratio)
        found[px] = dict(tokens=cfg.num_patches, embedding=counts["patch embedding"],
                         block=cost.block_parameters(cfg.embed_dim, int(cfg.embed_dim * cfg.mlp_ratio))["total"],
                         positions=counts["position table"], total=counts["total"], dense=dense,
                         attention=attention)
    return found


def sections(budget=BUDGET, stem=0.8, cnn_model=CNN, lost=(0.49, 0.5, 0.51)):
    """Made-up inputs of ``measure``: every run the plan names, with the page's keys."""
    planned = chapters.chapter_runs("lab", budget)
    switched = not budget.train["augment"]
    hunger = {(m, n, s): run(planned[m, n, s], (0.6 if m == "cnn" else 0.4) + 0.01 * s,
                             model=cnn_model if m == "cnn" else VIT)
              for m in ("cnn", "vit") for n in budget.train_sizes for s in SEEDS}
    recipe = {(m, aug, s): (run(planned[m, "recipe", s], 0.5 + 0.013 * s, 0.9) if aug == switched
                            else hunger[m, budget.recipe_size, s])
              for m in ("cnn", "vit") for aug in (False, True) for s in SEEDS}
    means = {"conv stem": stem, "CNN": 0.95, "plain ViT": 0.5}
    board = {(name, s): run(planned[name, s], means.get(name, 0.6) + 0.01 * s)
             for name in (*plan.prior_routes(budget), "plain ViT", "CNN") for s in SEEDS}
    grid = 4
    config = SimpleNamespace(grid_size=grid, num_prefix_tokens=1, patch_size=8)
    fine = SimpleNamespace(config=planned["finer grid", SEEDS[0]], model=SimpleNamespace(config=config))
    tokens = grid * grid + 1
    entry = SimpleNamespace(parameters=1_000, seconds=30.0, accuracy=0.8, train_accuracy=1.0, seed=SEEDS[0],
                            train_size=plan.challenge_size(budget))
    return dict(E={"pretrained": np.ones((64, 192)), "random weights": np.ones((64, 192))},
                tokens=torch.ones(1, 16, 64), two_ways=1e-6,
                lost={"pretrained": list(lost), "random weights": [0.8, 0.8, 0.8]},
                best=0.1, jigsaw={"without": 1e-7, "with": 5e-4}, price=price(), hunger=hunger, recipe=recipe,
                probe={"pretrained": spread(0.55), "random weights": spread(0.1)},
                finer=dict(run=fine, distance=np.full((2, 4), 10.0), near={"trained": 0.2, "initial": 0.0},
                           far={"trained": 0.0, "initial": 0.0},
                           attention=np.full((5, 2, 4, tokens, tokens), 1 / tokens)),
                board=board, entry=entry, my_vit=lambda: torch.nn.Linear(1, 1))


def measured(**changes):
    return chapter.measure(BUDGET, Images(2000), Images(2000), **{**sections(), **changes})


def test_the_testbed_and_the_price_of_a_token_are_the_exact_counts():
    found = measured()
    assert (found["lab_tokens"], found["lab_patch_numbers"]) == ((32 // 8) ** 2, 3 * 8 * 8)
    assert (found["lab_l16_tokens_224"], found["lab_l16_tokens_384"]) == (196, 576)
    assert found["lab_l16_attention_ratio"] == 576**2 / 196**2
    assert found["lab_l16_dense_ratio"] == 576 / 196
    assert found["lab_l16_crossover"] == 6 * 1024
    assert found["lab_l16_positions_384"] - found["lab_l16_positions_224"] == (576 - 196) * 1024


def test_every_claim_holds_on_numbers_that_back_the_prose():
    found = measured()
    assert found.claims and all(found.claims.values())
    assert found["lab_best_route"] == "conv stem"
    assert found["lab_lost_text"] == chapter.KEPT["more"]


def test_the_sections_called_one_by_one_in_the_pages_order_find_what_measure_finds():
    made_up, found = sections(), Evidence("lab")
    chapter.testbed(found, BUDGET, Images(2000), Images(2000))
    chapter.patch_embedding(found, made_up["E"], made_up["tokens"], made_up["two_ways"], made_up["lost"],
                            made_up["best"])
    chapter.bag_of_patches(found, made_up["jigsaw"])
    chapter.price_of_a_token(found, made_up["price"])
    accuracy = chapter.data_hunger(found, BUDGET, made_up["hunger"])
    assert {m: a.shape for m, a in accuracy.items()} == {m: (len(BUDGET.train_sizes), len(SEEDS))
                                                         for m in ("cnn", "vit")}
    chapter.augmentation_recipe(found, BUDGET, made_up["recipe"])
    chapter.linear_probe(found, BUDGET, made_up["probe"], accuracy["vit"])
    chapter.finer_grid(found, **made_up["finer"])
    trained = chapter.challenge_board(found, BUDGET, made_up["board"], made_up["entry"])
    chapter.book_entry(found, BUDGET, made_up["entry"], trained["conv stem"][0], made_up["my_vit"])
    whole = measured()
    assert (found.entries, found.claims) == (whole.entries, whole.claims)


def test_the_parameter_claim_fails_when_the_cnn_is_the_larger_model():
    found = chapter.measure(BUDGET, Images(2000), Images(2000), **sections(cnn_model=torch.nn.Linear(30, 30)))
    assert not found.claims["the CNN has fewer parameters than the ViT"]


def test_the_verdict_on_what_a_token_keeps_changes_with_the_errors():
    random = [0.79, 0.8, 0.81]
    assert measured(lost={"pretrained": [0.8, 0.81, 0.82], "random weights": random})["lab_lost_text"] == \
        chapter.KEPT["same"]
    assert measured(lost={"pretrained": [0.9, 0.9, 0.91], "random weights": random})["lab_lost_text"] == \
        chapter.KEPT["less"]
    with pytest.raises(ValueError, match="one error per seed"):
        measured(lost={"pretrained": 0.5, "random weights": 0.8})


def test_the_best_route_is_the_route_with_the_highest_mean():
    found = chapter.measure(BUDGET, Images(2000), Images(2000), **sections(stem=0.3))
    assert found["lab_best_route"] != "conv stem"
    assert found["lab_board_route"] == pytest.approx(0.61)


def test_an_entry_that_repeats_a_book_run_must_be_the_conv_stems_first_seed():
    stem = run({}, 0.8, model=torch.nn.Linear(10, 10), seconds=30.0)
    entry = SimpleNamespace(parameters=110, seconds=30.0, accuracy=0.8, train_accuracy=1.0, seed=0)
    assert chapter.is_the_stem_run(entry, stem, 0, repeats_a_book_run=True)
    moved = SimpleNamespace(**{**vars(entry), "accuracy": 0.7})
    assert not chapter.is_the_stem_run(moved, stem, 0, repeats_a_book_run=True)
    assert chapter.is_the_stem_run(moved, stem, 0, repeats_a_book_run=False)


def test_a_page_that_reads_runs_other_than_the_plans_is_refused():
    made_up = sections()
    made_up["board"]["conv stem", SEEDS[-1]] = made_up["board"]["conv stem", SEEDS[0]]
    with pytest.raises(ValueError, match="vitbias.chapters.lab.planned_runs and the page must agree"):
        chapter.measure(BUDGET, Images(2000), Images(2000), **made_up)


def test_attention_rows_that_do_not_sum_to_one_are_refused():
    made_up = sections()
    made_up["finer"]["attention"] = made_up["finer"]["attention"] * 0.9
    with pytest.raises(ValueError, match="must sum to 1"):
        chapter.measure(BUDGET, Images(2000), Images(2000), **made_up)


def test_a_jigsaw_without_positions_that_moves_a_logit_beyond_rounding_is_refused():
    with pytest.raises(ValueError, match="rounding noise"):
        measured(jigsaw={"without": 1e-3, "with": 5e-4})
