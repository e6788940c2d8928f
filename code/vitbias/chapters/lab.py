"""The lab chapter: the book retraced in nine sections, each ending in the numbers its prose quotes,
and the challenge's entry scored beside the book's models trained on the same images."""

from __future__ import annotations

import json

import numpy as np
import torch

from .. import cost, locality, models, noise, plan, runs
from .. import lab as challenge
from .. import literature as lit
from ..evidence import Evidence

LOST_MARGIN = 0.02  # closer than this, the two embeddings keep about as much of the patch
KEPT = {"more": "the pretrained embedding keeps more of the patch than random weights of the same width",
        "less": "the pretrained embedding keeps less of the patch than random weights of the same width",
        "same": "the pretrained embedding keeps about as much of the patch as random weights of the same width"}
RECIPE_DIRECTION = {"more": "rises", "less": "falls",
                    "same": "moves by {apart:.3f}, less than the {resolvable:.3f} its {seeds} seeds can resolve"}
FLOAT64 = "float64 linear algebra on float32 images"
ENTRY_IS_BOOK_RUN = "the book's entry is the conv stem's run of the first seed, read from the run cache"


def measure(budget, train_set, test_set, *, E: dict, tokens, two_ways: float, lost: dict, best: float,
            jigsaw: dict, price: dict, hunger: dict, recipe: dict, probe: dict, finer: dict, board: dict,
            entry, my_vit) -> Evidence:
    """The chapter's evidence, from what its sections computed: the section functions below in the
    page's order, which the page calls one by one, each beside the sentences it backs.

    ``E``: name -> embedding matrix ``(d, D)`` (``"pretrained"``, ``"random
    weights"``); ``tokens``: the pretrained embedding's tokens of section 2;
    ``two_ways``: their largest difference between the two computations;
    ``lost``: name -> relative error of the way back, ``best``: the
    principal directions'; ``jigsaw``: ``"without"``/``"with"`` positions ->
    largest change of a logit; ``price``: pixels (224, 384) -> ViT-L/16's
    counts; ``hunger``: ``(model, n, seed) -> run``; ``recipe``: ``(model,
    augment, seed) -> run``; ``probe``: name -> probe accuracies ``(seeds,)``;
    ``finer``: ``run`` (the ViT on the finer grid), ``distance`` ``(layers,
    heads)``, ``near`` and ``far`` (``"trained"``/``"initial"`` -> cosine
    similarity), ``attention`` ``(images, layers, heads, N, N)``; ``board``:
    ``(name, seed) -> run`` at the challenge's size; ``entry``: the
    :class:`vitbias.lab.Entry` of ``my_vit``.
    """
    found = Evidence("lab")
    testbed(found, budget, train_set, test_set)
    patch_embedding(found, E, tokens, two_ways, lost, best)
    bag_of_patches(found, jigsaw)
    price_of_a_token(found, price)
    accuracy = data_hunger(found, budget, hunger)
    augmentation_recipe(found, budget, recipe)
    linear_probe(found, budget, probe, accuracy["vit"])
    finer_grid(found, **finer)
    trained = challenge_board(found, budget, board, entry)
    book_entry(found, budget, entry, trained["conv stem"][0], my_vit)
    reads_the_plan(budget, [*hunger.values(), *recipe.values(), *board.values(), finer["run"]])
    return found


def _one_run_sd(model: str, where) -> float:
    """One run's sd of ``model``'s test accuracy at ``where`` (a size, or ``"recipe switched"``), the
    crossover chapter's measurement of the same runs (:func:`vitbias.noise.accuracy_kind`)."""
    return noise.one_run_sd("crossover", noise.accuracy_kind(model, where))


