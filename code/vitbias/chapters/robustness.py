"""The robustness chapter: shape bias on cue conflict, occlusion one switch at a time, a weak attack,
the same at matched clean accuracy, and the published numbers set beside them.

The page makes one :class:`~vitbias.evidence.Evidence` and calls each section function below right
after the cell that computes its inputs, in this order: :func:`six_trials`, :func:`shape_bias_by_data`,
:func:`half_blanked`, :func:`one_switch_at_a_time`, :func:`training_fit`, :func:`weak_attack`,
:func:`matched_accuracy` and :func:`published`; :func:`measure` composes them for the tests."""

from __future__ import annotations

import numpy as np

from .. import literature, noise, plan, runs
from ..evidence import Evidence, compare, compared_numbers
from ..robustness import SIX_TRIALS, decisions, occlude, pgd_accuracy, retained, shape_bias
from ..train import evaluate

ARCHITECTURES = ("CNN", "ViT")
CONDITIONS = tuple(plan.TEXTURES)  # plain fill, predictive texture, random texture
# Each occlusion model (its name on the page): its architecture and the condition its runs train under.
RUN_OF = {"CNN": ("CNN", "plain fill"), "ViT": ("ViT", "plain fill"),
          "CNN, erasing": ("CNN", "erasing"), "ViT, erasing": ("ViT", "erasing")}
PAIRS = {"plain": ("CNN", "ViT"), "erased": ("CNN, erasing", "ViT, erasing")}  # (cnn, vit) per recipe
GRID, OFF = "on the grid, black", "off the grid, black"
PARTLY = (0.25, 0.75)  # the partly blanked fractions, a quarter to three quarters
SLUG = {"plain fill": "plain", "predictive texture": "predictive", "random texture": "random"}
MODEL_SLUG = {"CNN": "cnn", "ViT": "vit", "CNN, erasing": "cnn_erase", "ViT, erasing": "vit_erase"}
VARIANT_SLUG = {GRID: "grid", OFF: "off", "on the grid, mean colour": "mean", "on the grid, noise": "noise"}
MATCHED_SLUG = {"ViT": "vit", "ViT, conv stem": "stem"}
KEPT = {"grid": GRID, "off": OFF, "pgd": "attack"}  # the matched comparison's columns, by slug
WHO = {"more": "the ViT", "less": "the CNN", "same": "neither"}
WHERE = {"grid": "With black squares on the grid", "off": "With black squares off the grid",
         "pgd": "Under the attack"}
# Where a test cannot tell the two apart, the words say how far apart they are and what the seeds resolve.
# Accuracies to three decimals, shares kept to two, as the page shows them.
CLOSE_ACCURACY = " ({apart:.3f} apart, where {seeds} seeds need more than {resolvable:.3f})"
CLOSE_SHARE = " ({apart:.2f} apart, where {seeds} seeds need more than {resolvable:.2f})"
# The words when the test cannot tell a ViT from its matched CNN, worded three ways for three sentences
# in a row.
LEVEL = {"grid": "about as much as the CNN ({apart:.2f} apart, where {seeds} seeds need more than "
                 "{resolvable:.2f} to tell a difference)",
         "off": "as much as the CNN as far as {seeds} seeds can tell, the two {apart:.2f} apart where "
                "they need more than {resolvable:.2f}",
         "pgd": "about as much as the CNN, too close for {seeds} seeds to tell apart (a difference of "
                "{apart:.2f}, where they need more than {resolvable:.2f})"}


def one_run_sds() -> dict:
    """One run's sd of each trained number, measured over seeds and both CPU kernel sets
    (:mod:`vitbias.noise`): test and training accuracies from the run cache, the numbers computed from
    the trained models (shape bias, accuracy half blanked or under the attack, share kept) from this
    chapter's glued values (``python -m tools.booktools noise --glued --chapter robustness``)."""
    def sd(kind, chapter="robustness"):
        return noise.one_run_sd(chapter, kind)

    return {"bias": {model: sd(f"shape bias, {model}") for model in ARCHITECTURES},
            "test": {kind: sd(kind.split(",")[0]) for kind in RUN_OF},  # clean images
            "half": {kind: sd(f"half blanked, {kind}") for kind in RUN_OF},
            "attack": {kind: sd(f"under attack, {kind}") for kind in RUN_OF},
            "fit": {kind: sd("train") for kind in RUN_OF},  # training set fitted
            "kept": sd("share kept"),
            # the stem is the priors chapter's run; the matched CNNs, the crossover chapter's at their size
            "priors route": sd("routes", "priors")}


