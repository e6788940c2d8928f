"""The crossover chapter: a small CNN against a TinyViT at growing sizes, on the plain images and in worlds
that break the convolution's assumption by degrees, and what crop, flip and pretraining buy back."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from .. import data, literature, models, noise, plan, probe, profile, runs, scaling, toy
from ..evidence import Evidence, band, compare, compared_numbers

MODELS = {"cnn": "small CNN", "vit": "TinyViT"}
DATASETS = {"shapes": "generated shapes", "cifar10": "CIFAR-10"}
BY_HEART = 0.95  # every seed's training accuracy at least this: the set is learned by heart
CEILING = 0.90  # the CNN's mean on the smallest set at most this, so that its curve can climb
FITS = 0.99  # the lowest mean training accuracy over the sizes that counts as fitting every set
GENERALISES_WORSE = 0.2  # test accuracy this far below training accuracy: far better fitted than generalised
LIMITED = 0.02  # a gain from doubling the steps above this counts as compute-limited
# The recipe's comparison is paired by seed, and a change's band is 4.7 sd / sqrt(n) of the seeds' changes.
# With crop and flip trained under its own fitting rule (vitbias.plan.AUGMENTED_PASSES), forty seeds
# measured the CNN's change near 0.30 with an sd near 0.045, so three seeds put its band (about 0.12)
# under half the change, as they do the TinyViT's (a change near 0.04, sd near 0.012). A model listed
# here would get more seeds than the budget's.
RECIPE_SEEDS: dict[str, int] = {}
# The TinyViT's run on the largest set with half its steps, for the first seed only: each such run costs
# half the book's most expensive one, three seeds resolved only gains of 0.016 or more against the 0.02
# the page asks about, and the seed that is trained shows the check on the page.
HALF_STEP_SEEDS = 1
# "The same accuracy" must rule out a difference of half what the last rung costs the CNN at that size
# (Evidence.equivalent refuses a wider margin), and 0.05 of accuracy does.
MARGIN = 0.05
ALPHA = 0.05  # scaling.equivalent's level for each one-sided test
# A crossing's place (before, inside or beyond the sizes) counts as decided when at least this share of
# the bootstrap's draws over the seeds puts it there.
DECIDED = 0.95
# The sentences around the count of undecided crossings, by whether there is one.
UNDECIDED_LEAD = {True: "Three seeds do not place every crossing, though: in",
                  False: "Three seeds place every crossing: in"}
UNDECIDED_TEXT = {True: "Those are the rungs where the TinyViT and the CNN meet near the smallest sizes, "
                        "where both are still near chance, and where the seed means' verdict can change "
                        "with the CPU that trains the book: read their places as undecided.",
                  False: "Each crossing's place is the one the seed means give it."}
PROBE_TAGS = {"pretrained": "pretrained", "random weights": "random"}
TOY_BETAS = (0.1, 0.6)  # the bias toy's drifts: a little wrong and very wrong
SOURCE_LAB = literature.LAB_CROSSOVER  # the lab's table (CIFAR-10, a T4 GPU), as printed there
ROUNDING = "float64 rounding of two trainings that are equal in exact arithmetic"
TWINS_ROUNDING = 1e-9
TOO_CLOSE = ("cannot be told apart ({apart:.3f} apart, where {seeds} seeds resolve only "
             "{resolvable:.3f} or more) from")


def one_run_sds(budget) -> dict:
    """One run's sd by kind (:func:`vitbias.noise.one_run_sd`): ``(model, where)`` -> the sd of that
    model's test accuracy at ``where``, each size of ``budget`` (the largest over the worlds trained
    there), the recipe's comparison (``"recipe default"``, ``"recipe switched"``, and ``"recipe
    change"``, a seed's change from the one to the other) (:func:`vitbias.noise.accuracy_kind`);
    ``"train"``, ``("train", where)`` -> training accuracy of the runs that fit and of the recipe's two
    runs. Each measured over the seeds and both kernel sets. The half-step run, one seed, has no spread
    of its own to measure: it is read with the sds of the full run at the same size."""
    found = {"train": noise.one_run_sd("crossover", "train")}
    for where in ("recipe default", "recipe switched"):
        found["train", where] = noise.one_run_sd("crossover", f"train, {where}")
    for m in MODELS:
        for where in (*budget.train_sizes, "recipe default", "recipe switched", "recipe change"):
            found[m, where] = noise.one_run_sd("crossover", noise.accuracy_kind(m, where))
    return found


def recipe_seeds(budget, model: str) -> tuple[int, ...]:
    """The seeds of ``model``'s runs in the recipe's comparison: the budget's, then, for a model of
    :data:`RECIPE_SEEDS`, the next ones up to its count. A change of a seed's two runs may spread less
    than either run, but three seeds still resolve only a change of several of its sds; the runs at the
    recipe's size are among the book's cheapest."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {tuple(MODELS)}, got {model!r}")
    count = RECIPE_SEEDS.get(model, len(budget.seeds))
    extra = [s for s in range(max(budget.seeds) + count + 1) if s not in budget.seeds]
    return tuple(budget.seeds) + tuple(extra[:max(0, count - len(budget.seeds))])


def probe_sd(name: str):
    """One seed's linear-probe accuracy of the pretrained TinyViT (``"pretrained"``: its own pretraining
    run, probed on its seed's labels) or of its random twin (``"random weights"``): the sd measured from
    the glued probes over the seeds and both kernel sets (``python -m tools.booktools noise --glued
    --chapter crossover``)."""
    if name not in PROBE_TAGS:
        raise ValueError(f"no probe {name!r}: expected one of {tuple(PROBE_TAGS)}")
    return noise.one_run_sd("crossover", f"probe, {name}")


def exponent_sd():
    """One seed's fitted power-law exponent: its sd, measured from the glued exponents of both models over
    the seeds and both kernel sets (``python -m tools.booktools noise --glued --chapter crossover``)."""
    return noise.one_run_sd("crossover", "exponent")


def world_slug(world: str) -> str:
    """A world of the ladder as its glued names spell it: ``plain``, ``shuffled``, and ``blocks_<b>`` for
    the rung that permutes pixels in ``b x b`` blocks; a name, not a position, so that a rung inserted
    into the ladder leaves the others' names alone."""
    if world == "plain":
        return "plain"
    if world == "patches shuffled":
        return "shuffled"
    side = world.removeprefix("+ pixels in ").removesuffix(" blocks").split(" x ")
    if len(side) != 2 or side[0] != side[1] or not side[0].isdigit():
        raise ValueError(f"{world!r} is not a world of the ladder (plan.ladder)")
    return f"blocks_{side[0]}"


