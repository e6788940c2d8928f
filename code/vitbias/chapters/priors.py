"""The priors chapter: what each route that puts the convolution's prior back into a ViT costs and is worth
on the testbed, hard locality on a finer grid, and what the routes do where the grid prior is false.

Each public section function adds one section's glued entries and claims to the page's
:class:`~vitbias.evidence.Evidence`, from what the page's cells computed; :func:`measure` composes them in
the page's order from the chapter's runs and the page's two experiments (the [CLS] relay, the shift)."""

from __future__ import annotations

import numpy as np

from .. import cost, literature, masks, models, noise, plan
from ..evidence import Evidence, compare, compared_numbers, counted, sentence
from ..priors import GATE_INIT

LOCAL, FINE = plan.LOCAL_ROUTE_NAME, "ViT, finer grid"
# Each model's part of its glued names: prior_<slug>_large, prior_<slug>_params, prior_shuffled_<slug>, ...
SLUG = {"CNN": "cnn", "ViT": "vit", FINE: "fine_vit", **plan.ROUTE_SLUGS}
# The routes that change what a step asks of the model; the others keep the plain recipe.
ASKED_MORE = ("crop and flip", "distilled from the CNN")
WIDTH = 768  # ViT-B's width, for scale
ENDS = (("small", 0), ("large", -1))  # the two sizes of the locality grid
# The words of a paired comparison over the seeds, for "X scores a against Y's b, <words>"; too close to
# tell, they say how close, and what the seeds resolve.
SIDE = {"more": "above it", "less": "below it",
        "same": "level with it as far as {seeds} paired seeds can tell ({apart:.2f} apart, where they "
                "resolve only {resolvable:.2f} or more)"}
# "The augmented ViT fits 0.93, <words>": a paired t test over the seeds.
FIT = {"more": "a larger share than the plain ViT", "less": "a smaller share than the plain ViT",
       "same": "a share level with the plain ViT's as far as {seeds} paired seeds can tell ({apart:.2f} "
               "apart, where they resolve only {resolvable:.2f} or more)"}
# Seed by seed the same share (both fit every image, say): nothing apart, nothing to resolve.
TIED = "the same share as the plain ViT, seed by seed"
# "... and of these two <words> been set one."
WHO = {"crop and flip": "the augmented ViT has", "distilled from the CNN": "the distilled ViT has"}


# One run's measured sd of a model's accuracy (python -m tools.booktools noise; vitbias.noise), by kind:
# the CNN's and the plain ViT's by the crossover chapter, whose runs they are, at their size; the routes'
# as one kind, the largest over every route; the plain ViT on the locality grid and hard locality there,
# one kind each.
SD_KIND = {FINE: ("priors", "finer grid"), LOCAL: ("priors", "hard locality")}
CROSSOVER_MODELS = {"CNN": "cnn", "ViT": "vit"}


def one_run_sd(name: str, size: int | None = None):
    """One run's measured sd of the test accuracy of model ``name`` (:data:`SD_KIND`); the CNN's and the
    plain ViT's are the crossover chapter's at the ``size`` they were trained on, which they need."""
    if name in CROSSOVER_MODELS:
        if size is None:
            raise ValueError(f"the {name}'s sd depends on its training-set size: give the size")
        return noise.one_run_sd("crossover", noise.accuracy_kind(CROSSOVER_MODELS[name], size))
    return noise.one_run_sd(*SD_KIND.get(name, ("priors", "routes")))


def seeded(done: dict, name: str, size: int, seeds, shuffled: float = 0.0, what: str = "accuracy") -> np.ndarray:
    """``what`` (a run's ``accuracy`` or ``train_accuracy``) of model ``name`` at ``size`` images, for every
    seed: ``(seeds,)``. ``done``: the chapter's runs, ``(name, size, seed, shuffled fraction) -> run``."""
    return np.array([getattr(done[name, size, s, shuffled], what) for s in seeds])


def ms_per_step(trained: list) -> float:
    """Milliseconds per training step of ``trained``'s runs, the mean over them (one run a seed)."""
    if not trained:
        raise ValueError("a time per step needs one run at least")
    return 1e3 * np.mean([r.metrics["seconds"] / len(r.metrics["losses"]) for r in trained])