def partly(fractions) -> list[int]:
    """The positions in ``fractions`` of the partly blanked ones (:data:`PARTLY`), in order."""
    return [i for i, f in enumerate(fractions) if PARTLY[0] <= f <= PARTLY[1]]


def shares_kept(runs_of: dict, images, attacked, *, patch: int, variants: dict, fractions, epsilons,
                steps: int, seeds) -> dict:
    """``(name, column) -> (seeds,)``: the share of its margin over chance each model keeps
    (:func:`vitbias.robustness.retained`), over ``images`` partly blanked with black squares on the
    grid and off it (the mean over the :func:`partly` blanked ``fractions``), and under an attack of
    ``steps`` steps at each radius of ``epsilons`` (in 1/255) on ``attacked``. ``runs_of``: name ->
    one run per seed, in the order of ``seeds``; ``variants``: name -> (offset, fill), holding
    :data:`GRID` and :data:`OFF`."""
    chance = 1 / len(images.classes)
    blanked_at = [fractions[i] for i in partly(fractions)]
    holes = {(variant, f): occlude(images, f, patch, offset=variants[variant][0],
                                   fill=variants[variant][1], seed=0)
             for variant in (GRID, OFF) for f in blanked_at}
    kept = {}
    for name, group in runs_of.items():
        models = [r.model for r in group]
        clean = np.array([evaluate(m, images)["accuracy"] for m in models])
        for variant in (GRID, OFF):
            blanked = np.array([[evaluate(m, holes[variant, f])["accuracy"] for m in models]
                                for f in blanked_at]).mean(axis=0)  # (seeds,): the mean over the fractions
            kept[name, variant] = retained(blanked, clean, chance)
        unattacked = np.array([pgd_accuracy(m, attacked, 0.0, 1) for m in models])
        for eps in epsilons:
            under = np.array([pgd_accuracy(m, attacked, eps / 255, steps, seed=s)
                              for m, s in zip(models, seeds)])
            kept[name, eps] = retained(under, unattacked, chance)
    return kept


def kept_table(runs_of: dict, kept: dict, epsilons) -> str:
    """The Markdown table of :func:`shares_kept`: each model's test accuracy and the shares it keeps,
    means over seeds."""
    columns = [GRID, OFF, *epsilons]
    rows = [f"| {name} | {np.mean([r.accuracy for r in group]):.3f} | "
            + " | ".join(f"{kept[name, c].mean():.2f}" for c in columns) + " |"
            for name, group in runs_of.items()]
    header = ("| model | test accuracy | kept, partly blanked on the grid | off the grid | "
              + " | ".join(f"kept under attack, {e}/255" for e in epsilons) + " |")
    return header + "\n|" + " --- |" * (len(columns) + 2) + "\n" + "\n".join(rows)


def _check(name: str, given, wanted) -> None:
    if not set(wanted) <= set(given):
        missing = sorted(map(str, set(wanted) - set(given)))
        raise ValueError(f"{name} lacks {missing}")


def six_trials(found: Evidence, trials: dict, count: dict, bias: float) -> None:
    """``rob_six_*``: the source's six hand-made trials (:data:`vitbias.robustness.SIX_TRIALS`) as the
    page counted them, ``count`` (answer -> number of trials) and their shape ``bias``; the claim that
    the fourth answer names neither cue and drops out. ``trials``: cue -> (6,) class names."""
    _check("trials", trials, ("prediction", "shape", "texture"))
    _check("count", count, ("shape", "texture", "neither"))
    cues = (trials["prediction"], trials["shape"], trials["texture"])
    found.number("rob_six_trial_bias", bias)
    for answer in ("shape", "texture", "neither"):
        found.number(f"rob_six_{answer}", count[answer])
    neither = [i for i, (p, s, t) in enumerate(zip(*cues)) if p not in (s, t)]
    found.claim("the fourth answer names neither cue and drops out",
                neither == [3] and (count["shape"], count["texture"], count["neither"]) == (3, 2, 1)
                and bias == 0.6)