def testbed(found: Evidence, budget, train_set, test_set) -> None:
    """The opening and section 1 (``lab_image_side``, ``lab_patch``, ``lab_train_size``,
    ``lab_test_size``, ``lab_tokens``, ``lab_patch_numbers``): the testbed's images ``(n, C, S, S)``
    and how the ViT cuts them."""
    S, P, C = train_set.images.shape[-1], budget.vit["patch_size"], test_set.images.shape[1]
    found.number("lab_image_side", S)
    found.number("lab_patch", P)
    found.number("lab_train_size", len(train_set))
    found.number("lab_test_size", len(test_set))
    found.number("lab_tokens", (S // P) ** 2)
    found.number("lab_patch_numbers", C * P * P)


def reconstruction_sd():
    """One pretrained embedding's relative error of the way back: its sd, measured from the glued errors
    over the pretraining seeds and both kernel sets (``python -m tools.booktools noise --glued --chapter
    lab``)."""
    return noise.one_run_sd("lab", "reconstruction")


def patch_embedding(found: Evidence, E: dict, tokens, two_ways: float, lost: dict, best: float) -> None:
    """Section 2 (``lab_embed_*``, ``lab_two_ways``, ``lab_lost_*``, ``lab_lit_pinv``): the patch
    embedding as a strided convolution, and what a token keeps.

    ``E``: name (``"pretrained"``, ``"random weights"``) -> embedding matrix
    ``(d, D)``; ``tokens``: the pretrained embedding's tokens ``(images, N,
    d)``; ``two_ways``: their largest difference between the two
    computations; ``lost``: name -> relative error of the way back, ``(seeds,)``
    (each seed's pretrained ViT and its random twin); ``best``: the principal
    directions' error.
    """
    if set(lost) != set(E) or len({np.shape(v) for v in lost.values()}) != 1 or np.ndim(lost["pretrained"]) != 1:
        raise ValueError(f"lost must hold one error per seed for each of {sorted(E)}, got {lost!r}")
    lost = {name: np.asarray(values, dtype=float) for name, values in lost.items()}
    d, D = E["pretrained"].shape
    found.number("lab_embed_width", d)
    found.number("lab_embed_directions", D)
    found.rounding("lab_two_ways", two_ways, 1e-5 * max(1.0, tokens.abs().max().item()),
                   why="float32 rounding of two summation orders: a bound, not a value")
    found.trained("lab_lost_pretrained", lost["pretrained"], reconstruction_sd(),
                  what="relative error of the way back through a pretrained embedding, one pretraining run per seed")
    found.number("lab_lost_random", float(lost["random weights"].mean()), rel=1e-6,
                 why=f"{FLOAT64}: random weights drawn after each seed, no training")
    found.number("lab_lost_best", best, rel=1e-6, why=FLOAT64)
    found.number("lab_lit_pinv", lit.LAB_PINV_ERROR_TI16.value)
    pretrained, random = lost["pretrained"].mean(), lost["random weights"].mean()
    side = ("more" if pretrained < random - LOST_MARGIN else "less" if pretrained > random + LOST_MARGIN else "same")
    found.verdict("lab_lost_text", KEPT[side])


def bag_of_patches(found: Evidence, change: dict) -> None:
    """Section 3 (``lab_jigsaw_without``, ``lab_jigsaw_with``): the largest change of a logit under a
    jigsaw, ``change["without"]`` and ``change["with"]`` positions; ``ValueError`` when the change
    without positions is more than rounding."""
    found.rounding("lab_jigsaw_without", change["without"], 1e-5,
                   why="float32 rounding only: a bound, not a value")
    found.number("lab_jigsaw_with", change["with"], rel=0.01,
                 why="float32 forward pass with fixed seeds: another summation order moves it far less than 1 %")


def price_of_a_token(found: Evidence, price: dict) -> None:
    """Section 4 (``lab_l16_*``, and the claims on how attention's cost grows): ViT-L/16's parameters
    and multiply-adds at 224 and 384 pixels, ``price[px][count]``."""
    for px in (224, 384):
        for key in ("tokens", "total", "positions"):
            found.number(f"lab_l16_{key}_{px}", price[px][key])
        found.number(f"lab_l16_attention_share_{px}",
                     price[px]["attention"] / (price[px]["attention"] + price[px]["dense"]))
    found.number("lab_l16_embedding", price[224]["embedding"])
    found.number("lab_l16_block", price[224]["block"])
    dense, attention = (price[384][k] / price[224][k] for k in ("dense", "attention"))
    found.number("lab_l16_dense_ratio", dense)
    found.number("lab_l16_attention_ratio", attention)
    crossover = cost.attention_crossover_tokens(1024)
    found.number("lab_l16_crossover", crossover)
    found.claim("from 224 to 384 pixels attention grows more than eightfold, the projections and MLP less",
                attention > 8 > dense)
    found.claim("at 384 pixels attention still costs less than the rest of a block",
                price[384]["tokens"] < crossover)


def data_hunger(found: Evidence, budget, hunger: dict) -> dict:
    """Section 5 (``lab_cnn_*``, ``lab_vit_*``, ``lab_size_*``, and the claim on the parameter counts):
    the CNN and the ViT at the smallest and largest size, from ``hunger``, ``(model, n, seed) -> run``.
    Returns model -> test accuracies ``(sizes, seeds)``."""
    sizes, seeds = budget.train_sizes, budget.seeds
    accuracy = {m: np.array([[hunger[m, n, s].accuracy for s in seeds] for n in sizes]) for m in ("cnn", "vit")}
    for m, name in (("cnn", "CNN"), ("vit", "ViT")):
        for tag, i in (("small", 0), ("large", -1)):
            found.trained(f"lab_{m}_{tag}", accuracy[m][i], _one_run_sd(m, sizes[i]),
                          what=f"test accuracy of the {name}, the crossover chapter's runs")
    found.number("lab_size_small", sizes[0])
    found.number("lab_size_large", sizes[-1])
    count = {m: models.parameter_count(hunger[m, sizes[0], seeds[0]].model) for m in ("cnn", "vit")}
    found.number("lab_cnn_params", count["cnn"])
    found.number("lab_vit_params", count["vit"])
    found.claim("the CNN has fewer parameters than the ViT", count["cnn"] < count["vit"])
    return accuracy


def augmentation_recipe(found: Evidence, budget, recipe: dict) -> None:
    """Section 6 (``lab_recipe_*``, ``lab_deit_epochs``): both models at the recipe's size without and
    with crop and flip, from ``recipe``, ``(model, augment, seed) -> run``."""
    n, switched = budget.recipe_size, not budget.train["augment"]
    found.number("lab_recipe_size", n)
    found.number("lab_recipe_passes", plan.AUGMENTED_PASSES)
    found.number("lab_deit_epochs", lit.DEIT_EPOCHS.value)
    samples = {(m, aug, kind): [getattr(recipe[m, aug, s], kind) for s in budget.seeds]
               for m in ("cnn", "vit") for aug in (False, True) for kind in ("accuracy", "train_accuracy")}
    for (m, aug, kind), values in samples.items():
        test = kind == "accuracy"
        where = "recipe switched" if aug == switched else n
        sd = _one_run_sd(m, where) if test else noise.one_run_sd(
            "crossover", "train" if where == n else f"train, {where}")
        found.trained(f"lab_recipe_{m}_{'aug' if aug else 'plain'}_{'test' if test else 'train'}", values,
                      sd, what=f"{'test' if test else 'training'} accuracy of the "
                      f"{'CNN' if m == 'cnn' else 'ViT'} at the recipe's size, {'with' if aug else 'without'} "
                      "crop and flip")
    for m in ("cnn", "vit"):
        # A seed pairs the two runs (the same images and initial weights): a paired t test on the differences.
        found.compared(f"lab_recipe_{m}_direction",
                       np.subtract(samples[m, True, "accuracy"], samples[m, False, "accuracy"]), 0.0,
                       **RECIPE_DIRECTION)


def linear_probe(found: Evidence, budget, probe: dict, vit_accuracy) -> None:
    """Section 7 (``lab_probe_*``): linear probes on pretrained and random features (``probe``: name ->
    accuracies ``(seeds,)``) against the ViT trained end to end on as many labels (``vit_accuracy``:
    ``(sizes, seeds)``)."""
    found.number("lab_probe_labels", budget.probe_labels)
    # The crossover chapter's probes, on the same seeds' pretraining runs and labels: its measured sds.
    probe_sd = {name: noise.one_run_sd("crossover", f"probe, {name}") for name in probe}
    found.trained("lab_probe_pretrained", probe["pretrained"], probe_sd["pretrained"],
                  what="linear-probe accuracy on a pretrained ViT's features, its seed's pretraining run and labels")
    found.trained("lab_probe_random", probe["random weights"], probe_sd["random weights"],
                  what="linear-probe accuracy on random weights drawn after the seed, on its labels")
    found.trained("lab_probe_vit", vit_accuracy[budget.train_sizes.index(budget.probe_labels)],
                  _one_run_sd("vit", budget.probe_labels),
                  what="test accuracy of the ViT trained end to end on the probe's labels")


def finer_grid(found: Evidence, run, distance, near: dict, far: dict, attention) -> None:
    """Section 8 (``lab_pre_*``, ``lab_random_near``): where the ViT on the finer grid (``run``) looks,
    and what its position table learned.

    ``distance``: mean attention distance ``(layers, heads)`` in pixels;
    ``near``, ``far``: ``"trained"``/``"initial"`` -> cosine similarity of
    the position vectors; ``attention``: ``(images, layers, heads, N, N)``,
    whose last layer's patch queries must sum to 1 (else ``ValueError``).
    """
    cfg = run.model.config
    grid, prefix = cfg.grid_size, cfg.num_prefix_tokens
    last = attention[:, -1].mean(axis=1)[:, prefix:]  # (images, patch queries, N): what the patches read
    if not np.allclose(last.sum(axis=2), 1):
        raise ValueError("the last layer's attention of a patch query must sum to 1 over the tokens")
    uniform = locality.uniform_attention_distance(grid, grid, cfg.patch_size)
    # One run (the first seed): one run's band, with the sds the locality chapter measured over seeds and
    # kernel sets.
    sd = {kind: noise.one_run_sd("locality", kind) for kind in ("distance", "cosine")}
    what = "of the ViT on the finer grid, one run: mean attention distance, px,"
    found.trained("lab_pre_first_px", distance[0].mean(), sd["distance"] * uniform, what=f"{what} first layer")
    found.trained("lab_pre_last_px", distance[-1].mean(), sd["distance"] * uniform, what=f"{what} last layer")
    found.number("lab_pre_uniform_px", uniform)
    what = "of the ViT on the finer grid, one run: cosine similarity of the position vectors,"
    found.trained("lab_pre_near", near["trained"], sd["cosine"], what=f"{what} 4 neighbours")
    found.trained("lab_pre_far", far["trained"], sd["cosine"], what=f"{what} far patches")
    found.number("lab_random_near", near["initial"], rel=1e-6, why="float32 weights drawn from a fixed seed")
    found.number("lab_pre_layers", distance.shape[0])
    found.number("lab_pre_grid", grid)


def challenge_board(found: Evidence, budget, board: dict, entry) -> dict:
    """Section 9 (``lab_max_*``, ``lab_challenge_size``, ``lab_n_*``, ``lab_best_route``,
    ``lab_entry*``, ``lab_board_*``): the entry beside the plain ViT, the CNN and the best route, from
    ``board``, ``(name, seed) -> run`` at the challenge's size. Returns name -> runs over the seeds."""
    routes, seeds = plan.prior_routes(budget), budget.seeds
    trained = {name: [board[name, s] for s in seeds] for name in (*routes, "plain ViT", "CNN")}
    scores = {name: [r.accuracy for r in group] for name, group in trained.items()}
    best_route = max(routes, key=lambda name: np.mean(scores[name]))
    n = plan.challenge_size(budget)
    sd = {m: _one_run_sd(m, n) for m in ("cnn", "vit")} | {"route": noise.one_run_sd("priors", "routes")}
    found.number("lab_max_params", challenge.MAX_PARAMETERS)
    found.number("lab_max_images", plan.MAX_IMAGES)
    found.number("lab_challenge_size", plan.challenge_size(budget))
    found.number("lab_n_seeds", len(seeds))
    found.verdict("lab_best_route", best_route)
    found.number("lab_n_routes", len(routes))
    found.number("lab_entry_params", entry.parameters)
    found.timing("lab_entry_seconds", entry.seconds,
                 why="the training seconds the run cache recorded for the entry's run")
    found.trained("lab_entry", entry.accuracy, sd["route"], what="test accuracy of the challenge's entry")
    for glued, name, kind in (("vit", "plain ViT", "vit"), ("cnn", "CNN", "cnn"), ("route", best_route, "route")):
        found.trained(f"lab_board_{glued}", scores[name], sd[kind], what=f"test accuracy of the {name}")
    # The entry's one score against the seeds of each (a one-sample t test).
    for glued, name in (("lab_entry_versus", "plain ViT"), ("lab_entry_versus_cnn", "CNN")):
        found.compared(glued, scores[name], entry.accuracy, more=f"below the {name}", less=f"above the {name}",
                       same=f"{{apart:.3f}} from the {name}, a difference its {{seeds}} seeds cannot resolve "
                            "(they resolve only {resolvable:.3f} or more)")
    return trained


def book_entry(found: Evidence, budget, entry, stem_run, my_vit) -> None:
    """Section 9's last claim: an ``entry`` of ``my_vit`` that repeats one of the book's runs is the conv
    stem's run ``stem_run`` of the first seed (:func:`is_the_stem_run`). Seeds torch's generator with
    the first seed, to draw ``my_vit``'s initial weights as :func:`vitbias.lab.enter` does."""
    torch.manual_seed(budget.seeds[0])
    found.claim(ENTRY_IS_BOOK_RUN, is_the_stem_run(
        entry, stem_run, budget.seeds[0],
        challenge.book_run(my_vit(), budget, entry.train_size, budget.seeds[0]) is not None))


def is_the_stem_run(entry, stem_run, first_seed: int, repeats_a_book_run: bool) -> bool:
    """Whether an entry that repeats one of the book's runs is the conv stem's run ``stem_run`` of the
    first seed: the same seed, size, scores and training seconds. A reader's own entry repeats none, and
    the claim says nothing of it."""
    if not repeats_a_book_run:
        return True
    return (entry.seed == first_seed and entry.parameters == models.parameter_count(stem_run.model)
            and (entry.accuracy, entry.train_accuracy) == (stem_run.accuracy, stem_run.train_accuracy)
            and entry.seconds == stem_run.metrics["seconds"])


def reads_the_plan(budget, read) -> None:
    """``ValueError`` unless the runs ``read`` are exactly the plan's (:func:`planned_runs`), which a
    device run can train ahead."""
    # A run's key hashes its canonical config with this process's sources and libraries: within one
    # process the canonical configs alone tell runs apart.
    read = {json.dumps(runs.check_config(r.config), sort_keys=True) for r in read}
    planned = {json.dumps(runs.check_config(c), sort_keys=True) for c in planned_runs(budget).values()}
    if read != planned:
        raise ValueError(f"the page reads {len(read - planned)} runs the plan lacks and misses "
                         f"{len(planned - read)} of its runs: vitbias.chapters.lab.planned_runs and the page "
                         "must agree")


def planned_runs(budget) -> dict:
    """The lab's runs: the curves ``(model, n, seed)`` and the recipe switched ``(model, "recipe", seed)``
    (the crossover chapter's), the board at the challenge's size ``(name, seed)``: the routes, the
    plain ViT and the CNN (the priors chapter's), and ``("finer grid", seed)``, the locality chapter's
    ViT on its finer grid; every model fitting its training set, an entry too; all of them other
    chapters' runs."""
    sizes, seeds = budget.train_sizes, budget.seeds
    wanted = {(m, n, s): plan.fitted(budget, m, n, s)
              for m in plan.MODELS for n in sizes for s in seeds}
    switched = not budget.train["augment"]
    wanted |= {(m, "recipe", s): plan.fitted(budget, m, budget.recipe_size, s, augment=switched)
               for m in plan.MODELS for s in seeds}
    n = plan.challenge_size(budget)
    wanted |= {(name, s): plan.fitted(budget, "vit", n, s, route=route, augment=augment)
               for name, (route, augment) in plan.prior_routes(budget).items() for s in seeds}
    # the board's plain models (lab.enter trains an entry as the plain ViT's run)
    wanted |= {(name, s): plan.fitted(budget, m, n, s)
               for name, m in (("plain ViT", "vit"), ("CNN", "cnn")) for s in seeds}
    # section 8: the locality chapter's ViT on its finer grid, the larger set, the first seed
    wanted["finer grid", seeds[0]] = plan.on_locality_grid(budget, plan.locality_sizes(budget)[-1], seeds[0])
    return wanted