def relative_gains(accuracy: dict) -> dict:
    """The gated ViT's and the conv stem's gain over the plain ViT's mean, in %: name -> ``(seeds,)``."""
    return {name: 100 * (accuracy[name] / accuracy["ViT"].mean() - 1)
            for name in ("gated positional", "conv stem")}


def convit_gains() -> dict:
    """ConViT-S's relative gain in top-1 over DeiT-S, in %, by share of ImageNet-1k (d'Ascoli et al.)."""
    table = literature.CONVIT_SAMPLE_EFFICIENCY
    return {f: 100 * (table[f]["ConViT-S"].value / table[f]["DeiT-S"].value - 1) for f in sorted(table)}


def measure(budget, relay: dict, done: dict, moved: dict) -> Evidence:
    """The chapter's evidence: its sections in the page's order, on the page's experiments.

    ``relay``: how far the output of the patch at (0, 0) of the two-block ViT
    moves when only the far corner's patch changes, ``{"free": .., "sealed": ..}``
    ([CLS] open both ways, or patches barred from reading it); ``done``: the
    chapter's runs, ``(name, size, seed, shuffled fraction) -> run``
    (:func:`planned_runs`); ``moved``: the largest change of a logit
    under a one-patch circular shift, in float64, ``{"relative bias": ..,
    "plain ViT": ..}`` (:func:`shift_symmetry`).
    """
    if budget.train["augment"]:
        raise ValueError("the routes' budget must train without augmentation, so that crop and flip is the "
                         "one change of its route")
    found = Evidence("priors")
    cls_relay(found, relay)
    missing = set(planned_runs(budget)) - set(done)
    if missing:
        raise ValueError(f"done lacks {len(missing)} of the chapter's runs, e.g. {sorted(missing)[0]}")
    n, sizes, seeds = budget.route_sizes[-1], budget.train_sizes, budget.seeds
    names = ("CNN", "ViT", *plan.prior_routes(budget))
    grid, _ = plan.locality_grid(budget)
    mask_shares(found, budget, masks.grid_local_mask(grid, grid, radius=1, n_prefix=1))
    kernel_savings(found, {side: cost.global_attention_macs(side * side + 1, WIDTH)
                           / masks.local_attention_macs(side, side, 1, WIDTH, n_prefix=1) for side in (14, 56)})
    data_scarcity(found, budget, {m: seeded(done, "ViT", m, seeds) for m in sizes},
                  done["ViT", sizes[0], seeds[0], 0.0].model.config.num_classes)
    accuracy = {name: seeded(done, name, n, seeds) for name in names}
    routes_against_baselines(found, budget, accuracy)
    at_n = {name: [done[name, n, s, 0.0] for s in seeds] for name in names}
    fits_and_costs(found, budget, {name: seeded(done, name, n, seeds, what="train_accuracy") for name in names},
                   params={name: models.parameter_count(trained[0].model) for name, trained in at_n.items()},
                   step_ms={name: ms_per_step(trained) for name, trained in at_n.items()})
    small, large = plan.locality_sizes(budget)
    fine = {name: np.array([seeded(done, name, m, seeds) for m in (small, large)]) for name in (FINE, LOCAL)}
    hard_locality_on_finer_grid(found, budget, fine)
    convit_study(found, convit_gains())
    gated_against_plain(found, accuracy)
    learned_gates(found, np.stack([done["gated positional", n, s, 0.0].model.gates() for s in seeds]))
    shift_symmetry(found, moved)
    shuffled = {name: seeded(done, name, n, seeds, 1.0) for name in ("CNN", *plan.SHUFFLED_ROUTES)}
    shuffled |= {name: seeded(done, name, small, seeds, 1.0) for name in (FINE, LOCAL)}
    shuffled_images(found, budget, shuffled, accuracy["ViT"], fine[LOCAL][0])
    return found