def shape_bias_by_data(found: Evidence, budget, done: dict, conflict, bias: dict, sd: dict) -> None:
    """``rob_bias_*``, ``rob_test_*``, ``rob_arch_*`` and ``rob_data_*``: shape bias and test accuracy
    of each architecture under each kind of data, and what moves the shape bias more, the data or the
    architecture; the claim that both models learn to look past texture that is noise. ``done``:
    (model, condition, seed) -> trained run; ``conflict``: the cue-conflict images; ``bias``:
    (model, condition) -> (seeds,); ``sd``: :func:`one_run_sds`."""
    _check("bias", bias, [(m, c) for m in ARCHITECTURES for c in CONDITIONS])
    bias = {key: np.asarray(values, dtype=float) for key, values in bias.items()}
    seeds = budget.seeds
    found.number("rob_n_conflict", len(conflict))
    found.number("rob_train_size", plan.robustness_size(budget))
    test_of = {(m, c): np.array([done[m, c, s].accuracy for s in seeds]) for m, c in bias}  # (seeds,)
    for (model, condition), values in bias.items():
        found.trained(f"rob_bias_{model.lower()}_{SLUG[condition]}", values, sd["bias"][model],
                      what=f"the {model}'s shape bias after training on {condition}")
        found.trained(f"rob_test_{model.lower()}_{SLUG[condition]}", test_of[model, condition],
                      sd["test"][model], what=f"the {model}'s test accuracy after training on {condition}")
    # The architecture's effect: the ViT against the CNN under each kind of data. The data's effect:
    # random against predictive texture, for each model. Each chosen by Welch's t test over the seeds.
    architecture = {c: found.compared(f"rob_arch_{SLUG[c]}", bias["ViT", c], bias["CNN", c],
                                      more="above the CNN's", less="below the CNN's",
                                      same="level with the CNN's ({apart:.3f} apart, where {seeds} seeds "
                                           "need more than {resolvable:.3f} to tell a difference)")
                    for c in CONDITIONS}
    data_effect = {m: found.compared(f"rob_data_{m.lower()}", bias[m, "random texture"],
                                     bias[m, "predictive texture"], more="rises", less="falls",
                                     same="moves by only {apart:.3f} ({seeds} seeds need a change of more "
                                          "than {resolvable:.3f} to show one)")
                   for m in ARCHITECTURES}
    # Seed by seed differences of independent trainings (one run's sd of a difference: the two sds
    # added in quadrature), turned to the sign of their mean: the size of each effect.
    arch_size = {c: np.sign(d.mean()) * d for c in CONDITIONS for d in [bias["ViT", c] - bias["CNN", c]]}
    data_size = {m: np.sign(d.mean()) * d for m in ARCHITECTURES
                 for d in [bias[m, "random texture"] - bias[m, "predictive texture"]]}
    largest = CONDITIONS[int(np.argmax([arch_size[c].mean() for c in CONDITIONS]))]
    smallest = ARCHITECTURES[int(np.argmin([data_size[m].mean() for m in ARCHITECTURES]))]
    found.trained("rob_arch_largest", arch_size[largest], np.hypot(sd["bias"]["CNN"], sd["bias"]["ViT"]),
                  what="the largest difference in shape bias between the ViT and the CNN under one kind of "
                       "data")
    found.trained("rob_data_smallest", data_size[smallest], np.sqrt(2) * sd["bias"][smallest],
                  what="the smaller change in shape bias, random against predictive texture, of the two "
                       "models")
    # The data decides more when it moves both models beyond the seeds' spread, and further, by Welch's
    # t test, than the architecture moves the shape bias under any kind of data.
    further = {compare(data_size[m], arch_size[c]) for m in ARCHITECTURES for c in CONDITIONS}
    moved = "same" not in data_effect.values()
    found.verdict("rob_bias_verdict",
                  "the data decides more than the architecture" if moved and further == {"more"} else
                  "the data matters, but the seeds cannot rank it above the architecture" if moved else
                  "the seeds cannot show that the data moves both models' shape bias")
    # Whether the shape-bias comparison is at matched clean accuracy: each kind of data, Welch's t test.
    ahead = {compare(test_of["CNN", c], test_of["ViT", c]) for c in CONDITIONS}
    learned = ("so the {} learned the task better under every kind of data, and part of a gap in shape "
               "bias may be that gap in learning rather than a preference")
    found.verdict("rob_bias_matched_text",
                  learned.format("CNN") if ahead == {"more"} else
                  learned.format("ViT") if ahead == {"less"} else
                  "too close under every kind of data for the seeds to tell apart" if ahead == {"same"} else
                  "unequal under some kinds of data, so a gap in shape bias there may partly be a gap in "
                  "learning")
    # Which architecture is the more shape-biased, where the two differ beyond the seeds' spread.
    differ = set(architecture.values()) - {"same"}
    found.verdict("rob_arch_which",
                  "the CNN, the opposite of the reputation" if differ == {"less"} else
                  "the ViT, as the reputation has it" if differ == {"more"} else
                  "the CNN under some kinds of data and the ViT under others" if differ else
                  "neither (they differ under no kind of data)")
    found.claim("when texture is noise, both models learn to look past it", set(data_effect.values()) == {"more"})