def curve(done: dict, budget, model: str, world: str = "plain", metric: str = "accuracy") -> np.ndarray:
    """``(sizes, seeds)``: ``metric`` (``"accuracy"`` or ``"train_accuracy"``) of ``model``'s runs in
    ``world`` at every size and seed of ``budget``."""
    return np.array([[getattr(done[model, n, s, world], metric) for s in budget.seeds]
                     for n in budget.train_sizes])


def ladder_at_largest(budget, done: dict) -> tuple[dict, float]:
    """``(cnn, vit_plain)``, :func:`vitbias.scaling.ladder_winners`' inputs: each world of the ladder, in
    its order, -> the CNN's mean test accuracy over the seeds on the largest set there, and the
    TinyViT's on the plain images at that size (its accuracy in every world, by the theorem)."""
    largest = budget.train_sizes[-1]

    def mean(model, world):
        return float(np.mean([done[model, largest, s, world].accuracy for s in budget.seeds]))

    return {w: mean("cnn", w) for w in plan.ladder(budget)}, mean("vit", "plain")


def _cached_accuracies(budget, folder: Path, keep) -> dict | None:
    """The test accuracy of each planned run whose key ``keep`` accepts, from the metrics the run cache
    ``folder`` holds: key -> a run with ``accuracy``, the ``done`` that :func:`curve` reads; ``None``
    when any of them is not there."""
    done = {}
    for key, config in planned_runs(budget).items():
        if keep(key):
            metrics = folder / runs.run_key(config) / "metrics.json"
            if not metrics.is_file():
                return None
            done[key] = SimpleNamespace(accuracy=json.loads(metrics.read_text())["test_accuracy"])
    return done


def _on_a_curve(key, worlds) -> bool:
    """Whether ``key`` is a run of the CNN's curve in one of ``worlds`` or of the TinyViT's plain curve."""
    return isinstance(key, tuple) and len(key) == 4 and key[3] in worlds and (key[0] == "cnn" or key[3] == "plain")


def measured_ladder(budget=None, folder: Path | str | None = None) -> tuple[dict, float] | None:
    """:func:`ladder_at_largest` from the metrics the run cache ``folder`` (default: the book's) holds for
    ``budget`` (default: the quick profile's), without training or loading a model; ``None`` when any of
    those runs is not there (a checkout that has not built the chapter, or an installed package)."""
    budget = profile.budget("quick") if budget is None else budget
    folder = runs.runs_folder() if folder is None else Path(folder)
    largest, ladder = budget.train_sizes[-1], plan.ladder(budget)
    done = _cached_accuracies(budget, folder, lambda key: _on_a_curve(key, ladder) and key[1] == largest)
    return None if done is None else ladder_at_largest(budget, done)


def ladder_places(budget, folder: Path | str) -> dict | None:
    """Where the TinyViT passes the CNN in each world of the ladder, from the metrics the run cache
    ``folder`` holds (as the page computes it, without training or loading a model): world ->
    :func:`vitbias.scaling.overtaking_spread` of the CNN's curve there against the TinyViT's plain
    curve; ``None`` when any of those runs is not there. Run on two caches of the same runs (the build's
    kernels and the generic ones), it shows which rungs keep their place on another CPU."""
    sizes, ladder = budget.train_sizes, plan.ladder(budget)
    done = _cached_accuracies(budget, Path(folder), lambda key: _on_a_curve(key, ladder))
    if done is None:
        return None
    vit = curve(done, budget, "vit")
    return {w: scaling.overtaking_spread(sizes, curve(done, budget, "cnn", w), vit) for w in ladder}


def fitted_laws(budget, accuracy: dict) -> dict:
    """model -> the power law through its mean test errors above the test set's resolution;
    ``accuracy``: model -> ``(sizes, seeds)``."""
    return {m: scaling.power_law(budget.train_sizes, 1 - values.mean(axis=1), 1 / budget.test_size)
            for m, values in accuracy.items()}


def _for_good(flags) -> int | None:
    """The first index from which on every flag holds, ``None`` when the last does not."""
    return next((i for i in range(len(flags)) if all(flags[i:])), None)


def _check_runs(budget, done: dict) -> None:
    wanted = (set(planned_runs(budget)) - {("pretraining", s) for s in budget.seeds}
              | {("vit", "half steps", s) for s in budget.seeds[:HALF_STEP_SEEDS]})
    missing = sorted(map(str, wanted - set(done)))
    if missing:
        raise ValueError(f"done must hold the runs of planned_runs(budget) and the TinyViT's half-step runs; "
                         f"missing {len(missing)}: {', '.join(missing[:3])}")


def measure(budget, done: dict, built: dict) -> Evidence:
    """The chapter's evidence but the twin trainings' and the probe's, which the page adds to it when it
    has run them (:func:`add_twins`, :func:`add_probe`).

    ``done``: the runs of :func:`planned_runs` by key, each with
    ``accuracy``, ``train_accuracy`` and ``config``; ``built``: ``"cnn"`` and
    ``"vit"`` -> the model built from the budget's configuration, whose
    parameters are counted.
    """
    _check_runs(budget, done)
    if set(built) != set(MODELS):
        raise ValueError(f"built must map {tuple(MODELS)} to their models, got {tuple(built)}")
    found, sd = Evidence("crossover"), one_run_sds(budget)
    accuracy = {m: curve(done, budget, m) for m in MODELS}
    fitted = {m: curve(done, budget, m, metric="train_accuracy") for m in MODELS}
    _testbed(found, budget)
    _models(found, budget, {m: models.parameter_count(model) for m, model in built.items()})
    _curves(found, budget, accuracy, fitted, sd)
    exponent = _power_laws(found, budget, accuracy)
    _data_hunger(found, budget, done, accuracy, fitted, sd)
    _slopes(found, budget, accuracy, exponent)
    _ladder(found, budget)
    _worlds(found, budget, done, accuracy, sd)
    _toy(found)
    _theorem_and_control(found, budget, done, sd)
    _recipe(found, budget, done, sd)
    _source(found, budget, accuracy)
    return found