def cls_relay(found: Evidence, relay: dict) -> None:
    """Whether [CLS] relays a change past a radius-1 mask: two claims. ``relay``: how far the output of
    the patch at (0, 0) of a two-block ViT moves when only the far corner's patch changes,
    ``{"free": .., "sealed": ..}`` ([CLS] open both ways, or patches barred from reading it)."""
    if set(relay) != {"free", "sealed"}:
        raise ValueError(f"relay must hold the changes 'free' and 'sealed', got {sorted(relay)}")
    found.claim("with [CLS] free, the change arrives at the corner", relay["free"] > 0)
    found.claim("with [CLS] sealed, the change never arrives at the corner", relay["sealed"] == 0)


def mask_shares(found: Evidence, budget, mask: np.ndarray) -> None:
    """How much of attention a radius-1 mask keeps, on the testbed's grid and on the finer one: the
    ``prior_testbed_*``, ``prior_mask_*``, ``prior_local_open_fraction`` and ``prior_r2_restricts_from``
    entries, and two claims. ``mask``: ``(N, N)``, the radius-1 mask of the finer grid with [CLS] free,
    True where a query may attend to a key."""
    grid, _ = plan.locality_grid(budget)
    tokens = grid * grid + 1
    if np.shape(mask) != (tokens, tokens):
        raise ValueError(f"mask must be ({tokens}, {tokens}), the {grid} x {grid} grid and [CLS], "
                         f"got shape {np.shape(mask)}")
    allowed = masks.allowed_pairs(grid, grid, 1, 1)
    if mask.sum() != allowed:
        raise ValueError(f"the mask keeps {mask.sum()} pairs where masks.allowed_pairs counts {allowed}")
    testbed = budget.vit["img_size"] // budget.vit["patch_size"]
    testbed_open = masks.allowed_pairs(testbed, testbed, 1, 1) / (testbed**2 + 1) ** 2
    found.number("prior_testbed_grid", testbed)
    found.number("prior_testbed_open_fraction", testbed_open)
    found.number("prior_mask_grid", grid)
    found.number("prior_mask_allowed", allowed)
    found.number("prior_mask_pairs", mask.size)
    found.number("prior_local_open_fraction", mask.sum() / mask.size)
    found.number("prior_mask_allowed_r2", masks.allowed_pairs(grid, grid, 2, 1))
    # "A real restriction", fewer than half of the pairs open (a [CLS] token included), from the smallest
    # grid side where that holds on.
    r2_share = {g: masks.allowed_pairs(g, g, 2, 1) / (g * g + 1) ** 2 for g in range(2, 33)}
    found.number("prior_r2_restricts_from",
                 min(g for g in r2_share if all(r2_share[h] < 0.5 for h in range(g, 33))))
    found.claim("on the testbed's grid the radius-1 mask keeps nearly half of the pairs",
                0.4 < testbed_open < 0.5)
    found.claim("on the finer grid the radius-1 mask keeps at most a quarter of the pairs",
                mask.sum() / mask.size <= 0.25)


def kernel_savings(found: Evidence, ratio: dict) -> None:
    """What a kernel that skips the masked pairs saves on ViT-B's grids: ``prior_ratio_14`` and
    ``prior_ratio_56``, and one claim. ``ratio``: grid side -> dense attention's multiply-adds over
    radius-1 attention's, at ViT-B's width, for sides 14 and 56 at least."""
    if not {14, 56} <= set(ratio):
        raise ValueError(f"ratio must hold the grid sides 14 and 56, got {sorted(ratio)}")
    found.number("prior_ratio_14", ratio[14])
    found.number("prior_ratio_56", ratio[56])
    found.claim("the saving of a local kernel grows with the grid", ratio[56] > ratio[14])