def half_blanked(found: Evidence, budget, curves: dict, fractions, images, sd: dict) -> dict:
    """``rob_half_*``, ``rob_clean_*``, ``rob_adv_*``, ``rob_gap_text`` and the occlusion set-up:
    accuracy half blanked under each kind of hole, and the ViT against the CNN over the partly blanked
    range; the claim that our ViT is below its ceiling on clean images while the CNN is near perfect.
    ``curves``: (name, variant) -> (seeds, fractions), for every name of :data:`RUN_OF` and variant of
    :data:`VARIANT_SLUG`; ``images``: the occluded images. Returns each seed's mean accuracy over the
    partly blanked fractions, (name, variant) -> (seeds,)."""
    _check("occlusion curves", curves, [(name, v) for name in RUN_OF for v in VARIANT_SLUG])
    if 0.5 not in fractions or not partly(fractions):
        raise ValueError(f"the occlusion fractions must hold one half and a partly blanked fraction in "
                         f"{PARTLY}, got {fractions}")
    found.number("rob_erase", plan.ERASE)
    found.number("rob_n_occluded", len(images))
    found.number("rob_patch", budget.vit["patch_size"])
    found.number("rob_image_side", images.images.shape[-1])
    chance = 1 / len(images.classes)
    found.number("rob_chance", chance)
    at_half = {key: values[:, fractions.index(0.5)] for key, values in curves.items()}  # (seeds,)
    for (name, variant), values in at_half.items():
        found.trained(f"rob_half_{MODEL_SLUG[name]}_{VARIANT_SLUG[variant]}", values, sd["half"][name],
                      what=f"accuracy of the {name} with half of each image blanked, {variant}")
    clean = {name: curves[name, GRID][:, 0] for name in RUN_OF}  # (seeds,)
    for name, values in clean.items():
        found.trained(f"rob_clean_{MODEL_SLUG[name]}", values, sd["test"][name],
                      what=f"accuracy of the {name} on the occluded images' clean copies")
    # How much of its margin over chance a model keeps at half blanked: against half of that margin.
    for name in ARCHITECTURES:
        found.compared(f"rob_half_margin_{MODEL_SLUG[name]}", at_half[name, GRID],
                       chance + (clean[name] - chance) / 2,
                       more="more than half of its margin over chance",
                       less="less than half of its margin over chance",
                       same="about half of its margin over chance (its accuracy is {apart:.3f} from the "
                            "halfway mark, where {seeds} seeds need more than {resolvable:.3f} to tell a "
                            "difference)")
    # The comparisons below use each seed's mean accuracy over the partly blanked fractions, not one
    # fraction: a steadier summary of a curve.
    blanked = partly(fractions)
    found.number("rob_partly_low", 100 * fractions[blanked[0]])
    found.number("rob_partly_high", 100 * fractions[blanked[-1]])
    pooled = {key: values[:, blanked].mean(axis=1) for key, values in curves.items()}  # (seeds,)
    for slug, (cnn, vit) in PAIRS.items():
        for variant in (GRID, OFF):
            found.trained(f"rob_adv_{slug}_{VARIANT_SLUG[variant]}", pooled[vit, variant] - pooled[cnn, variant],
                          np.hypot(sd["half"][cnn], sd["half"][vit]),
                          what=f"the {vit}'s advantage over the {cnn}, {variant}, partly blanked")
    gap = found.compared("rob_gap_text", pooled["ViT", GRID], pooled["CNN", GRID],
                         more="above the CNN's", less="below the CNN's",
                         same="too close to the CNN's for {seeds} seeds to tell apart (a difference of "
                              "{apart:.3f}, where they need more than {resolvable:.3f})")
    gap_numbers = compared_numbers(pooled["ViT", GRID], pooled["CNN", GRID])
    found.verdict("rob_contrast_text", {"less": "finds the opposite", "more": "agrees in direction, if not in size",
                                        "same": "cannot tell the two apart, with the accuracies {apart:.3f} apart "
                                                "where {seeds} seeds need more than {resolvable:.3f}"
                                                .format_map(gap_numbers)}[gap])
    found.claim("our ViT is below its ceiling on clean images while the CNN is near perfect",
                compare(clean["ViT"], clean["CNN"]) == "less" and clean["CNN"].mean() > 0.95)
    return pooled