def _testbed(found: Evidence, budget) -> None:
    """The world, the recipe and each model's step rule: the shared one for the CNN, the budget's
    fitting rule for the TinyViT."""
    sizes, batch = budget.train_sizes, budget.train["batch_size"]
    vit_rule = {key: budget.fitted.get("vit", {}).get(key, getattr(budget, key)) for key in profile.STEP_RULE}
    passes = {m: [budget.steps(n, m) * batch / n for n in sizes] for m in MODELS}
    capped = [n for n in sizes if budget.steps(n, "cnn") == budget.max_steps]
    for name, value in {
        "cross_profile": profile.current_profile(), "cross_dataset": DATASETS[budget.dataset["name"]],
        "cross_n_sizes": len(sizes), "cross_size_span": sizes[-1] / sizes[0],
        "cross_n_seeds": len(budget.seeds), "cross_size_0": sizes[0], "cross_size_last": sizes[-1],
        "cross_test_size": budget.test_size, "cross_batch": batch, "cross_epochs": budget.epochs,
        "cross_min_steps": budget.min_steps, "cross_max_steps": budget.max_steps,
        "cross_lr": budget.train["lr"], "cross_weight_decay": budget.train["weight_decay"],
        "cross_classes": len(data.SHAPE_CLASSES), "cross_vit_epochs": vit_rule["epochs"],
        "cross_vit_min_steps": vit_rule["min_steps"], "cross_vit_max_steps": vit_rule["max_steps"],
        "cross_vit_grow_from": vit_rule["grow_from"], "cross_vit_growth": vit_rule["growth"],
        "cross_steps_0": budget.steps(sizes[0], "cnn"), "cross_steps_last": budget.steps(sizes[-1], "cnn"),
        "cross_vit_steps_last": budget.steps(sizes[-1], "vit"), "cross_epochs_last": passes["cnn"][-1],
        "cross_epochs_0": passes["cnn"][0], "cross_vit_epochs_last": passes["vit"][-1],
        "cross_first_capped": capped[0] if capped else 0,
    }.items():
        found.number(name, value)
    found.claim("the step cap binds from some size on, the largest among them",
                bool(capped) and capped[-1] == sizes[-1])
    found.claim("the TinyViT's passes grow beyond a size inside the sizes measured",
                0 < vit_rule["grow_from"] < sizes[-1] and vit_rule["growth"] > 0)
    found.claim("the TinyViT's step rule gives it at least the CNN's steps at every size and more at the "
                "largest", all(budget.steps(n, "vit") >= budget.steps(n, "cnn") for n in sizes)
                and budget.steps(sizes[-1], "vit") > budget.steps(sizes[-1], "cnn"))