def data_scarcity(found: Evidence, budget, plain_vit: dict, num_classes: int) -> None:
    """Why the routes train at one size: there the plain ViT is well off its floor (the crossover
    chapter's runs at the smallest size) and well below what the largest set gives it, the regime a
    prior is for; above it every route would cost far more steps than this chapter's own runs. The
    ``prior_floor_*``, ``prior_top_*`` and ``prior_larger_factor`` entries, and two claims.

    ``plain_vit``: size -> ``(seeds,)``, the plain ViT's test accuracy at the smallest size, the routes'
    and the largest (at others too, unread); ``num_classes``: the task's classes.
    """
    sizes, n, seeds = budget.train_sizes, budget.route_sizes[-1], budget.seeds
    lacking = {sizes[0], n, sizes[-1]} - set(plain_vit)
    if lacking:
        raise ValueError(f"plain_vit lacks the plain ViT at {sorted(lacking)} images")
    # "well above its floor, well below the largest set's": Welch's t test on the seeds, both ways.
    found.claim("at the routes' size the plain ViT is well above what it scores on the smallest set",
                compare(plain_vit[n], plain_vit[sizes[0]]) == "more")
    found.claim("at the routes' size the plain ViT is well below what it reaches on the largest set",
                compare(plain_vit[n], plain_vit[sizes[-1]]) == "less")
    chance = 1 / num_classes
    found.number("prior_floor_size", sizes[0])
    found.trained("prior_floor_vit", plain_vit[sizes[0]], one_run_sd("ViT", sizes[0]),
                  what=f"test accuracy of the plain ViT on {sizes[0]} images (the crossover chapter's runs)")
    found.number("prior_floor_chance", chance)
    found.verdict("prior_floor_text", "close to chance, a floor from which a gain would say little about a "
                  "route" if plain_vit[sizes[0]].mean() < 2 * chance else "well above chance")
    found.number("prior_top_size", sizes[-1])
    found.trained("prior_top_vit", plain_vit[sizes[-1]], one_run_sd("ViT", sizes[-1]),
                  what=f"test accuracy of the plain ViT on {sizes[-1]:,} images (the crossover chapter's runs)")
    routes = plan.prior_routes(budget)
    larger = [plan.fitted(budget, "vit", m, s, route=route, augment=augment)
              for m in sizes if m > n for s in seeds for route, augment in routes.values()]
    own = sum(c["train"]["steps"] for (name, *_), c in planned_runs(budget).items() if name in routes)
    found.number("prior_larger_factor", (own + sum(c["train"]["steps"] for c in larger)) / own)


def routes_against_baselines(found: Evidence, budget, accuracy: dict) -> None:
    """Each route against the plain ViT, and against the CNN, by a paired t test over the seeds (a seed
    draws the same training images and batches for every model): ``prior_n_routes``, ``prior_size_large``,
    ``prior_<slug>_large`` and the verdicts ``prior_routes_large_text`` and ``prior_summary_large_text``; no
    claim. ``accuracy``: name -> ``(seeds,)``, the CNN, the plain ViT and every route at the routes' size."""
    n, routes = budget.route_sizes[-1], tuple(plan.prior_routes(budget))
    found.number("prior_n_routes", len(routes))
    found.number("prior_size_large", n)
    for name in ("CNN", "ViT", *routes):
        found.trained(f"prior_{SLUG[name]}_large", accuracy[name], one_run_sd(name, n),
                      what=f"test accuracy of the {name} model on {n:,} images")
    versus = {rival: {name: compare(accuracy[name], accuracy[rival], paired=True) for name in routes}
              for rival in ("ViT", "CNN")}
    above = [name for name in routes if versus["ViT"][name] == "more"]
    below = [name for name in routes if versus["ViT"][name] == "less"]
    reach = [name for name in routes if versus["CNN"][name] != "less"]
    # The prose says once what the test resolves: the largest over the routes of the smallest difference
    # it resolves, so that it resolves that much for every one.
    numbers = {rival: [compared_numbers(accuracy[name], accuracy[rival], paired=True) for name in routes]
               for rival in ("ViT", "CNN")}
    resolves = {rival: max(each["resolvable"] for each in numbers[rival]) for rival in numbers}
    found.verdict("prior_routes_large_text", sentence(
        counted(above, "route", "above the plain ViT"),
        counted(below, "route", "below it"),
        counted(reach, "route", "level with the CNN or above it"))
        + f" For every route, {numbers['ViT'][0]['seeds']} paired seeds resolve a difference "
          f"of {resolves['ViT']:.2f} or more from the plain ViT and of {resolves['CNN']:.2f} or more from "
          "the CNN.")
    # The summary's shorter words for the same outcomes.
    found.verdict("prior_summary_large_text", sentence(
        f"at {n:,} images, by a paired t test over the seeds, " + counted(above, "route", "above the plain ViT"),
        counted(below, "route", "below it")))