def one_switch_at_a_time(found: Evidence, pooled: dict) -> None:
    """``rob_grid_*``, ``rob_fill_*`` and ``rob_recipe_*``: the grid, the fill and the recipe, one at a
    time: the same model and seed under two kinds of holes, or a recipe switched on the same seed, so
    paired tests; the claim that a recipe protects against the holes it was trained with. ``pooled``:
    (name, variant) -> (seeds,), from :func:`half_blanked`."""
    grid = found.compared("rob_grid_text", pooled["ViT", OFF], pooled["ViT", GRID], paired=True,
                          more="rises", less="falls",
                          same="moves by {apart:.3f}, too little for {seeds} seeds to tell from no change "
                               "(they need more than {resolvable:.3f})")
    found.verdict("rob_grid_meaning", {"less": "So the alignment helped it.",
                                       "more": "So the alignment did not favour it.",
                                       "same": "On this testbed the alignment is not what helps it."}[grid])
    fill = found.compared("rob_fill_text", pooled["CNN", "on the grid, mean colour"], pooled["CNN", GRID],
                          paired=True, more="rises", less="falls",
                          same="stays level ({apart:.3f} apart, where {seeds} seeds need more than "
                               "{resolvable:.3f} to tell a difference)")
    found.verdict("rob_fill_meaning", {"more": "So part of what hurt it was the black squares' edges.",
                                       "less": "So the black squares' edges are not what hurts it.",
                                       "same": "So the black squares' edges do not measurably hurt it."}[fill])
    found.compared("rob_recipe_text", pooled["CNN, erasing", GRID], pooled["CNN", GRID], paired=True,
                   more="rises", less="falls",
                   same="hardly moves (by {apart:.3f}, where {seeds} seeds need more than {resolvable:.3f} to "
                        "show a change)")
    on_noise = found.compared("rob_recipe_noise_text", pooled["CNN, erasing", "on the grid, noise"],
                              pooled["CNN", "on the grid, noise"], paired=True, more="rises", less="falls",
                              same="moves by {apart:.3f}, too little for {seeds} seeds to show (they need more "
                                   "than {resolvable:.3f})")
    # Erasing trains on noise-filled rectangles: it raises the CNN's accuracy on noise-filled squares
    # beyond the seeds' spread.
    found.claim("a recipe protects against the holes it was trained with", on_noise == "more")


def training_fit(found: Evidence, done: dict, seeds, sd: dict) -> None:
    """``rob_train_*``, ``rob_erase_fit_text`` and ``rob_plain_fit_text``: how much of its own training
    set each model fits under its fitting rule (un-augmented images). ``done``: (model, condition,
    seed) -> trained run, for every seed of ``seeds``."""
    train_fit = {name: np.array([done[(*RUN_OF[name], s)].train_accuracy for s in seeds])
                 for name in RUN_OF}  # (seeds,)
    for name, values in train_fit.items():
        found.trained(f"rob_train_{MODEL_SLUG[name]}", values, sd["fit"][name],
                      what=f"the share of its own training images the {name} fits")
    found.compared("rob_erase_fit_text", train_fit["ViT, erasing"], train_fit["ViT"], paired=True,
                   more="above the share without it",
                   less="below the share without it, since a recipe that blanks part of every image sets a "
                        "harder task in the same number of steps",
                   same="level with the share without it ({apart:.2f} apart, and {seeds} seeds would show any "
                        "difference above {resolvable:.2f})")
    plain_fit = min(train_fit[name].mean() for name in ARCHITECTURES)
    found.verdict("rob_plain_fit_text", "both fit their training sets" if plain_fit >= 0.99
                  else "not both fit their training sets")


def weak_attack(found: Evidence, accuracy: dict, pooled: dict, sd: dict, *, steps: int, epsilon: float,
                images) -> dict:
    """``rob_pgd_*``, ``rob_n_attacked`` and ``rob_matched_*``: accuracy under the weak attack of
    ``steps`` steps of radius ``epsilon`` on ``images``, and the architecture ahead under both recipes,
    by Welch's t test, on the grid and off it over the partly blanked range, and under the attack.
    ``accuracy``: name -> (seeds,), for every name of :data:`RUN_OF`; ``pooled``: from
    :func:`half_blanked`. Returns the accuracies compared, slug -> name -> (seeds,)."""
    _check("attack accuracy", accuracy, RUN_OF)
    found.number("rob_pgd_steps", steps)
    found.number("rob_pgd_eps_pixels", round(epsilon * 255))
    found.number("rob_n_attacked", len(images))
    for name, values in accuracy.items():
        found.trained(f"rob_pgd_{MODEL_SLUG[name]}", values, sd["attack"][name],
                      what=f"the {name}'s accuracy under the attack")
    ahead = {"grid": {name: pooled[name, GRID] for name in RUN_OF},
             "off": {name: pooled[name, OFF] for name in RUN_OF}, "pgd": accuracy}
    for slug, accuracy in ahead.items():
        outcomes = {compare(accuracy[vit], accuracy[cnn]) for cnn, vit in PAIRS.values()}
        found.verdict(f"rob_matched_{slug}",
                      "the ViT" if outcomes == {"more"} else "the CNN" if outcomes == {"less"} else "neither")
    return ahead


