"""The locality chapter: how far the heads of ViTs trained on a finer grid look, how alike their
learned position vectors are, and how well attention ranks the patches a prediction depends on.

The page builds its :class:`~vitbias.evidence.Evidence` section by section: each section function
below adds the ``loc_*`` entries and the claims of one section of the page, called right after the
cell that computes its input; :func:`measure` composes them in the page's order.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .. import literature as lit
from .. import locality, noise, plan, runs, vit
from ..evidence import Evidence, band, compare

FIELD_VIT = vit.VIT_B_16  # the receptive fields' grid: ViT-B/16 at 224 px, 14 by 14 patches
LOCAL = 0.5  # a head nearer than this fraction of uniform attention's distance is a local filter
MAPS_IMAGES = 200  # the test images whose attention maps are kept (the other convention, the rollout)
READINGS = ("last layer's attention", "rollout")  # the attention maps ranked against the gradients
WHAT = "mean attention distance of the ViT on the finer grid, as a fraction of uniform attention"

# The summary's shorter words for the outcomes of the first layer against uniform and of the share.
FIRST_SUMMARY = {"more": "farther than uniform attention", "less": "nearer than uniform attention",
                 "same": "about as far as uniform attention"}
SHARE_SUMMARY = {"more": "above zero", "less": "below zero", "none": "zero in every run",
                 "same": "not distinguishable from zero"}
# The ViT paper's hybrids have less local early heads: "more" is its effect.
STEM_PAPER = {"more": "the same effect", "less": "the opposite effect",
              "same": "no measurable effect at this scale"}
POSITIONS_READING = {"more": "the grid was recovered from data", "less": "the table holds no grid",
                     "same": "at this scale the grid was not recovered"}
POSITIONS_SUMMARY = {"more": "more alike than far ones", "less": "less alike than far ones",
                     "same": "no more alike than far ones"}
# (outcome of the positions, whether the share of local filters is above zero) -> the sentence.
GRID_BEFORE_HEADS = {
    ("more", False): "So the table finds the grid before the heads use it: the position vectors know which "
                     "patches are neighbours while no head looks near.",
    ("more", True): "The table finds the grid, and some heads use it to look near.",
}
NO_GRID = "At this scale neither the table nor the heads show the grid."
RANK_LEVEL = {"far": "far from a faithful", "partial": "only a partial", "close": "close to a faithful"}


def _grid(budget) -> tuple[int, int, float]:
    """``(grid side, patch size, uniform attention's distance in px)`` of the locality grid."""
    grid, P = plan.locality_grid(budget)
    if grid < plan.MIN_LOCALITY_GRID:
        raise ValueError(f"the locality grid has {grid} patches a side, fewer than {plan.MIN_LOCALITY_GRID}")
    return grid, P, locality.uniform_attention_distance(grid, grid, P)


def _by_size(budget, name: str, samples: dict, ndim: int) -> dict:
    """``samples`` (size -> one array per seed, ``ndim`` axes with the seeds first), checked to hold
    both sizes of :func:`vitbias.plan.locality_sizes` and every seed of the budget."""
    sizes = set(plan.locality_sizes(budget))
    if set(samples) != sizes:
        raise ValueError(f"{name} must hold the sizes {sorted(sizes)}, got {sorted(samples)}")
    checked = {n: np.asarray(samples[n], dtype=float) for n in samples}
    for n, values in checked.items():
        if values.ndim != ndim or len(values) != len(budget.seeds):
            raise ValueError(f"{name} at {n} must have {ndim} axes, one row per seed "
                             f"({len(budget.seeds)}), got shape {values.shape}")
    return checked


def accuracies(budget, trained: dict) -> tuple[dict, dict]:
    """The plain ViTs' test accuracy and the share of their training set they fit: size -> ``(seeds,)``."""
    sizes = plan.locality_sizes(budget)
    return ({n: np.array([trained[n, s, 0.0].accuracy for s in budget.seeds]) for n in sizes},
            {n: np.array([trained[n, s, 0.0].train_accuracy for s in budget.seeds]) for n in sizes})


def head_summaries(budget, per_size: dict) -> dict:
    """Each seed's first layer, last layer and most local head, as fractions of uniform attention, and
    its share of local filters: ``{"first" | "last" | "nearest" | "local share": {size: (seeds,)}}``.

    ``per_size``: size -> ``(seeds, layers, heads)``, every head's mean attention distance in px.
    """
    fraction = {n: d / _grid(budget)[2] for n, d in _by_size(budget, "per_size", per_size, 3).items()}
    return {"first": {n: f[:, 0].mean(axis=1) for n, f in fraction.items()},
            "last": {n: f[:, -1].mean(axis=1) for n, f in fraction.items()},
            "nearest": {n: f.min(axis=(1, 2)) for n, f in fraction.items()},
            "local share": {n: (f < LOCAL).mean(axis=(1, 2)) for n, f in fraction.items()}}


def spread_rows(budget, trained: dict, per_size: dict) -> dict:
    """The rows of the table of the trained ViTs, quantity -> {size: (seeds,)}, for
    :func:`vitbias.book.spread_table`."""
    accuracy, fitted = accuracies(budget, trained)
    heads = head_summaries(budget, per_size)
    return {"test accuracy": accuracy, "training images fitted": fitted,
            "first layer, fraction of uniform": heads["first"],
            "last layer, fraction of uniform": heads["last"],
            "most local head, fraction of uniform": heads["nearest"],
            "share of heads that are local filters": heads["local share"]}


def kept_maps(budget, trained: dict, test_set) -> dict:
    """The attention maps of the larger set's plain ViTs on the first :data:`MAPS_IMAGES` test images:
    seed -> ``(images, layers, heads, N, N)``."""
    large = plan.locality_sizes(budget)[1]
    return {s: locality.vit_attention(trained[large, s, 0.0].model, test_set, count=MAPS_IMAGES)
            for s in budget.seeds}


def conv_fields(found: Evidence, conv) -> None:
    """Where stacked 3 by 3 convolutions can look on the ViT-B/16 grid: ``loc_grid``, ``loc_cells``,
    ``loc_conv_*``, ``loc_uniform_mad_px``, ``loc_lab_uniform_px`` and the claim that uniform attention's
    distance rounds to the lab's. ``conv``: ``(layers,)``, the patches one patch sees after each layer,
    from layer 1."""
    grid = FIELD_VIT.img_size // FIELD_VIT.patch_size
    conv = np.asarray(conv)
    if conv.ndim != 1 or len(conv) < 3 or not np.any(conv == grid * grid):
        raise ValueError(f"conv must give the field of at least 3 layers on the {grid} x {grid} grid, "
                         f"reaching all {grid * grid} patches, got {conv!r}")
    found.number("loc_grid", grid)
    found.number("loc_cells", grid * grid)
    found.number("loc_conv_1", conv[0])
    found.number("loc_conv_3", conv[2])
    found.number("loc_conv_whole_layer", int(np.argmax(conv == grid * grid)) + 1)
    uniform = locality.uniform_attention_distance(grid, grid, FIELD_VIT.patch_size)
    found.number("loc_uniform_mad_px", uniform)
    found.number("loc_lab_uniform_px", lit.LAB_UNIFORM_DISTANCE.value)
    # The lab prints the uniform distance rounded to whole pixels: ours must round to it.
    found.claim("uniform attention's distance on the ViT-B/16 grid rounds to the lab's",
                round(uniform) == lit.LAB_UNIFORM_DISTANCE.value)


def finer_grid(found: Evidence, budget, trained: dict, images: int) -> None:
    """The testbed's grid, against which the chapter's finer grid and its ViT are set: ``loc_testbed_*``,
    ``loc_grid_patches``, ``loc_patch_px``, ``loc_tokens``, ``loc_model_text``, ``loc_params``,
    ``loc_uniform_px``, ``loc_n_images`` (``images``, the test images of every distance),
    ``loc_n_seeds`` and the claim that the ViT keeps the testbed's width and heads. ``trained``: the
    runs of :func:`planned_runs`."""
    grid, P, uniform = _grid(budget)
    testbed = budget.vit
    testbed_grid = testbed["img_size"] // testbed["patch_size"]
    found.number("loc_testbed_grid", testbed_grid)
    found.number("loc_testbed_patch", testbed["patch_size"])
    found.number("loc_testbed_far_cells", testbed_grid - 1)
    testbed_uniform = locality.uniform_attention_distance(testbed_grid, testbed_grid, testbed["patch_size"])
    found.number("loc_testbed_uniform_px", testbed_uniform)
    found.number("loc_testbed_uniform_cells", testbed_uniform / testbed["patch_size"])
    model = trained[plan.locality_sizes(budget)[1], budget.seeds[0], 0.0].model
    found.number("loc_grid_patches", grid)
    found.number("loc_patch_px", P)
    found.number("loc_tokens", grid * grid + model.config.num_prefix_tokens)
    depth, testbed_depth = model.config.depth, testbed["depth"]
    # Chosen by the profile's locality grid (vitbias.plan.LOCALITY_VITS), not by training: compared exactly.
    found.number("loc_model_text", f"It keeps the testbed's width and heads, in {depth} blocks instead of its "
                 f"{testbed_depth}: on {(grid / testbed_grid) ** 2:.0f} times the tokens a block costs several "
                 f"times as much, and fewer blocks keep the build's training time" if depth < testbed_depth else
                 "It is the testbed's model in every other respect")
    found.claim("the ViT on the finer grid keeps the testbed's width and heads",
                model.config.num_heads == testbed["num_heads"] and model.config.embed_dim == testbed["embed_dim"])
    found.number("loc_params", sum(p.numel() for p in model.parameters()))
    found.number("loc_uniform_px", uniform)
    found.number("loc_n_images", images)
    found.number("loc_n_seeds", len(budget.seeds))


def trained_heads(found: Evidence, budget, trained: dict, per_size: dict) -> tuple[dict, str]:
    """How far the plain ViTs' heads look at both sizes: ``loc_size_*``, ``loc_acc_*``, ``loc_fit_*``,
    ``loc_first_*``, ``loc_last_*``, ``loc_min_head_*``, ``loc_local_share_*`` and their sentences.

    ``per_size``: size -> ``(seeds, layers, heads)``, every head's mean attention distance in px.
    Returns their :func:`head_summaries` and the outcome of the share of local filters against zero
    (``"none"`` when no head of any run is one), for :func:`baselines`, :func:`stem_heads`,
    :func:`shuffled_heads` and :func:`learned_positions`.
    """
    small, large = plan.locality_sizes(budget)
    accuracy, fitted = accuracies(budget, trained)
    heads = head_summaries(budget, per_size)
    heads_per_run = np.asarray(per_size[large])[0].size
    first, last, nearest, share = (heads[k] for k in ("first", "last", "nearest", "local share"))
    # One run's sd of an accuracy is the finer grid's, measured in the priors chapter's runs; the share
    # of local filters moves in steps of one head of a run: its sd is taken as one such step.
    one_run_acc, one_run_frac = noise.one_run_sd("priors", "finer grid"), noise.one_run_sd("locality", "distance")
    for tag, n in (("small", small), ("large", large)):
        found.number(f"loc_size_{tag}", n)
        found.trained(f"loc_acc_{tag}", accuracy[n], one_run_acc, what="test accuracy of the ViT on the finer grid")
        found.trained(f"loc_fit_{tag}", fitted[n], one_run_acc, what="share of its training set the ViT on the "
                      "finer grid fits")
        found.trained(f"loc_first_{tag}", first[n], one_run_frac, what=f"{WHAT}, first layer")
        found.trained(f"loc_last_{tag}", last[n], one_run_frac, what=f"{WHAT}, last layer")
        found.trained(f"loc_min_head_{tag}", nearest[n], one_run_frac, what=f"{WHAT}, each run's most local head")
        found.trained(f"loc_local_share_{tag}", share[n], 1 / heads_per_run,
                      what="share of the heads of the ViT on the finer grid nearer than half of uniform attention")
    first_outcome = found.compared(
        "loc_first_vs_uniform_text", first[large], 1.0, more="farther than uniform attention",
        less="nearer than uniform attention",
        same="too close to uniform attention for {seeds} seeds to tell apart ({apart:.2f} from it, where they "
             "resolve {resolvable:.2f})")
    found.compared("loc_local_head_text", nearest[large], LOCAL, less="the most local head is one",
                   more="not even the most local head is one",
                   same="{seeds} seeds cannot tell whether the most local head is one ({apart:.2f} from half of "
                        "uniform, where they resolve {resolvable:.2f})")
    if share[large].any():
        share_outcome = found.compared(
            "loc_share_text", share[large], 0.0, more="more than {seeds} seeds could show by chance",
            less="below zero", same="a share {seeds} seeds cannot tell from zero (they resolve {resolvable:.2f})")
    else:  # no spread to test when no head of any run is a local filter: say so instead
        share_outcome = "none"
        found.verdict("loc_share_text", "since no head of any seed's run is one")
    found.compared("loc_data_text", first[large], first[small], less="nearer with more data",
                   more="farther with more data",
                   same="about as far with more data ({apart:.2f} apart, where {seeds} seeds a size resolve "
                        "{resolvable:.2f})")
    found.compared("loc_depth_text", last[large], first[large], paired=True, more="farther than its first",
                   less="nearer than its first",
                   same="as far as its first ({apart:.2f} apart, where {seeds} paired seeds resolve "
                        "{resolvable:.2f})")
    found.verdict("loc_first_summary_text", FIRST_SUMMARY[first_outcome])
    found.verdict("loc_share_summary_text", SHARE_SUMMARY[share_outcome])
    return heads, share_outcome


def cls_convention(found: Evidence, budget, trained: dict, maps: dict) -> None:
    """The first layer's distance with the weight on [CLS] counted as distance zero instead of dropped,
    ``loc_first_large_plain``, and the claim that it is lower; ``maps``: :func:`kept_maps`, seed ->
    ``(images, layers, heads, N, N)``."""
    grid, P, uniform = _grid(budget)
    if set(maps) != set(budget.seeds) or any(np.ndim(m) != 5 for m in maps.values()):
        raise ValueError(f"maps must hold (images, layers, heads, N, N) for each seed {budget.seeds}")
    n_prefix = trained[plan.locality_sizes(budget)[1], budget.seeds[0], 0.0].model.config.num_prefix_tokens
    kept = np.array([locality.mean_attention_distance(maps[s][:, 0], grid, grid, P, n_prefix).mean()
                     for s in budget.seeds]) / uniform
    dropped = np.array([locality.mean_attention_distance(maps[s][:, 0], grid, grid, P, n_prefix,
                                                         renormalise=False).mean() for s in budget.seeds]) / uniform
    # It moves with the weight a run puts on [CLS], far more from seed to seed: a kind of its own.
    found.trained("loc_first_large_plain", dropped, noise.one_run_sd("locality", "distance, prefix weight dropped"),
                  what=f"{WHAT}, first layer, [CLS] at distance 0, {len(maps[budget.seeds[0]])} images")
    found.claim("counting the weight on [CLS] as distance zero lowers the first layer's distance",
                np.all(dropped <= kept))


def baselines(found: Evidence, budget, trained: dict, test_set, first_large, images: int) -> np.ndarray:
    """The larger set's first layer against its initial weights, its own patch left out, and its weight on
    the 8 patches around the query, over ``images`` test images: ``loc_init_*``, ``loc_others_*`` and
    ``loc_near_first``, ``loc_near_uniform``, ``loc_near_text``. ``first_large``: ``(seeds,)``, the
    trained first layer's distance as a fraction of uniform (:func:`trained_heads`). Returns the first
    layer's distance at initialisation, ``(seeds,)``, a fraction of uniform attention."""
    grid, P, uniform = _grid(budget)
    first_large = np.asarray(first_large, dtype=float)
    if first_large.shape != (len(budget.seeds),):
        raise ValueError(f"first_large must hold one distance per seed ({len(budget.seeds)}), "
                         f"got shape {first_large.shape}")
    large = plan.locality_sizes(budget)[1]
    plain_runs = [trained[large, s, 0.0] for s in budget.seeds]

    def first_layer(measured, models):
        return np.array([measured(m, test_set, count=images)[0].mean() for m in models])

    # Before training: each run's initial weights, drawn from its seed.
    initial = [runs.seeded_model(run.config["model"], run.config["train"]["seed"]) for run in plain_runs]
    plain_models = [run.model for run in plain_runs]
    init_first = first_layer(locality.distance_by_layer, initial) / uniform
    uniform_others = locality.uniform_attention_distance(grid, grid, P, exclude_self=True)
    others_first = first_layer(partial(locality.distance_by_layer, exclude_self=True), plain_models) / uniform_others
    near_first = first_layer(locality.neighbour_weight_by_layer, plain_models)
    near_uniform = locality.uniform_neighbour_weight(grid, grid)
    # Initial weights come from fixed seeds on any CPU: only the forward pass's rounding moves them.
    found.number("loc_init_first", float(init_first.mean()), abs=1e-3,
                 why="first layer's distance at initialisation, a fraction of uniform: weights drawn from fixed seeds")
    found.number("loc_others_uniform_px", uniform_others)
    found.number("loc_near_uniform", near_uniform)
    found.trained("loc_others_first", others_first, noise.one_run_sd("locality", "distance"),
                  what=f"{WHAT}, first layer, each query's own patch left out")
    found.trained("loc_near_first", near_first, noise.one_run_sd("locality", "neighbour weight"),
                  what="weight of the first layer of the ViT on the finer grid on the 8 patches around the query")
    found.compared("loc_init_text", first_large, init_first, paired=True, more="farther than where it began",
                   less="nearer than where it began",
                   same="about where it began ({apart:.2f} apart, where {seeds} paired seeds resolve "
                        "{resolvable:.2f})")
    found.compared("loc_others_text", others_first, 1.0, more="farther than uniform", less="nearer than uniform",
                   same="too close to uniform for {seeds} seeds to tell apart ({apart:.2f} from it, where they "
                        "resolve {resolvable:.2f})")
    found.compared("loc_near_text", near_first, near_uniform, more="more than uniform attention would",
                   less="less than uniform attention would",
                   same="about what uniform attention would ({apart:.2f} apart, where {seeds} seeds resolve "
                        "{resolvable:.2f})")
    return init_first


def lab_distances(found: Evidence) -> None:
    """The lab's pretrained ViT-Ti/16: its heads' distances in layers 1 and 12, in px (``loc_lab_first_*``,
    ``loc_lab_last_*``), and the claims that one first-layer head is a local filter and every head of
    layer 12 looks farther than uniform attention."""
    for i, (head_first, head_last) in enumerate(zip(lit.LAB_DISTANCE_FIRST, lit.LAB_DISTANCE_LAST)):
        found.number(f"loc_lab_first_{i}", head_first.value)
        found.number(f"loc_lab_last_{i}", head_last.value)
    uniform = lit.LAB_UNIFORM_DISTANCE.value
    found.claim("one of the lab's first-layer heads is a local filter",
                min(h.value for h in lit.LAB_DISTANCE_FIRST) < uniform / 2)
    found.claim("every head of the lab's layer 12 looks farther than uniform attention",
                min(h.value for h in lit.LAB_DISTANCE_LAST) > uniform)


def stem_heads(found: Evidence, budget, trained: dict, stem, first_small) -> None:
    """The ViT with a convolutional stem against the plain ViT, both on the smaller set: ``loc_stem_*``.
    ``stem``: ``(seeds, layers, heads)``, its heads' distances in px; ``first_small``: ``(seeds,)``, the
    plain ViT's first layer as a fraction of uniform (:func:`trained_heads`)."""
    stem = np.asarray(stem, dtype=float)
    if stem.ndim != 3 or len(stem) != len(budget.seeds):
        raise ValueError(f"stem must be (seeds, layers, heads) with {len(budget.seeds)} seeds, got {stem.shape}")
    uniform = _grid(budget)[2]
    accuracy_small = accuracies(budget, trained)[0][plan.locality_sizes(budget)[0]]
    one_run_frac = noise.one_run_sd("locality", "distance")
    stem_first = stem[:, 0].mean(axis=1) / uniform  # each seed's first layer
    stem_accuracy = np.array([trained["stem", s].accuracy for s in budget.seeds])
    found.trained("loc_stem_acc", stem_accuracy, noise.one_run_sd("priors", "finer grid"),
                  what="test accuracy of the ViT with a stem, finer grid")
    found.trained("loc_stem_first", stem_first, one_run_frac, what=f"{WHAT}, convolutional stem, first layer")
    found.trained("loc_stem_last", stem[:, -1].mean(axis=1) / uniform, one_run_frac,
                  what=f"{WHAT}, convolutional stem, last layer")
    outcome = found.compared("loc_stem_text", stem_first, first_small, more="farther", less="nearer",
                             same="about as far ({apart:.2f} apart, where {seeds} seeds a side resolve "
                                  "{resolvable:.2f})")
    found.verdict("loc_stem_paper_text", STEM_PAPER[outcome])
    found.compared("loc_stem_acc_text", stem_accuracy, accuracy_small, more="a gain the seeds resolve",
                   less="a loss the seeds resolve",
                   same="a difference of {apart:.2f}, less than the {resolvable:.2f} that {seeds} seeds a side "
                        "resolve")


def shuffled_heads(found: Evidence, budget, shuffled: dict, first_small, init_first) -> None:
    """The first layer of the ViT trained on shuffled images, read in either grid, and the theorem's
    equality with the plain ViT's: ``loc_shuffled_*`` and ``loc_theorem_*``. ``shuffled``:
    ``{"shuffled grid" | "original grid": (seeds,)}``, fractions of uniform attention; ``first_small``
    (:func:`trained_heads`) and ``init_first`` (:func:`baselines`): ``(seeds,)``, the same."""
    if set(shuffled) != {"shuffled grid", "original grid"}:
        raise ValueError(f"shuffled must hold 'shuffled grid' and 'original grid', got {sorted(shuffled)}")
    in_shuffled, in_original = shuffled["shuffled grid"], shuffled["original grid"]
    one_run_frac = noise.one_run_sd("locality", "distance")
    what = f"{WHAT}, first layer, trained on shuffled images, measured in the"
    found.trained("loc_shuffled_in_shuffled", in_shuffled, one_run_frac, what=f"{what} shuffled grid")
    found.trained("loc_shuffled_in_original", in_original, one_run_frac, what=f"{what} original grid")
    found.compared("loc_shuffled_text", in_original, in_shuffled,
                   less="nearer in the original grid than in the shuffled one it was trained on",
                   more="nearer in the shuffled grid it was trained on than in the original one",
                   same="as near in one grid as in the other ({apart:.2f} apart, where {seeds} seeds a side "
                        "resolve {resolvable:.2f})")
    # The theorem: read in the original grid, it is distributed as the plain ViT. An equality, so an
    # equivalence test. Its margin is set by what the page contrasts it with: the locality the plain ViT
    # learned on the same set, from where its first layer began (the same initial weights at either
    # size: a seed draws them) to where it ended. "The same locality" must mean within a quarter of
    # that, so that a ViT with half the locality could not pass.
    learned = float(init_first.mean() - first_small.mean())
    margin = float(np.floor(1000 * learned / 4) / 1000)
    found.number("loc_theorem_learned", learned, abs=band(one_run_frac, len(budget.seeds)),
                 why="initial minus trained first-layer distance: a trained mean's band")
    found.number("loc_theorem_margin", margin, abs=band(one_run_frac, len(budget.seeds)) / 4,
                 why="a quarter of loc_theorem_learned, rounded down")
    # Paired: a seed draws the same training images (rearranged) and the same initial weights for both.
    found.equivalent("loc_theorem_text", in_original, first_small, margin, contrast=learned, paired=True,
                     equal="shows that they do",
                     unresolved="cannot show it: these seeds show agreement only within {shown:.3f}")


def learned_positions(found: Evidence, budget, positions: dict, share_outcome: str) -> None:
    """How alike the learned position vectors of neighbouring and of far patches are, and the lab's:
    ``loc_near_*``, ``loc_far_*``, ``loc_gap_*``, ``loc_lab_*`` of positions, ``loc_positions_*``,
    ``loc_grid_before_heads_text`` and the claims on the lab's far threshold and position table.
    ``positions``: ``{"neighbours" | "far": {size: (seeds,)}}``, mean cosine similarities;
    ``share_outcome``: the share of local filters' outcome from :func:`trained_heads`."""
    if set(positions) != {"neighbours", "far"}:
        raise ValueError(f"positions must hold 'neighbours' and 'far', got {sorted(positions)}")
    near = _by_size(budget, "positions['neighbours']", positions["neighbours"], 1)
    far = _by_size(budget, "positions['far']", positions["far"], 1)
    small, large = plan.locality_sizes(budget)
    # One run's sds of a mean cosine similarity of position vectors and of the neighbours' minus the far
    # patches', measured over seeds and both kernel sets (vitbias.noise).
    one_run_cos, one_run_gap = noise.one_run_sd("locality", "cosine"), noise.one_run_sd("locality", "cosine gap")
    gap = {n: near[n] - far[n] for n in near}
    for tag, n in (("small", small), ("large", large)):
        found.trained(f"loc_near_{tag}", near[n], one_run_cos, what="cosine similarity of the position "
                      "vectors of a patch's 4 neighbours, ViT on the finer grid")
        found.trained(f"loc_far_{tag}", far[n], one_run_cos, what="cosine similarity of the position "
                      "vectors of patches half the grid apart or more, ViT on the finer grid")
        found.trained(f"loc_gap_{tag}", gap[n], one_run_gap, what="neighbours' minus far patches' cosine "
                      "similarity of position vectors, ViT on the finer grid")
    found.number("loc_far_half", _grid(budget)[0] / 2)
    found.number("loc_lab_near", lit.LAB_POSITION_NEIGHBOURS.value)
    found.number("loc_lab_far", lit.LAB_POSITION_FAR.value)
    found.number("loc_lab_far_cells", lit.LAB_POSITION_FAR_CELLS.value)
    lab_grid = vit.VIT_TI_16.img_size // vit.VIT_TI_16.patch_size
    found.number("loc_lab_grid", lab_grid)
    found.number("loc_lab_grid_half", lab_grid / 2)
    found.claim("our far threshold, half the lab's grid, sits one cell nearer than the lab's",
                lit.LAB_POSITION_FAR_CELLS.value - lab_grid / 2 == 1)
    found.claim("the lab's position table shows the grid plainly",
                lit.LAB_POSITION_NEIGHBOURS.value > lit.LAB_POSITION_FAR.value)
    outcome = found.compared("loc_positions_text", gap[large], 0.0, more="more alike than far ones",
                             less="less alike than far ones",
                             same="no more alike than far ones by what {seeds} seeds resolve ({resolvable:.2f})")
    found.verdict("loc_positions_reading", POSITIONS_READING[outcome])
    found.verdict("loc_grid_before_heads_text", GRID_BEFORE_HEADS.get((outcome, share_outcome == "more"), NO_GRID))
    found.verdict("loc_positions_summary_text", POSITIONS_SUMMARY[outcome])
    found.compared("loc_positions_data_text", gap[large], gap[small], more="widened it", less="narrowed it",
                   same="moved it by {apart:.2f}, less than the {resolvable:.2f} that {seeds} seeds a size resolve")


def pretrained_sd(kind: str):
    """One pretrained ViT's sd of a number of its own (``"distance, px"``: a mean attention distance in
    pixels; ``"cosine"``: a mean cosine similarity of its position vectors), measured from the glued
    numbers over the pretraining seeds and both kernel sets (``python -m tools.booktools noise --glued
    --chapter locality``)."""
    if kind not in ("distance, px", "cosine"):
        raise ValueError(f"no pretrained ViT's sd of {kind!r}: expected 'distance, px' or 'cosine'")
    return noise.one_run_sd("locality", f"pretrained {kind}")


def pretrained_vit(found: Evidence, budget, config, distance, near, far) -> None:
    """The ViT pretrained elsewhere, one per seed (``loc_pre_*``): ``config`` its
    :class:`vitbias.vit.ViTConfig`, ``distance`` its heads' distances on the test images, ``(seeds,
    layers, heads)`` in px, ``near`` and ``far`` ``(seeds,)``, the mean cosine similarities of its
    position vectors with the 4 neighbours and at half the grid or more."""
    distance = np.asarray(distance, dtype=float)
    near, far = np.atleast_1d(np.asarray(near, dtype=float)), np.atleast_1d(np.asarray(far, dtype=float))
    if distance.ndim != 3 or near.shape != (len(distance),) or far.shape != (len(distance),):
        raise ValueError(f"the pretrained ViTs' distances must be (seeds, layers, heads) and near and far one "
                         f"value per seed, got shapes {distance.shape}, {near.shape} and {far.shape}")
    grid, patch = config.grid_size, config.patch_size
    uniform = locality.uniform_attention_distance(grid, grid, patch)
    if "data" in budget.pretrain:
        found.number("loc_pre_what", f"the TinyViTs it pretrained, one per seed, on "
                                     f"{budget.pretrain['data']['train']:,} generated images of ten other outlines")
    else:
        found.number("loc_pre_what", f"the ViT-Ti/16 pretrained on ImageNet-21k, reading the test images at "
                                     f"{grid * patch} px")
    found.number("loc_pre_grid", grid)
    # Chosen by the profile, not by training: a fixed string, compared exactly.
    found.number("loc_pre_differ_text", "Where ours differ, the data are the likely reason: generated outlines on "
                 "a small grid hold far less to learn than photographs, and a grid of a few patches leaves little "
                 "room between near and everywhere." if "data" in budget.pretrain else
                 "The weights are the same; the images differ (ours are CIFAR-10's, enlarged from 32 px), and so "
                 "may the distances.")
    found.number("loc_pre_uniform_px", uniform)
    px, cosine = pretrained_sd("distance, px"), pretrained_sd("cosine")
    first, last = distance[:, 0].mean(axis=1), distance[:, -1].mean(axis=1)    # (seeds,)
    nearest = distance.min(axis=(1, 2))                                          # (seeds,)
    what = "mean attention distance of a pretrained ViT on the test images, px,"
    found.trained("loc_pre_first_px", first, px, what=f"{what} first layer")
    found.trained("loc_pre_last_px", last, px, what=f"{what} last layer")
    found.trained("loc_pre_min_head_px", nearest, px, what=f"{what} its most local head")
    what = "cosine similarity of a pretrained ViT's position vectors,"
    found.trained("loc_pre_near", near, cosine, what=f"{what} 4 neighbours")
    found.trained("loc_pre_far", far, cosine, what=f"{what} half the grid apart or more")
    # The same seeds' models on both sides: paired t tests over the seeds.
    found.verdict("loc_pre_depth_text", {"more": "farther than", "less": "nearer than",
                                         "same": "about as far as"}[compare(last, first, paired=True)])
    found.verdict("loc_pre_local_text", "at least one" if nearest.mean() < LOCAL * uniform else "none")
    found.verdict("loc_pre_grid_text", "has found the grid, with neighbours clearly more alike than far patches"
                  if compare(near, far, paired=True) == "more" else "shows no clear grid")


def pretraining_gains(found: Evidence) -> None:
    """What JFT-300M adds over ImageNet-1k to ViT-B/32 and ViT-L/16 (the ViT paper's Table 5):
    ``loc_jft_gain_*`` and the claim that ViT-B/32 depends less on it."""
    table5 = lit.VIT_TABLE5
    gain = {m: table5[m, "JFT-300M"].value - table5[m, "ImageNet-1k"].value for m in ("ViT-B/32", "ViT-L/16")}
    found.number("loc_jft_gain_b32", gain["ViT-B/32"])
    found.number("loc_jft_gain_l16", gain["ViT-L/16"])
    found.claim("ViT-B/32 depends less on large-scale pretraining than ViT-L/16",
                gain["ViT-B/32"] < gain["ViT-L/16"])


def attention_ranks(found: Evidence, agreement: dict, images: int) -> None:
    """How well each attention map ranks the patches as the gradients do (``loc_rank_*``); ``agreement``:
    reading of :data:`READINGS` -> ``(seeds,)``, each seed's mean rank correlation over ``images`` test
    images."""
    if set(agreement) != set(READINGS):
        raise ValueError(f"agreement must hold {READINGS}, got {sorted(agreement)}")
    # One run's standard deviation of a mean rank correlation over the images (vitbias.noise).
    one_run_rank = noise.one_run_sd("locality", "rank")
    what = f"rank correlation between attention-based and gradient-based patch scores, mean over {images} images,"
    found.trained("loc_rank_raw", agreement["last layer's attention"], one_run_rank, what=f"{what} last layer")
    found.trained("loc_rank_rollout", agreement["rollout"], one_run_rank, what=f"{what} rollout")
    found.number("loc_rank_images", images)
    # The same model and images under both readings: a paired test.
    found.compared("loc_rank_text", agreement["rollout"], agreement["last layer's attention"], paired=True,
                   more="more like the gradients than", less="less like the gradients than",
                   same="about as much like the gradients ({apart:.2f} apart, where {seeds} paired seeds "
                        "resolve {resolvable:.2f}) as")
    # How faithful the better of the two is: below 0.3 far from it, above 0.7 close to it (Welch, one sample).
    best = max(agreement.values(), key=np.mean)
    level = "far" if compare(best, 0.3) == "less" else "close" if compare(best, 0.7) == "more" else "partial"
    found.verdict("loc_rank_level_text", RANK_LEVEL[level])
    found.verdict("loc_rank_summary_text", "the better of the two matches" if level == "close" else "neither matches")


def measure(budget, trained: dict, test_set, *, conv, per_size: dict, images: int, maps: dict, stem,
            shuffled: dict, positions: dict, pretrained: dict, agreement: dict) -> Evidence:
    """The chapter's evidence.

    ``trained``: the runs of :func:`planned_runs`, ``(n, seed, shuffled fraction)`` and
    ``("stem", seed)`` -> run; ``test_set``: their test images; ``conv``: ``(layers,)``, the patches
    stacked 3 by 3 convolutions see on the ViT-B/16 grid; ``per_size``: size -> ``(seeds, layers,
    heads)``, the plain ViTs' distances in px over ``images`` test images; ``maps``: :func:`kept_maps`;
    ``stem``: ``(seeds, layers, heads)``, the stem's distances in px; ``shuffled`` as for
    :func:`shuffled_heads`, ``positions`` as for :func:`learned_positions`; ``pretrained``: ``config``,
    ``distance``, ``near`` and ``far`` of :func:`pretrained_vit`; ``agreement`` as for
    :func:`attention_ranks`. The section functions in the page's order, as the page calls them.
    """
    found = Evidence("locality")
    conv_fields(found, conv)
    finer_grid(found, budget, trained, images)
    heads, share_outcome = trained_heads(found, budget, trained, per_size)
    cls_convention(found, budget, trained, maps)
    small, large = plan.locality_sizes(budget)
    init_first = baselines(found, budget, trained, test_set, heads["first"][large], images)
    lab_distances(found)
    stem_heads(found, budget, trained, stem, heads["first"][small])
    shuffled_heads(found, budget, shuffled, heads["first"][small], init_first)
    learned_positions(found, budget, positions, share_outcome)
    pretrained_vit(found, budget, **pretrained)
    pretraining_gains(found)
    attention_ranks(found, agreement, len(maps[budget.seeds[0]]))
    return found


def planned_runs(budget) -> dict:
    """The ViTs on the locality grid: ``(n, seed, shuffled fraction)`` at both :func:`vitbias.plan.locality_sizes`,
    shuffled at the smaller only, and ``("stem", seed)`` (a convolutional stem) at the smaller.

    The shuffled and stem runs are contrasts with the plain ViT, and the smaller size is where they
    can show something: there hard locality stands above the plain ViT (at the larger the two are
    level, so a shuffle has no gap to close); each run there also costs three eighths of one at the
    larger, which keeps a cold build of the quick profile within its time."""
    small, large = plan.locality_sizes(budget)
    wanted = {(n, s, 0.0): plan.on_locality_grid(budget, n, s) for n in (small, large) for s in budget.seeds}
    wanted |= {(small, s, 1.0): plan.on_locality_grid(budget, small, s, permute=1.0) for s in budget.seeds}
    wanted |= {("stem", s): plan.on_locality_grid(budget, small, s, route={"stem": True}) for s in budget.seeds}
    return wanted