def fits_and_costs(found: Evidence, budget, fitted: dict, params: dict, step_ms: dict) -> None:
    """How much of its own training set each model fits, scored without augmentation, and what each costs:
    the ``prior_*_train_large``, ``prior_*_fit_text``, ``prior_plain_recipe_fit_*``, ``prior_harder_text``,
    ``prior_<slug>_params`` and ``prior_<slug>_ms`` entries, and one claim.

    ``fitted``: name -> ``(seeds,)``, the training-set accuracy of the CNN, the plain ViT and every route
    at the routes' size; ``params``: name -> parameter count; ``step_ms``: name -> ms per training step.
    """
    n, sd = budget.route_sizes[-1], noise.one_run_sd("priors", "train")
    found.number("prior_augment_passes", plan.AUGMENTED_PASSES)
    for name in ("ViT", *ASKED_MORE):
        found.trained(f"prior_{SLUG[name]}_train_large", fitted[name], sd,
                      what=f"training-set accuracy of the {name} model on {n:,} images")
    # The step rule is the plain ViT's: does every model whose recipe is the plain one fit as it does?
    plain_recipe = [name for name in fitted if name not in ASKED_MORE]
    found.trained("prior_plain_recipe_fit_min", np.min([fitted[name] for name in plain_recipe], axis=0), sd,
                  what="the lowest training-set accuracy of a model trained with the plain recipe, per seed")
    found.verdict("prior_plain_recipe_fit_text", "Every model trained with the plain recipe fits its training set"
                  if min(fitted[name].mean() for name in plain_recipe) >= 0.99
                  else "Not every model trained with the plain recipe fits its training set")
    harder = [name for name in ASKED_MORE
              if found.compared(f"prior_{SLUG[name]}_fit_text", fitted[name], fitted["ViT"], paired=True,
                                **{**FIT, "same": TIED if np.array_equal(fitted[name], fitted["ViT"])
                                   else FIT["same"]}) == "less"]
    found.verdict("prior_harder_text", WHO[harder[0]] if len(harder) == 1 else "both have" if harder
                  else "neither has")
    found.claim("none of the routes changes the model's size much (within 10 %)",
                all(abs(params[name] / params["ViT"] - 1) < 0.1 for name in plan.prior_routes(budget)))
    for name in fitted:
        found.number(f"prior_{SLUG[name]}_params", params[name])
        found.timing(f"prior_{SLUG[name]}_ms", step_ms[name], why="wall-clock time of a training step")


def hard_locality_on_finer_grid(found: Evidence, budget, fine: dict) -> None:
    """Hard locality against the plain ViT on the locality grid: ``prior_fine_*``, ``prior_fine_vit_*`` and
    ``prior_local1_*`` (the shuffled ones aside); no claim. ``fine``: name -> ``(sizes, seeds)``, the test
    accuracy of :data:`FINE` and :data:`LOCAL` at the two sizes of :func:`vitbias.plan.locality_sizes`."""
    sizes, changes = plan.locality_sizes(budget), plan.locality_vit(budget)
    found.number("prior_fine_what", ", ".join(f"{key.replace('_', ' ')} {value}" for key, value in changes.items())
                 if changes else "the testbed's model")
    for end, i in ENDS:
        found.number(f"prior_fine_size_{end}", sizes[i])
        found.trained(f"prior_{SLUG[FINE]}_{end}", fine[FINE][i], one_run_sd(FINE),
                      what=f"test accuracy of the plain ViT on the finer grid, {sizes[i]:,} images")
        found.trained(f"prior_{SLUG[LOCAL]}_{end}", fine[LOCAL][i], one_run_sd(LOCAL),
                      what=f"test accuracy of the ViT with hard locality on the finer grid, {sizes[i]:,} images")
        found.compared(f"prior_{SLUG[LOCAL]}_{end}_text", fine[LOCAL][i], fine[FINE][i], paired=True, **SIDE)
    # The summary's shorter words for the larger size's outcome.
    found.compared(f"prior_{SLUG[LOCAL]}_summary_text", fine[LOCAL][-1], fine[FINE][-1], paired=True,
                   more="above the plain ViT on the same grid", less="below the plain ViT on the same grid",
                   same="no differently from the plain ViT on the same grid, as far as {seeds} paired seeds "
                        "can tell")