def matched_accuracy(found: Evidence, runs_of: dict, kept: dict, ahead: dict, sd: dict, *, partner: dict,
                     size: dict, epsilons, steps: int) -> None:
    """``rob_match_*``: each ViT against the CNN of its clean accuracy, by the share of its margin over
    chance it keeps, and whether each gap at equal recipe survives the matching. ``runs_of``: name ->
    one run per seed; ``kept``: (name, column) -> (seeds,), from :func:`shares_kept` with radii
    ``epsilons`` (in 1/255) and ``steps`` steps; ``ahead``: from :func:`weak_attack`; ``partner``: a
    ViT's name (each of :data:`MATCHED_SLUG`) -> its matched CNN's; ``size``: a ViT's name -> its CNN's
    training-set size."""
    _check("matched partners", partner, MATCHED_SLUG)
    kept = dict(kept)
    found.number("rob_match_pgd_steps", steps)
    found.number("rob_match_eps_low", epsilons[0])
    found.number("rob_match_eps_high", epsilons[-1])
    for name, slug in MATCHED_SLUG.items():
        cnn = partner[name]
        found.number(f"rob_match_{slug}_cnn_size", size[name])
        test_accuracy = {who: np.array([r.accuracy for r in runs_of[who]]) for who in (name, cnn)}
        run_sd = {name: sd["test"].get(name) or sd["priors route"],
                  cnn: noise.one_run_sd("crossover", noise.accuracy_kind("cnn", size[name]))}
        for who, tag in ((name, slug), (cnn, f"{slug}_cnn")):
            found.trained(f"rob_match_{tag}_test", test_accuracy[who], run_sd[who],
                          what=f"test accuracy of the {who}")
            found.trained(f"rob_match_{tag}_grid", kept[who, GRID], sd["kept"],
                          what=f"share of its margin over chance the {who} keeps, partly blanked on the grid")
            found.trained(f"rob_match_{tag}_off", kept[who, OFF], sd["kept"],
                          what=f"share of its margin over chance the {who} keeps, partly blanked off the grid")
            kept[who, "attack"] = np.mean([kept[who, e] for e in epsilons], axis=0)  # (seeds,): over radii
            found.trained(f"rob_match_{tag}_pgd", kept[who, "attack"], sd["kept"],
                          what=f"share of its margin over chance the {who} keeps under attack, mean over "
                               "radii")
        # How close the match is: the difference of the two means, with the band of a difference.
        distance = test_accuracy[name] - test_accuracy[cnn]  # seed by seed; its size below
        found.trained(f"rob_match_{slug}_gap", np.sign(distance.mean()) * distance,
                      float(np.hypot(run_sd[name], run_sd[cnn])),
                      what=f"the distance in test accuracy between the {name} and its matched CNN")
        for short, column in KEPT.items():
            found.compared(f"rob_match_{slug}_{short}_text", kept[name, column], kept[cnn, column],
                           more="more than the CNN", less="less than the CNN", same=LEVEL[short])
    # Does the gap of the recipe-matched comparison survive the matching? For each perturbation, who
    # keeps more at matched accuracy (the plain ViT's pair) against who was ahead with the plain recipe
    # at the route size, in accuracy; both by Welch's t test.
    cnn = partner["ViT"]
    for slug, column in KEPT.items():
        before = WHO[compare(ahead[slug]["ViT"], ahead[slug]["CNN"])]
        after = WHO[compare(kept["ViT", column], kept[cnn, column])]
        close_before = CLOSE_ACCURACY.format_map(compared_numbers(ahead[slug]["ViT"], ahead[slug]["CNN"]))
        close_after = CLOSE_SHARE.format_map(compared_numbers(kept["ViT", column], kept[cnn, column]))
        found.verdict(f"rob_match_{slug}_survives",
                      f"{WHERE[slug]}, {before} is ahead at equal recipe"
                      + (close_before if before == "neither" else "")
                      + f" and {after} keeps more at matched accuracy"
                      + (close_after if after == "neither" else "")
                      + ", so " + ("the gap survives the matching" if before == after != "neither"
                                   else "there is no gap to carry over" if before == after
                                   else "the gap reverses" if "neither" not in (before, after)
                                   else "the gap does not survive the matching") + ".")