def _models(found: Evidence, budget, params: dict) -> None:
    """The two architectures: ``params``, model -> its parameter count."""
    cnn, vit = budget.cnn, budget.vit
    for name, value in {
        "cross_cnn_params": params["cnn"], "cross_cnn_layers": sum(cnn["depth"]),
        "cross_cnn_width_first": cnn["channels"][0], "cross_cnn_width_last": cnn["channels"][-1],
        "cross_vit_params": params["vit"], "cross_vit_patch": vit["patch_size"],
        "cross_vit_tokens": (vit["img_size"] // vit["patch_size"]) ** 2, "cross_vit_depth": vit["depth"],
        "cross_vit_width": vit["embed_dim"],
    }.items():
        found.number(name, value)
    found.claim("the CNN is the smaller of the two models", params["cnn"] < params["vit"])


def _curves(found: Evidence, budget, accuracy: dict, fitted: dict, sd: dict) -> None:
    """Both models' test accuracy at every size and training accuracy at the ends, on the plain images:
    ``accuracy`` and ``fitted``, model -> ``(sizes, seeds)``."""
    sizes = budget.train_sizes
    for m, name in MODELS.items():
        for i, n in enumerate(sizes):
            found.trained(f"cross_{m}_acc_{i}", accuracy[m][i], sd[m, n],
                          what=f"test accuracy of the {name} trained on {n:,} images")
        found.trained(f"cross_{m}_acc_last", accuracy[m][-1], sd[m, sizes[-1]],
                      what=f"test accuracy of the {name} trained on the largest set")
        for tag, i in (("0", 0), ("last", -1)):
            found.trained(f"cross_{m}_train_acc_{tag}", fitted[m][i], sd["train"],
                          what=f"training accuracy of the {name} trained on {sizes[i]:,} images")
        found.trained(f"cross_{m}_train_acc_min_0", fitted[m][0].min(), sd["train"],
                      what=f"the lowest training accuracy of a seed of the {name} at {sizes[0]:,} images")
    found.claim(f"both models learn their smallest training set by heart, every seed at least {BY_HEART}",
                all(fitted[m][0].min() >= BY_HEART for m in MODELS))
    found.claim(f"the CNN's mean on the smallest set is at most {CEILING}, so its curve can climb",
                accuracy["cnn"][0].mean() <= CEILING)


def _power_laws(found: Evidence, budget, accuracy: dict) -> dict:
    """A power law through each seed's errors above the test set's resolution; returns model ->
    ``(seeds,)`` exponents, whose mean and spread over seeds are glued."""
    resolution, laws = 1 / budget.test_size, fitted_laws(budget, accuracy)
    exponent = {m: np.array([scaling.power_law(budget.train_sizes, 1 - accuracy[m][:, j], resolution).exponent
                             for j in range(len(budget.seeds))]) for m in MODELS}
    sd = exponent_sd()
    for m, values in exponent.items():
        found.trained(f"cross_{m}_exponent", values, sd,
                      what=f"exponent of a power law fitted to the errors of one seed of the {MODELS[m]}")
        found.number(f"cross_{m}_exponent_sd", values.std(ddof=1), abs=band(sd, len(budget.seeds)),
                     why="standard deviation over seeds of fitted exponents, which moves with them: the band "
                         "of their mean")
        found.number(f"cross_{m}_fit_from", laws[m].used[0])
        found.number(f"cross_{m}_fit_to", laws[m].used[-1])
    return exponent


STEPS_READING = {
    "more": f"{{apart:.3f}} above the limit of {LIMITED}, more than the {{resolvable:.3f}} its {{seeds}} "
            "seeds resolve, so the largest point is still limited by our compute: it is a lower bound on "
            "what those images can teach the TinyViT, and more steps would raise it",
    "less": f"{{apart:.3f}} below the limit of {LIMITED}, more than the {{resolvable:.3f}} its {{seeds}} "
            "seeds resolve, so more steps would buy little: the largest point measures the data, not our "
            "compute",
    "same, within": f"within the limit of {LIMITED} that we allow a doubling (below it by {{apart:.3f}}), "
                    "so on average more steps would buy little; the seeds disagree by more than that, "
                    "though, and resolve only differences of {resolvable:.3f} or more, so they do not show "
                    "that it would buy nothing",
    "same, beyond": f"{{apart:.3f}} above the limit of {LIMITED}, less than the {{resolvable:.3f}} its "
                    "{seeds} seeds resolve, so these seeds cannot say whether the largest point is limited "
                    "by our compute; it may be a lower bound on what those images can teach the TinyViT",
    # one seed: no test, only the side of the limit its gain lies on
    "one, within": f"within the limit of {LIMITED} that we allow a doubling (below it by {{apart:.3f}}), so "
                   "more steps would buy this seed little; one seed is not a test, though, and another seed "
                   "could land on the other side of the limit",
    "one, beyond": f"{{apart:.3f}} above the limit of {LIMITED} that we allow a doubling, so this seed's "
                   "point is still limited by our compute and may be a lower bound on what those images can "
                   "teach the TinyViT; one seed is not a test, though, and another could land below the limit"}


def _data_hunger(found: Evidence, budget, done: dict, accuracy: dict, fitted: dict, sd: dict) -> None:
    """Who wins at each size (Welch's t test on the seeds), how well each model fits, and whether the
    TinyViT's largest point is limited by its steps: each seed's run there with half its steps, paired
    with its full run (the same images and initial weights)."""
    sizes, chance = budget.train_sizes, 1 / len(data.SHAPE_CLASSES)
    found.number("cross_chance", chance)
    wins = {compare(c, v) for c, v in zip(accuracy["cnn"], accuracy["vit"])}
    found.verdict("cross_wins_text", "the CNN wins at every size" if wins == {"more"} else
                  "the TinyViT wins at every size" if wins == {"less"} else "neither model wins at every size")
    found.compared("cross_acc_0_text", accuracy["cnn"][0], accuracy["vit"][0],
                   more="ahead of the TinyViT", less="behind the TinyViT",
                   same="{apart:.3f} from the TinyViT, a difference {seeds} seeds cannot resolve (they "
                        "resolve only {resolvable:.3f} or more)")
    found.claim("the TinyViT on the smallest set is below twice chance", accuracy["vit"][0].mean() < 2 * chance)
    found.number("cross_fits", FITS)
    for m, name in MODELS.items():
        lowest = int(np.argmin(fitted[m].mean(axis=1)))
        found.trained(f"cross_{m}_fit_min", fitted[m][lowest], sd["train"],
                      what=f"the lowest mean training accuracy over the sizes of the {name}")
    found.claim(f"both models fit every training set: the lowest mean training accuracy at least {FITS}",
                all(fitted[m].mean(axis=1).min() >= FITS for m in MODELS))
    half_seeds = [s for s in budget.seeds[:HALF_STEP_SEEDS] if ("vit", "half steps", s) in done]
    half = [done["vit", "half steps", s] for s in half_seeds]
    full = accuracy["vit"][-1][:len(half)]  # the same seeds' full runs (accuracy's seeds are budget.seeds)
    gains = full - np.array([run.accuracy for run in half])  # (half-step seeds,)
    found.number("cross_steps_limited_at", LIMITED)
    found.number("cross_half_steps", half[0].config["train"]["steps"])
    found.number("cross_half_seeds_text", "the first seed's TinyViT" if len(half) == 1 else
                 f"the first {len(half)} seeds' TinyViTs, on average,")
    found.number("cross_half_same_text", "the same seed scored" if len(half) == 1 else
                 "the same seeds scored, on average,")
    # The half-step run is read with the sds of the full run at the same size (one seed has no spread of
    # its own). A seed's gain from half its steps to all of them is the difference of two runs that no
    # longer move together on another CPU (measured: a mean gain of 0.026 over three seeds on one CPU,
    # -0.002 on another), so its sd is made of theirs.
    found.trained("cross_vit_half_acc", [run.accuracy for run in half], sd["vit", sizes[-1]],
                  what="test accuracy of the TinyViT on the largest set with half its steps")
    found.trained("cross_vit_half_pair_acc", full, sd["vit", sizes[-1]],
                  what="test accuracy of the same seeds' TinyViTs on the largest set with all their steps")
    found.trained("cross_steps_doubling_gain", gains, float(np.hypot(sd["vit", sizes[-1]], sd["vit", sizes[-1]])),
                  what="what doubling the TinyViT's steps on the largest set gains, seed by seed")
    found.trained("cross_half_fit", [run.train_accuracy for run in half], sd["train"],
                  what="training accuracy of the TinyViT on the largest set with half its steps")
    if len(gains) == 1:
        reading = "one, within" if gains.mean() <= LIMITED else "one, beyond"
    else:  # unresolved, the mean's side of the limit still says which way the seeds lean
        reading = compare(gains, LIMITED)
        if reading == "same":
            reading = "same, within" if gains.mean() <= LIMITED else "same, beyond"
    numbers = {"apart": abs(gains.mean() - LIMITED)} if len(gains) == 1 else compared_numbers(gains, LIMITED)
    found.verdict("cross_steps_reading", STEPS_READING[reading].format(**numbers))
    first = _for_good([compare(a, accuracy["vit"][-1]) == "more" for a in accuracy["cnn"]])
    found.verdict("cross_cnn_beats_text", f"once it has {sizes[first]:,} images of its own" if first is not None
                  else "with none of the training sets measured here")


MEET = {"more": "move apart as data grow and predict no crossing at any larger size",
        "same": "have slopes the seeds cannot tell apart and predict no crossing",
        "less": "close in on each other, the TinyViT's error falling faster, and would meet beyond the sizes "
                "measured"}


def _slopes(found: Evidence, budget, accuracy: dict, exponent: dict) -> None:
    """Which error falls faster (Welch's t test on the seeds' exponents), and where the fitted laws meet:
    nowhere ahead when the CNN's is the steeper or the seeds cannot tell, else where they cross."""
    slopes = exponent["cnn"], exponent["vit"]
    steeper = found.compared("cross_faster", *slopes, more="faster than", less="more slowly than",
                             same="neither faster nor slower, as far as {seeds} seeds can tell (exponents "
                                  "{apart:.2f} apart, where they resolve only {resolvable:.2f} or more), than")
    found.compared("cross_toy_text", *slopes, more="there is nothing for the TinyViT to overtake",
                   less="the TinyViT closes in on it", same="neither closes in on the other")
    found.verdict("cross_meet_text", MEET[steeper])
    laws = fitted_laws(budget, accuracy)
    found.claim("where the TinyViT's error falls faster, the fitted laws meet beyond the sizes measured",
                steeper != "less" or scaling.crossing(laws["cnn"], laws["vit"]) > budget.train_sizes[-1])


def _ladder(found: Evidence, budget) -> None:
    """The worlds: after the shuffle, blocks of growing size, the last the whole patch; and the controls."""
    ladder, patch = plan.ladder(budget), budget.vit["patch_size"]
    blocks = plan.world_blocks(patch)
    found.number("cross_block_0", blocks[0])
    found.number("cross_n_rungs", len(ladder) - 1)
    found.number("cross_n_worlds", len(plan.worlds(budget)) - 1)
    found.number("cross_n_controls", len(plan.CONTROL_WORLDS))
    found.claim("after the shuffle the rungs permute pixels in blocks of growing size, the last the whole "
                "patch", len(blocks) >= 2 and blocks[-1] == patch and len(ladder) == 2 + len(blocks)
                and ladder[:2] == ("plain", "patches shuffled") and all(np.diff(blocks) > 0))


ORDER = {
    "monotone": "never comes later as the rungs go up, and comes earlier on the last rung than on the "
                "first: the more wrong the convolution's assumption, the fewer images the TinyViT needs "
                "to win",
    "earlier": "comes earlier on the last rung than on the first, though not at every step up the ladder: "
               "where both models are close to chance, three seeds cannot order neighbouring rungs",
    "not earlier": "does not come earlier on the last rung than on the first, so these measurements do not "
                   "show the toy's direction"}


def _worlds(found: Evidence, budget, done: dict, accuracy: dict, sd: dict) -> None:
    """The CNN in every world of the ladder, and where the TinyViT (its plain curve, by the theorem)
    passes it in each, from the seed means."""
    sizes, ladder = budget.train_sizes, plan.ladder(budget)
    plain, most_scrambled = ladder[0], ladder[-1]
    cnn_in = {w: curve(done, budget, "cnn", w) for w in ladder}
    cnn_fit_in = {w: curve(done, budget, "cnn", w, "train_accuracy") for w in ladder}
    for world in ladder:
        for i, tag in ((0, "0"), (-1, "last")):
            found.trained(f"cross_world_{world_slug(world)}_cnn_{tag}", cnn_in[world][i], sd["cnn", sizes[i]],
                          what=f"test accuracy of the CNN in the world {world!r} at {sizes[i]:,} images")
    for i, tag in ((0, "0"), (-1, "last")):
        found.trained(f"cross_world_top_cnn_{tag}", cnn_in[most_scrambled][i], sd["cnn", sizes[i]],
                      what=f"test accuracy of the CNN in the most scrambled world at {sizes[i]:,} images")
    world, i = min(((w, i) for w in ladder for i in range(len(sizes))), key=lambda wi: cnn_fit_in[wi[0]][wi[1]].mean())
    lowest = found.trained("cross_world_cnn_fit_min", cnn_fit_in[world][i], sd["train"],
                           what="the lowest mean training accuracy of the CNN over the rungs of the ladder and "
                                "the sizes")
    found.verdict("cross_world_cnn_fit_where", f"{world}, at {sizes[i]:,} images")
    found.verdict("cross_world_cnn_fit_text", "so it fits every rung's training sets" if lowest >= FITS else
                  f"short of the {FITS:.2f} we count as fitting: where the CNN does not learn a set by heart in "
                  "its budget of steps, its point is a lower bound on what those images can teach it")
    costs = [compare(cnn_in[a][-1], cnn_in[b][-1]) for a, b in zip(ladder, ladder[1:])]
    found.verdict("cross_world_cnn_steps", "every rung costs it accuracy" if set(costs) == {"more"}
                  else "not every rung costs it accuracy that its seeds resolve")
    found.claim("the CNN on the largest set falls from the plain images to the last rung",
                compare(cnn_in[plain][-1], cnn_in[most_scrambled][-1]) == "more")
    found.claim("on the last rung the CNN is below its plain self at every size",
                all(compare(a, b) == "more" for a, b in zip(cnn_in[plain], cnn_in[most_scrambled])))
    # Where the TinyViT passes the CNN, from the seed means: "before" the smallest size, "inside" or
    # "beyond" the largest. Either count can move by one on another CPU, where a crossing near a size's
    # edge moves across it.
    passes = {w: scaling.overtaking(sizes, cnn_in[w].mean(axis=1), accuracy["vit"].mean(axis=1))
              for w in ladder}  # world -> (where, size)
    found.number("cross_n_crossed", sum(where != "beyond" for where, _ in passes.values()), abs=1,
                 why="how many worlds' crossings the seed means put inside the sizes or before them")
    found.number("cross_inside_rungs", sum(passes[w][0] == "inside" for w in ladder if w != plain), abs=1,
                 why="how many scrambled worlds' crossings the seed means put between two sizes")
    # The exercise page's ladder_winners reads the same seed means: the worlds where the TinyViT's plain
    # accuracy (its accuracy in every world, by the theorem) is ahead at the end.
    won = scaling.ladder_winners(*ladder_at_largest(budget, done))
    if won != [w for w, (where, _) in passes.items() if where != "beyond"]:
        raise ValueError(f"scaling.ladder_winners ({won}) disagrees with the crossings {passes}")
    # Where each scrambled world's crossing falls: before the smallest size counts as 0, beyond the
    # largest as infinite.
    position = [{"before": 0.0, "beyond": np.inf}.get(passes[w][0], passes[w][1]) for w in ladder[1:]]
    earlier = position[-1] < position[0]
    never_later = all(b <= a for a, b in zip(position, position[1:]))
    found.verdict("cross_world_order_text",
                  ORDER["monotone" if never_later and earlier else "earlier" if earlier else "not earlier"])


def _toy(found: Evidence) -> None:
    """The bias toy's crossing from its formula, ``N* = n + 1 + sigma^2 n / beta^2``, at two drifts."""
    rows = toy.crossover_rows_for(toy.Toy(), list(TOY_BETAS))
    for i, beta in enumerate(TOY_BETAS):
        found.number(f"cross_toy_beta_{i}", beta)
        found.number(f"cross_toy_rows_{i}", rows[i])
    found.claim("the toy's crossing comes sooner at the larger drift", rows[0] > rows[1])


def _theorem_and_control(found: Evidence, budget, done: dict, sd: dict) -> None:
    """The TinyViT trained on the last rung against the plain images, an equivalence test paired by
    seed (a seed draws the same training images, rearranged, and the same initial weights); and both
    models in the controls, which the theorem does not cover, against the plain images (a one-sample t
    test of the seeds' differences)."""
    n, control_n = plan.world_check_sizes(budget)
    most_scrambled, controls, seeds = plan.ladder(budget)[-1], plan.CONTROL_WORLDS, budget.seeds
    found.number("cross_check_theorem", n)
    found.number("cross_check_control", control_n)
    found.number("cross_vit_margin", MARGIN)
    found.number("cross_alpha", ALPHA)
    vit_in = {w: np.array([done["vit", n, s, w].accuracy for s in seeds]) for w in ("plain", most_scrambled)}
    found.trained("cross_top_vit", vit_in[most_scrambled], sd["vit", n],
                  what=f"test accuracy of the TinyViT in the most scrambled world at {n:,} images")
    found.trained("cross_plain_vit", vit_in["plain"], sd["vit", n],
                  what=f"test accuracy of the TinyViT on the plain images at {n:,} images")
    cnn_cost = np.array([done["cnn", n, s, "plain"].accuracy - done["cnn", n, s, most_scrambled].accuracy
                         for s in seeds])
    found.trained("cross_top_cnn_cost", cnn_cost, sd["cnn", n] * np.sqrt(2),
                  what=f"the small CNN's accuracy on the plain images minus in the most scrambled world, "
                       f"{n:,} images")
    found.equivalent("cross_top_vit_equal", vit_in[most_scrambled], vit_in["plain"], MARGIN,
                     contrast=float(cnn_cost.mean()), paired=True, equal="agree within it",
                     unresolved="are not shown to agree within it (these seeds show agreement only "
                                "within {shown:.2f})")
    control_acc = {(m, w): np.array([done[m, control_n, s, w].accuracy for s in seeds])
                   for m in MODELS for w in ("plain", *controls)}
    for c, world in enumerate(controls):  # the glued names number the controls
        for m in MODELS:
            found.trained(f"cross_control_{c}_{m}", control_acc[m, world], sd[m, control_n],
                          what=f"test accuracy of the {MODELS[m]} in the control world {world!r}")
            found.compared(f"cross_control_{c}_{m}_text", control_acc[m, world] - control_acc[m, "plain"], 0.0,
                           more="above", less="below",
                           same="not distinguishable ({apart:.3f} apart, where its {seeds} seeds resolve only "
                                "{resolvable:.3f} or more) from")
    vit_hurt = compare(control_acc["vit", controls[0]] - control_acc["vit", "plain"], 0.0) == "less"
    found.verdict("cross_control_reading",
                  "So the TinyViT does assume something about pixels after all: that a position inside a patch "
                  "means the same thing in every patch, which its one shared patch embedding builds in. Where "
                  "that is false, it pays too." if vit_hurt else
                  "The control does not cost the TinyViT what the theorem leaves it free to cost it, at this "
                  "size and with these seeds.")


def _recipe(found: Evidence, budget, done: dict, sd: dict) -> None:
    """Both models at the recipe's size with and without crop and flip, over :func:`recipe_seeds`. A seed
    pairs the two runs (the same training images and initial weights, only the augmentation differs),
    so each change is a one-sample t test of the seeds' differences against zero, and its band is made
    of the sd of those differences."""
    n, augment = budget.recipe_size, budget.train["augment"]
    found.number("cross_recipe_size", n)
    found.number("cross_recipe_passes", plan.AUGMENTED_PASSES)
    for m in MODELS:
        found.number(f"cross_recipe_{m}_n_seeds", len(recipe_seeds(budget, m)))
    found.number("cross_recipe_default", "with" if augment else "without")
    found.number("cross_recipe_other", "without them" if augment else "with them switched on")
    # planned_runs' (model, seed) runs have the recipe switched, its (model, "recipe default", seed) not
    runs = {(m, aug): [done[m, s] if aug != augment else done[m, "recipe default", s] for s in recipe_seeds(budget, m)]
            for m in MODELS for aug in (False, True)}
    acc = {(m, aug, kind): np.array([r.accuracy if kind == "test" else r.train_accuracy for r in runs[m, aug]])
           for m in MODELS for aug in (False, True) for kind in ("test", "train")}
    for (m, aug, kind), values in acc.items():
        where = "recipe switched" if aug != augment else "recipe default"
        found.trained(f"cross_recipe_{m}_{'aug' if aug else 'plain'}_{kind}", values,
                      sd["train" if kind == "train" else m, where],
                      what=f"{kind} accuracy of the {MODELS[m]} at {n:,} images, "
                           f"{'with' if aug else 'without'} crop and flip")
    # The augmented runs train longer so as to fit: say which model does, and which falls short.
    short = [MODELS[m] for m in MODELS if acc[m, True, "train"].mean() < FITS]
    found.verdict("cross_recipe_aug_fit_text",
                  "and with it both models fit their training images" if not short else
                  f"and with it the {' and the '.join(n for n in MODELS.values() if n not in short)} "
                  f"fits its training images, while the {' and the '.join(short)} still falls short of the "
                  f"{FITS} we count as fitting" if len(short) < len(MODELS) else
                  f"yet with it neither model reaches the {FITS} we count as fitting")
    found.claim(f"without crop and flip both models learn the recipe's set by heart, every seed at least "
                f"{BY_HEART}", all(acc[m, False, "train"].min() >= BY_HEART for m in MODELS))
    found.claim(f"without crop and flip both models' test accuracy is more than {GENERALISES_WORSE} below "
                f"their training accuracy", all(acc[m, False, "train"].mean() - acc[m, False, "test"].mean()
                                                > GENERALISES_WORSE for m in MODELS))
    for m in MODELS:
        test, fit = [acc[m, True, kind] - acc[m, False, kind] for kind in ("test", "train")]
        found.trained(f"cross_recipe_{m}_change", np.sign(test.mean()) * test, sd[m, "recipe change"],
                      what=f"size of the change of the {MODELS[m]}'s test accuracy with crop and flip")
        found.compared(f"cross_recipe_{m}_direction", test, 0.0, more="rises", less="falls",
                       same="changes by less than the {resolvable:.3f} its {seeds} seeds can resolve, moving")
        # seed by seed the same share (both fit every image, say): nothing apart, nothing to resolve
        found.compared(f"cross_recipe_{m}_fits", fit, 0.0, more="fits its training images better",
                       less="fits its training images less well",
                       same="fits its training images exactly as well, seed by seed" if not np.any(fit) else
                            "changes how well it fits its training images by less than the "
                            "{resolvable:.3f} its {seeds} seeds can resolve")
        found.compared(f"cross_recipe_{m}_reading", test, 0.0,
                       more="turns the hint into test accuracy",
                       less="pays for the harder question with test accuracy, even trained for longer",
                       same="gains nothing its seeds can resolve")


def _source(found: Evidence, budget, accuracy: dict) -> None:
    """The lab this chapter follows, as printed there, and how our measurements stand to it."""
    lab = SOURCE_LAB
    found.number("cross_images_in21k_m", literature.PRETRAINING_IMAGES["ImageNet-21k"].value / 1e6)
    found.number("cross_src_steps", lab["steps"])
    found.number("cross_src_batch", lab["batch"])
    found.number("cross_src_images_seen", lab["steps"] * lab["batch"])
    found.number("cross_src_cnn_params", lab["cnn_params"])
    found.number("cross_src_vit_params", lab["vit_params"])
    for i in range(3):
        found.number(f"cross_src_cnn_{i}", lab["cnn"][i])
        found.number(f"cross_src_vit_{i}", lab["vit"][i])
        found.number(f"cross_src_size_{i}", lab["sizes"][i])
    for key in ("noaug_cnn", "noaug_vit", "noaug_loss_cnn", "noaug_loss_vit", "probe", "probe_random"):
        found.number(f"cross_src_{key}", lab[key])
    found.number("cross_recipe_default_text",
                 "ours uses them too" if budget.train["augment"] else "ours trains without them")
    found.claim("the source's CNN wins at every size", all(c > v for c, v in zip(lab["cnn"], lab["vit"])))
    found.claim("the source's ViT gained nothing from the middle size to the largest", lab["vit"][2] <= lab["vit"][1])
    found.claim("crop and flip helped the source's ViT", lab["noaug_vit"] < lab["vit"][1])
    found.claim("without crop and flip the source's CNN stayed where it was, at two decimals",
                lab["noaug_cnn"] == lab["cnn"][1])
    found.claim("without crop and flip the source's CNN's loss is far below its ViT's",
                10 * lab["noaug_loss_cnn"] < lab["noaug_loss_vit"])
    found.claim("our CNN on the largest set is above anything the source's CNN reached",
                compare(accuracy["cnn"][-1], max(lab["cnn"])) == "more")


def add_undecided(found: Evidence, budget, passes: dict) -> None:
    """Adds to ``found`` how many scrambled worlds' crossings the seeds leave undecided. ``passes``: each
    world of the ladder, in its order, -> :func:`vitbias.scaling.overtaking_spread` of the CNN's curve
    there against the TinyViT's; a world is undecided when no place of :data:`vitbias.scaling.WHERE` has
    :data:`DECIDED` of the bootstrap's draws."""
    ladder = plan.ladder(budget)
    if list(passes) != list(ladder):
        raise ValueError(f"passes must map the ladder's worlds {ladder}, in order, got {tuple(passes)}")
    undecided = [w for w in ladder[1:] if max(passes[w].shares[where] for where in scaling.WHERE) < DECIDED]
    found.number("cross_decided_share", DECIDED)
    # Measured: the same three rungs are undecided on the build's CPU kernels and on the generic ones,
    # the most decided of them at 0.92 on both; one rung more or less moves the count by one.
    found.number("cross_n_undecided", len(undecided), abs=1,
                 why="how many scrambled worlds' crossings no place holds in the bootstrap's share DECIDED")
    found.verdict("cross_undecided_lead", UNDECIDED_LEAD[bool(undecided)])
    found.verdict("cross_undecided_text", UNDECIDED_TEXT[bool(undecided)])
    below = budget.train_sizes[-2]
    found.claim("the undecided crossings lie near the smallest sizes",
                all(passes[w].where == "before" or (passes[w].where == "inside" and passes[w].size < below)
                    for w in undecided))


def add_twins(found: Evidence, losses, weight_drift: float, steps: int) -> None:
    """Adds to ``found`` (the chapter's :func:`measure`) the twin trainings of the last rung
    (:func:`vitbias.twins.twin_trainings`): ``losses``, the two loss curves ``(2, steps)``;
    ``weight_drift``, how far the twin's final weights lie from the original's, permuted."""
    losses = np.asarray(losses)
    if losses.shape != (2, steps):
        raise ValueError(f"losses must be two curves of {steps} steps, got shape {losses.shape}")
    # With crop and flip on, this short run does not fit its images, and the theorem needs no fit; but
    # twins that learn nothing would test nothing.
    if not losses[0, -steps // 10:].mean() < 0.8 * losses[0, 0]:
        raise ValueError("the twins did not learn: their loss over the last tenth of the steps is not below "
                         "0.8 of the first")
    found.rounding("cross_pixel_max_loss_diff", np.abs(losses[0] - losses[1]).max(), TWINS_ROUNDING, why=ROUNDING)
    found.rounding("cross_pixel_weight_drift", weight_drift, TWINS_ROUNDING, why=ROUNDING)
    found.number("cross_pixel_steps", steps)


def add_probe(found: Evidence, budget, done: dict, probe_acc: dict) -> None:
    """Adds to ``found`` (the chapter's :func:`measure`) the linear probe of each seed's pretrained
    TinyViT and of its random twin on that seed's labels (``probe_acc``: ``"pretrained"`` and ``"random
    weights"`` -> ``(seeds,)``), against the models trained end to end on those labels (Welch's t test on
    the seeds) and against the source's probe."""
    if set(probe_acc) != set(PROBE_TAGS) or any(len(v) != len(budget.seeds) for v in probe_acc.values()):
        raise ValueError(f"probe_acc must map {tuple(PROBE_TAGS)} to one accuracy per seed, got {probe_acc!r}")
    sizes, sd = budget.train_sizes, one_run_sds(budget)
    accuracy = {m: curve(done, budget, m) for m in MODELS}
    found.number("cross_probe_labels", budget.probe_labels)
    found.number("cross_pretrain_images", budget.pretrain.get("data", {}).get("train", 0))
    for name, tag in PROBE_TAGS.items():
        found.trained(f"cross_probe_{tag}", probe_acc[name], probe_sd(name),
                      what=f"linear probe of a TinyViT with {name} on its seed's labels")
    at_probe = sizes.index(budget.probe_labels)
    for m in MODELS:
        found.trained(f"cross_probe_{m}_same", accuracy[m][at_probe], sd[m, budget.probe_labels],
                      what=f"test accuracy of the {MODELS[m]} trained on the probe's labels")
    probed, end_to_end = np.array(probe_acc["pretrained"]), accuracy["vit"][at_probe]
    found.compared("cross_probe_vs_random", probed, probe_acc["random weights"],
                   more="beat", less="fall short of", same=TOO_CLOSE)
    found.compared("cross_probe_vs_vit", probed, end_to_end, more="beat", less="fall short of", same=TOO_CLOSE)
    found.compared("cross_probe_bought", probed, end_to_end,
                   more="bought part of", less="did not buy", same="bought nothing measurable of")
    found.compared("cross_probe_vs_cnn", probed, accuracy["cnn"][at_probe], more="above", less="below",
                   same="indistinguishable ({apart:.3f} apart, where {seeds} seeds resolve only "
                        "{resolvable:.3f} or more) from")
    # The smallest set from which on the TinyViT trained from scratch does better than the probe; without
    # one, how the largest set's TinyViT stands to it.
    first = _for_good([compare(a, probed) == "more" for a in accuracy["vit"]])
    top = compared_numbers(accuracy["vit"][-1], probed)
    found.verdict("cross_probe_vit_text", f"needs {sizes[first]:,} labelled images of its own to do better"
                  if first is not None else f"falls short of them even on {sizes[-1]:,} images"
                  if compare(accuracy["vit"][-1], probed) == "less" else
                  f"does not do better even on {sizes[-1]:,} images, where the two are {top['apart']:.3f} "
                  f"apart and its {top['seeds']} seeds resolve only {top['resolvable']:.3f} or more")
    found.compared("cross_probe_vs_source", probed, SOURCE_LAB["probe"],
                   more="stronger than", less="weaker than",
                   same="no stronger or weaker, as far as its {seeds} seeds can tell ({apart:.2f} apart, "
                        "where they resolve only {resolvable:.2f} or more), than")


def planned_runs(budget) -> dict:
    """The runs of the crossover chapter, by key, each model under the step rule under which it fits
    its training set (``runs.experiment(..., fit=True)``):

    - ``(model, n, seed, "plain")``: both models' learning curves on the plain images;
    - ``("cnn", n, seed, world)``: the CNN's curve in every other world of the ladder (:func:`vitbias.plan.ladder`);
      the ViT's is the plain one by the theorem, so it is trained in the most scrambled world only,
      at the first size of :func:`vitbias.plan.world_check_sizes`;
    - ``(model, n, seed, control)``: both models in each control world, at the second of those sizes;
    - ``(model, "recipe default", seed)`` and ``(model, seed)``: the recipe's comparison at
      ``budget.recipe_size``, the default recipe and the recipe switched, for every seed of
      :func:`recipe_seeds` (the default's runs of the budget's seeds are the plain curves' own);
    - ``("vit", "half steps", seed)``: the ViT on the largest set with half its steps, the first
      :data:`HALF_STEP_SEEDS` seeds (paired with its full run: the gain of the doubling is measured seed
      by seed);
    - ``("pretraining", seed)``: the ViT pretrained on other labels, every seed (quick and gpu profiles;
      :func:`vitbias.probe.pretraining_run`).
    """
    sizes, seeds = budget.train_sizes, budget.seeds
    made, rungs = plan.worlds(budget), plan.ladder(budget)

    def fitted(model, n, seed, **options):
        return plan.fitted(budget, model, n, seed, **options)

    wanted = {(m, n, s, "plain"): fitted(m, n, s) for m in plan.MODELS for n in sizes for s in seeds}
    wanted |= {("cnn", n, s, w): fitted("cnn", n, s, **made[w]) for w in rungs[1:] for n in sizes for s in seeds}
    checked = plan.world_check_sizes(budget)
    wanted |= {("vit", checked[0], s, rungs[-1]): fitted("vit", checked[0], s, **made[rungs[-1]]) for s in seeds}
    wanted |= {(m, checked[-1], s, w): fitted(m, checked[-1], s, **made[w])
               for m in plan.MODELS for w in plan.CONTROL_WORLDS for s in seeds}
    switched = not budget.train["augment"]
    wanted |= {(m, "recipe default", s): fitted(m, budget.recipe_size, s)
               for m in plan.MODELS for s in recipe_seeds(budget, m)}
    wanted |= {(m, s): fitted(m, budget.recipe_size, s, augment=switched)
               for m in plan.MODELS for s in recipe_seeds(budget, m)}
    for s in seeds[:HALF_STEP_SEEDS]:
        largest = wanted["vit", sizes[-1], s, "plain"]
        if largest["train"]["steps"] >= 2:  # a one-step run (a test's budget) has no half
            wanted["vit", "half steps", s] = plan.halved(largest)
    if "data" in budget.pretrain:
        wanted |= {("pretraining", s): probe.pretraining_run(budget, s) for s in seeds}
    return wanted


def noise_groups(budget) -> dict[str, dict]:
    """The crossover chapter's runs as groups that differ only by seed, by kind of number: each model's
    test accuracy at each size, over every world trained there (``"cnn, 800 images"``, kinds named by
    :func:`vitbias.noise.accuracy_kind`: a seed's spread depends on how far along its curve the model
    is, so a size is measured where it is read), in the recipe's comparison with its own seeds
    (``"cnn, recipe default"``, ``"cnn, recipe switched"``), and training accuracy: ``"train"`` for the
    runs under the fitting rule, every size and world, and ``"train, recipe default"``, ``"train, recipe
    switched"`` for the others; and the change the page glues, a seed's difference of two of those runs
    (:data:`vitbias.noise.CHANGES`): each model's from the default recipe to the switched one (``"cnn,
    recipe change"``). The pretraining runs score other labels and stay out, and so does the half-step
    run, one seed with no spread to measure."""
    wanted = planned_runs(budget)
    groups: dict[tuple, list] = {}
    for key, config in wanted.items():
        if key[0] == "pretraining" or key[1] == "half steps":
            continue
        # (model, n, seed, world) -> (model, n, world); (model, seed), the recipe switched -> (model, "recipe
        # switched"); (model, "recipe default", seed) -> (model, "recipe default")
        name = (key[0], key[1], key[3]) if len(key) == 4 else (key[0], "recipe switched") if len(key) == 2 \
            else key[:2]
        groups.setdefault(name, []).append(config)
    kinds: dict[str, dict] = {}
    for name, configs in groups.items():
        kinds.setdefault(noise.accuracy_kind(name[0], name[1]), {})[name] = configs
    # Training accuracy: the runs under the fitting rule (every size and world), and each of the two others.
    for name, configs in groups.items():
        kind = "train" if isinstance(name[1], (int, np.integer)) else f"train, {name[1]}"
        kinds.setdefault(kind, {})[name] = configs
    for m in MODELS:
        kinds[noise.accuracy_kind(m, "recipe change")] = {
            (m, "recipe change"): [(wanted[m, "recipe default", s], wanted[m, s]) for s in recipe_seeds(budget, m)]}
    return kinds