def convit_study(found: Evidence, gain: dict) -> None:
    """ConViT's controlled study on class-balanced subsets of ImageNet-1k (Table 2): the
    ``prior_convit_*`` and ``prior_deit_epochs`` entries, and two claims. ``gain``: share of ImageNet-1k
    -> ConViT-S's relative gain in top-1 over DeiT-S, in %, for every share of the table
    (:func:`convit_gains`)."""
    table, gap = literature.CONVIT_SAMPLE_EFFICIENCY, literature.CONVIT_SAMPLE_EFFICIENCY_GAP
    fractions = sorted(table)
    if sorted(gain) != fractions:
        raise ValueError(f"gain must hold ConViT's shares {fractions}, got {sorted(gain)}")
    # The table rounds its gap column from unrounded accuracies: the gain computed from the two accuracy
    # columns agrees with it to a point.
    if any(abs(gain[f] - gap[f].value) > 1.0 for f in fractions):
        raise ValueError("ConViT's gains computed from its accuracies differ from its gap column by over a point")
    smallest, full, epochs = fractions[0], fractions[-1], literature.DEIT_EPOCHS.value
    found.claim("ConViT's largest share is all of ImageNet-1k", full == 1.0)
    found.claim("ConViT's gain falls with every added share of ImageNet-1k",
                all(gain[a] > gain[b] for a, b in zip(fractions, fractions[1:])))
    found.number("prior_convit_small_share", smallest * 100)
    found.number("prior_convit_full_share", full * 100)
    found.number("prior_deit_epochs", epochs)
    found.number("prior_convit_small_epochs", epochs / smallest)
    found.number("prior_convit_deit_small", table[smallest]["DeiT-S"].value)
    found.number("prior_convit_convit_small", table[smallest]["ConViT-S"].value)
    found.number("prior_convit_gain_small", gain[smallest])
    found.number("prior_convit_gain_full", gain[full])
    found.number("prior_convit_deit_full", table[full]["DeiT-S"].value)
    found.number("prior_convit_convit_full", table[full]["ConViT-S"].value)
    found.number("prior_convit_small_images", smallest * literature.PRETRAINING_IMAGES["ImageNet-1k"].value)


def gated_against_plain(found: Evidence, accuracy: dict) -> None:
    """The testbed's side of ConViT's gain: the gated ViT against the plain ViT, and the conv stem against
    the gated ViT, by a paired t test over the seeds: the verdicts ``prior_gated_vs_vit_large``,
    ``prior_gated_gain_text`` and ``prior_stem_vs_gated_large``; no claim. ``accuracy``: name ->
    ``(seeds,)``, at the routes' size."""
    gated, vit = accuracy["gated positional"], accuracy["ViT"]
    found.compared("prior_gated_vs_vit_large", gated, vit, paired=True, **SIDE)
    # ConViT's gain is reproduced when the gated ViT is above the plain ViT where data is scarce for it.
    found.compared("prior_gated_gain_text", gated, vit, paired=True,
                   more="reproduces", less="does not reproduce", same="does not reproduce")
    found.compared("prior_stem_vs_gated_large", accuracy["conv stem"], gated, paired=True, **SIDE)


def gate_sd():
    """One run's sd of a layer's mean gate, measured from the glued gates over the seeds and both kernel
    sets (``python -m tools.booktools noise --glued --chapter priors``)."""
    return noise.one_run_sd("priors", "gate")