def published(found: Evidence) -> None:
    """``rob_geirhos_*``, ``rob_vit22b``, ``rob_human``, ``rob_naseer_*`` and ``rob_bai_*``: the
    published numbers the page quotes (:mod:`vitbias.literature`), and the claims it reads from them."""
    geirhos = literature.GEIRHOS_SHAPE_BIAS
    found.number("rob_geirhos_images", literature.GEIRHOS_CUE_CONFLICT_IMAGES.value)
    found.number("rob_geirhos_categories", literature.GEIRHOS_CATEGORIES.value)
    found.number("rob_geirhos_in", geirhos["ImageNet"].value)
    found.number("rob_geirhos_sin", geirhos["Stylized-ImageNet"].value)
    found.number("rob_geirhos_repo_in", literature.GEIRHOS_SHAPE_BIAS_REPO["ImageNet"].value)
    found.number("rob_geirhos_repo_sin", literature.GEIRHOS_SHAPE_BIAS_REPO["Stylized-ImageNet"].value)
    found.number("rob_vit22b", literature.VIT22B_SHAPE_BIAS.value)
    found.number("rob_human", literature.HUMAN_SHAPE_BIAS.value)
    naseer = literature.NASEER_OCCLUSION
    found.number("rob_naseer_side", literature.NASEER_PATCH_SIDE.value)
    found.number("rob_naseer_offset", literature.NASEER_OFFSET.value)
    found.number("rob_naseer_patches", literature.NASEER_PATCHES.value)
    found.number("rob_naseer_80_top1", literature.NASEER_OCCLUSION_80.value)
    found.number("rob_naseer_80_removed", literature.NASEER_OCCLUSION_80_REMOVED.value)
    found.number("rob_bai_tpa_gap", literature.BAI_TPA_GAP.value)
    found.claim("the authors' offset is half of one of DeiT's patches",
                2 * literature.NASEER_OFFSET.value == literature.NASEER_PATCH_SIDE.value)
    half = 0.5  # the DeiT-S and ResNet-50 rows: half of the image removed
    found.number("rob_naseer_deits", naseer["DeiT-S", half].value)
    found.number("rob_naseer_half_removed", 100 * half)
    found.number("rob_bai_pgd_steps", literature.BAI_PGD_STEPS.value)
    found.number("rob_naseer_resnet", naseer["ResNet-50", half].value)
    found.number("rob_naseer_deitb", naseer["DeiT-B", 0.9].value)
    found.number("rob_naseer_deitb_removed", 100 * next(removed for model, removed in naseer if model == "DeiT-B"))
    bai = literature.BAI_MATCHED
    found.number("rob_bai_deit_params", bai["DeiT-S"]["parameters"].value / 1e6)
    found.number("rob_bai_resnet_params", bai["ResNet-50"]["parameters"].value / 1e6)
    found.number("rob_bai_deit_top1", bai["DeiT-S"]["top1"].value)
    found.number("rob_bai_resnet_top1", bai["ResNet-50"]["top1"].value)
    ood = literature.BAI_OOD
    for model, slug in (("ResNet-50", "resnet"), ("ResNet-50, DeiT recipe", "aligned"), ("DeiT-S", "deit")):
        found.number(f"rob_bai_{slug}_a", ood[model]["ImageNet-A"].value)
        found.number(f"rob_bai_{slug}_c", ood[model]["ImageNet-C"].value)
    pgd = {model: row["PGD-100"].value for model, row in literature.BAI_ADVERSARIAL.items()}
    found.number("rob_bai_adv_resnet", pgd["ResNet-50 (ReLU)"])
    found.number("rob_bai_adv_gelu", pgd["ResNet-50 (GELU)"])
    found.number("rob_bai_adv_deit", pgd["DeiT-S"])
    # DeiT-S ahead on ImageNet-A (accuracy) and ImageNet-C (corruption error, lower is better).
    found.claim("out of distribution the gap survives the ResNet's taking DeiT's recipe",
                ood["DeiT-S"]["ImageNet-A"].value > ood["ResNet-50, DeiT recipe"]["ImageNet-A"].value
                and ood["DeiT-S"]["ImageNet-C"].value < ood["ResNet-50, DeiT recipe"]["ImageNet-C"].value)
    # Level within half a point with GELU, more than five points behind with ReLU.
    found.claim("much of the adversarial gap belonged to the activation",
                abs(pgd["DeiT-S"] - pgd["ResNet-50 (GELU)"]) < 0.5 and pgd["ResNet-50 (ReLU)"] < pgd["DeiT-S"] - 5)