def learned_gates(found: Evidence, gates: np.ndarray) -> None:
    """What the gates learned: the ``prior_gate_*`` entries; no claim. ``gates``: ``(seeds, layers, heads)``,
    sigma(lambda) of every head of the gated ViT."""
    if gates.ndim != 3 or not gates.shape[1]:
        raise ValueError(f"gates must be (seeds, layers, heads) with a layer at least, got shape {gates.shape}")
    per_seed, sd = gates.mean(axis=2), gate_sd()  # (seeds, layers)
    found.number("prior_gate_init", 1 / (1 + np.exp(-GATE_INIT)))
    found.trained("prior_gate_first", per_seed[:, 0], sd,
                  what="positional share sigma(lambda) of the first layer's gates, mean over heads")
    found.trained("prior_gate_last", per_seed[:, -1], sd,
                  what="positional share sigma(lambda) of the last layer's gates, mean over heads")
    found.compared("prior_gate_text", per_seed[:, 0], per_seed[:, -1], paired=True, **SIDE)  # one model, two layers
    found.number("prior_gate_layers", gates.shape[1])


def shift_sd():
    """One plain ViT's largest logit change under a one-patch shift: its sd, measured from the glued
    changes over the seeds and both kernel sets (``python -m tools.booktools noise --glued --chapter
    priors``). It is heavy-tailed: one seed's model can move twice as far as another's."""
    return noise.one_run_sd("priors", "shift")


def shift_symmetry(found: Evidence, moved: dict) -> None:
    """The relative bias's symmetry: ``prior_shift_relative`` and ``prior_shift_plain``, and one claim.
    ``moved``: the largest change of a logit under a one-patch circular shift of random images, in float64,
    of each seed's relative-bias model and plain ViT, ``{"relative bias": (seeds,), "plain ViT":
    (seeds,)}``."""
    if set(moved) != {"relative bias", "plain ViT"}:
        raise ValueError(f"moved must hold the changes 'relative bias' and 'plain ViT', got {sorted(moved)}")
    relative, plain = (np.atleast_1d(np.asarray(moved[name], dtype=float)) for name in ("relative bias", "plain ViT"))
    if relative.ndim != 1 or relative.shape != plain.shape:
        raise ValueError(f"moved must hold one change per seed for both models, got {relative.shape} and "
                         f"{plain.shape}")
    found.rounding("prior_shift_relative", float(relative.max()), 1e-9,
                   why="float64 rounding of an exactly invariant model, the largest over the seeds")
    found.trained("prior_shift_plain", plain, shift_sd(),
                  what="largest change of a logit of a trained plain ViT under a one-patch circular shift")
    found.claim("under a one-patch shift the plain ViT's logits move over a thousand times as far as the "
                "relative-bias model's, in every seed",
                bool(plain.min() > 1e3 * relative.max()))


def shuffled_images(found: Evidence, budget, shuffled: dict, vit: np.ndarray, local: np.ndarray) -> None:
    """The routes where the grid prior is false: the ``prior_shuffled_*`` entries and
    ``prior_local1_cost_text``; no claim. ``shuffled``: name -> ``(seeds,)``, test accuracy on
    shuffled images of the CNN and :data:`vitbias.plan.SHUFFLED_ROUTES` at the routes' size, and of
    :data:`FINE` and :data:`LOCAL` at the smaller size of the finer grid; ``vit``, ``local``: ``(seeds,)``,
    the plain ViT at the routes' size and hard locality at that smaller size, on ordered images."""
    for name, values in shuffled.items():
        found.trained(f"prior_shuffled_{SLUG[name]}", values, one_run_sd(name, budget.route_sizes[-1]),
                      what=f"test accuracy of the {name} model on shuffled images")
    # Each route against the plain ViT on shuffled images of its grid: on the testbed's grid the ordered
    # runs, which the crossover chapter's theorem makes equal in distribution; on the finer grid the
    # shuffled runs.
    versus = {**{name: vit for name in plan.SHUFFLED_ROUTES}, LOCAL: shuffled[FINE]}
    on_shuffled = {name: found.compared(f"prior_shuffled_{SLUG[name]}_text", shuffled[name], baseline,
                                        paired=True, **SIDE) for name, baseline in versus.items()}
    helped = [name for name in versus if on_shuffled[name] == "more"]
    hurt = [name for name in versus if on_shuffled[name] == "less"]
    found.verdict("prior_shuffled_sides_text", sentence(
        "on shuffled images, where the grid prior is false, "
        + counted(helped, "route", "above the plain ViT on its grid"),
        counted(hurt, "route", "below it")))
    found.compared("prior_local1_cost_text", shuffled[LOCAL], local, paired=True, **SIDE)


def planned_runs(budget) -> dict:
    """``(name, n, seed, shuffled fraction)``: every route of :func:`vitbias.plan.prior_routes` at the larger of
    ``budget.route_sizes``, where the plain ViT is far off its floor and still far below what more
    data gives it (the data-scarce regime a prior is for), every model under the rule by which it fits
    its training set; the CNN and the plain ViT at every size of the testbed (the crossover chapter's
    runs), the curves a route's accuracy is read against; on shuffled images, at the routes' size, the
    CNN and :data:`vitbias.plan.SHUFFLED_ROUTES` (the plain ViT on shuffled images is, by the crossover chapter's
    theorem, distributed as on ordered ones); on the locality grid, at :func:`vitbias.plan.locality_sizes` and
    shuffled at the smaller, the plain ViT (``"ViT, finer grid"``, the locality chapter's runs) and hard
    locality (:data:`vitbias.plan.LOCAL_ROUTE_NAME`)."""
    n, seeds = budget.route_sizes[-1], budget.seeds
    wanted = {}
    for size in budget.train_sizes:
        for s in seeds:
            wanted["CNN", size, s, 0.0] = plan.fitted(budget, "cnn", size, s)
            wanted["ViT", size, s, 0.0] = plan.fitted(budget, "vit", size, s)
    for s in seeds:
        wanted["CNN", n, s, 1.0] = plan.fitted(budget, "cnn", n, s, permute=1.0)
        for name, (route, augment) in plan.prior_routes(budget).items():
            for p in ((0.0, 1.0) if name in plan.SHUFFLED_ROUTES else (0.0,)):
                wanted[name, n, s, p] = plan.fitted(budget, "vit", n, s, route=route, augment=augment,
                                                    permute=p)
    small, large = plan.locality_sizes(budget)
    for size in (small, large):
        for s in seeds:
            for p in ((0.0, 1.0) if size == small else (0.0,)):
                wanted["ViT, finer grid", size, s, p] = plan.on_locality_grid(budget, size, s, permute=p)
                wanted[plan.LOCAL_ROUTE_NAME, size, s, p] = plan.on_locality_grid(
                    budget, size, s, route=plan.LOCAL_ROUTE, permute=p)
    return wanted


def noise_groups(budget) -> dict[str, dict]:
    """The priors chapter's own runs by kind of number: ``"routes"``, the test accuracy of every route
    of :func:`vitbias.plan.prior_routes` (one kind, so that its sd is the largest over many groups, not
    one group's three seeds); ``"finer grid"``, the plain ViT's on the locality grid, and ``"hard
    locality"``, the hard-locality route's there; ``"train"``, the training accuracy of every model of
    the testbed's grid at the routes' size. The plain CNN and ViT are the crossover chapter's runs,
    measured there; their curves at the other sizes are that chapter's numbers."""
    routes, size = set(plan.prior_routes(budget)), budget.route_sizes[-1]
    kinds: dict[str, dict] = {}
    for (name, n, _seed, shuffled), config in planned_runs(budget).items():
        group = (name, n, shuffled)
        if name in ("CNN", "ViT") and n != size:
            continue
        if name in ("ViT, finer grid", plan.LOCAL_ROUTE_NAME):
            kind = "finer grid" if name == "ViT, finer grid" else "hard locality"
            kinds.setdefault(kind, {}).setdefault(group, []).append(config)
            continue
        if name in routes:
            kinds.setdefault("routes", {}).setdefault(group, []).append(config)
        kinds.setdefault("train", {}).setdefault(group, []).append(config)
    return kinds