def measure(budget, done: dict, conflict, bias: dict, *, occlusion: dict, attack: dict,
            matched: dict) -> Evidence:
    """The chapter's evidence, from what its cells computed: the section functions in the page's order.

    ``done``: ``(model, condition, seed) -> `` trained run (:func:`planned_runs`);
    ``conflict``: the cue-conflict images; ``bias``: ``(model, condition) -> (seeds,)`` shape biases;
    ``occlusion``: ``curves`` (``(name, variant) -> (seeds, fractions)``), ``fractions`` and
    ``images``, the occluded images; ``attack``: ``accuracy`` (``name -> (seeds,)``), ``steps``,
    ``epsilon`` and ``images``; ``matched``: ``runs`` (name -> one run per seed), ``partner`` (a ViT's
    name -> its matched CNN's), ``size`` (a ViT's name -> its CNN's training-set size), ``kept``
    (:func:`shares_kept`), ``epsilons`` and ``steps`` of its attack. The six trials are counted here
    as the page counts them, with :func:`vitbias.robustness.decisions` and ``shape_bias``.
    """
    _check("occlusion", occlusion, ("curves", "fractions", "images"))
    _check("attack", attack, ("accuracy", "steps", "epsilon", "images"))
    _check("matched", matched, ("runs", "partner", "size", "kept", "epsilons", "steps"))
    sd = one_run_sds()
    found = Evidence("robustness")
    cues = (SIX_TRIALS["prediction"], SIX_TRIALS["shape"], SIX_TRIALS["texture"])
    six_trials(found, SIX_TRIALS, decisions(*cues), shape_bias(*cues))
    shape_bias_by_data(found, budget, done, conflict, bias, sd)
    pooled = half_blanked(found, budget, occlusion["curves"], occlusion["fractions"], occlusion["images"], sd)
    one_switch_at_a_time(found, pooled)
    training_fit(found, done, budget.seeds, sd)
    ahead = weak_attack(found, attack["accuracy"], pooled, sd, steps=attack["steps"], epsilon=attack["epsilon"],
                        images=attack["images"])
    matched_accuracy(found, matched["runs"], matched["kept"], ahead, sd, partner=matched["partner"],
                     size=matched["size"], epsilons=matched["epsilons"], steps=matched["steps"])
    published(found)
    return found


def planned_runs(budget) -> dict:
    """``(model, condition, seed)`` at the larger route size: each texture condition, and ``"erasing"``;
    ``("CNN", n, seed)`` at every size and ``("ViT, conv stem", seed)`` (the priors chapter's, at the
    largest route size), for the matched comparison; every model under the rule by which it fits its
    training set.

    Textures exist on generated data only; on other data the one condition
    is ``"plain fill"``, the data as they are.
    """
    n, seeds = plan.robustness_size(budget), budget.seeds
    textures = plan.TEXTURES if budget.dataset["name"] == "shapes" else {"plain fill": None}
    wanted = {}
    for s in seeds:
        for model in ("CNN", "ViT"):
            for condition, texture in textures.items():
                wanted[model, condition, s] = runs.experiment(budget, model.lower(), n, s, texture=texture,
                                                              fit=True)
            wanted[model, "erasing", s] = runs.experiment(budget, model.lower(), n, s, erase=plan.ERASE,
                                                          fit=True)
        # For the comparison at matched clean accuracy: the CNN at every size (the crossover
        # chapter's runs) and the ViT with a convolutional stem (the priors chapter's).
        for size in budget.train_sizes:
            wanted["CNN", size, s] = runs.experiment(budget, "cnn", size, s, fit=True)
        wanted["ViT, conv stem", s] = runs.experiment(budget, "vit", budget.route_sizes[-1], s,
                                                      route={"stem": True}, fit=True)
    return wanted


def noise_groups(budget) -> dict[str, dict]:
    """The robustness chapter's runs (at :func:`vitbias.plan.robustness_size`) by kind of number:
    ``"CNN"`` and ``"ViT"``, the test accuracy on images of their own training condition over the
    texture conditions and random erasing, and ``"train"``, the training accuracy of all of them.
    The matched comparison's runs are other chapters'."""
    kinds: dict[str, dict] = {}
    for key, config in planned_runs(budget).items():
        if len(key) != 3 or key[1] not in (*plan.TEXTURES, "erasing"):
            continue
        model, condition, _seed = key
        kinds.setdefault(model, {}).setdefault((model, condition), []).append(config)
        kinds.setdefault("train", {}).setdefault((model, condition), []).append(config)
    return kinds
