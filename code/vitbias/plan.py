"""Which runs each chapter trains: the run configurations, by chapter, in one place.

A chapter asks for its runs here (``plan.crossover(budget)``) and trains or
reads them with :func:`vitbias.runs.run_many`; the page "How this build was
made" sums their training time from the run cache (:func:`training_seconds`),
and a device run can train a chapter's runs without the chapter. Each function
returns a dict from the key the chapter indexes its runs by to the run's
configuration (:func:`vitbias.runs.experiment`). Runs shared between chapters
(the priors chapter's plain ViT is the crossover chapter's) have the same
configuration, hence the same cache entry, and are trained once.
"""

from __future__ import annotations

import json
from dataclasses import replace

from . import literature, permute, profile, runs, train

MODELS = ("cnn", "vit")
# The priors chapter's routes back to the prior on the testbed's grid are named once, in
# prior_routes below. Hard locality is not among them: on the testbed's 4 x 4 grid a radius-1 window
# leaves nearly half of the attention pairs open, so it trains on the locality grid (LOCAL_ROUTE).
# The routes of the testbed's grid the priors chapter also trains on shuffled images. None: hard
# locality, the prior the shuffle is about, trains on them on the locality grid; the gated route on
# shuffled images (three runs at the largest size) does not fit the build's two-core budget.
SHUFFLED_ROUTES = ()
LOCAL_ROUTE_NAME = "local (radius 1)"
LOCAL_ROUTE = {"local_radius": 1}
TEXTURES = {"plain fill": "none", "predictive texture": "predictive", "random texture": "random"}
ERASE = literature.DEIT_RANDOM_ERASING.value  # DeiT's random-erasing probability


def prior_routes(budget) -> dict[str, tuple[dict | None, bool | None]]:
    """The priors chapter's routes on the testbed's grid: name -> (``RouteViT`` keywords or None,
    augmentation override or None). Hard locality (:data:`LOCAL_ROUTE`) trains on the locality grid."""
    return {
        "gated positional": ({"gated": budget.vit["depth"]}, None),
        "relative bias": ({"relative_bias": True}, None),
        "conv stem": ({"stem": True}, None),
        "crop and flip": (None, True),
        "distilled from the CNN": ({"distill": True}, None),
    }


def world_blocks(patch: int) -> tuple[int, ...]:
    """The block sizes of the ladder's rungs: the powers of two from 2 that divide ``patch``, ``patch`` last."""
    blocks, b = [], 2
    while b <= patch:
        if patch % b == 0:
            blocks.append(b)
        b *= 2
    if patch not in blocks:
        blocks.append(patch)
    return tuple(blocks)


def worlds(budget) -> dict[str, dict]:
    """The crossover chapter's worlds: name -> the keywords of :func:`vitbias.runs.experiment` that make them.

    The ladder, each rung more wrong for a convolution and every one absorbed
    by a ViT (:func:`vitbias.permute.absorb`): the plain images; their patches
    shuffled (the patch shuffle of the other chapters, the same rearrangement);
    then, on top of the shuffle, the pixels permuted inside blocks of growing
    size, the same order in every patch, up to the whole patch. Then the
    control a ViT does not absorb (:data:`CONTROL_WORLDS`): a different pixel
    order in every patch, which breaks what its one shared patch embedding
    assumes. (A permutation of all pixel positions, ``control="global"``,
    breaks that and more; it taught nothing the per-patch control does not,
    and is not trained.)
    """
    patch, seed = budget.vit["patch_size"], budget.permutation_seed

    def world(block, control=None):
        return {"world": {"patch": patch, "shuffle_patches": True, "block": block, "control": control,
                          "seed": seed}}

    found = {"plain": {}, "patches shuffled": {"permute": 1.0}}
    found |= {f"+ pixels in {b} x {b} blocks": world(b) for b in world_blocks(patch)}
    found[CONTROL_WORLDS[0]] = world(0, "per_patch")
    return found


CONTROL_WORLDS = ("control: a pixel order per patch",)


def ladder(budget) -> tuple[str, ...]:
    """The names of the absorbed worlds, from the plain images to the most scrambled."""
    return tuple(name for name in worlds(budget) if name not in CONTROL_WORLDS)


def absorbed_orders(budget, name: str):
    """``(patch_order, pixel_order)`` of a world of the ladder (:func:`vitbias.permute.scramble`'s
    arguments; ``None`` for what it leaves in place): what :func:`vitbias.permute.absorb` takes."""
    if name not in ladder(budget):
        raise ValueError(f"{name!r} is not a world of the ladder {ladder(budget)}")
    made = worlds(budget)[name]
    grid = budget.vit["img_size"] // budget.vit["patch_size"]
    if "world" not in made:
        return (permute.patch_permutation((grid, grid), 1.0, budget.permutation_seed) if made else None), None
    world = made["world"]
    return (permute.patch_permutation((grid, grid), 1.0, world["seed"]),
            permute.block_pixel_order(world["patch"], world["block"], world["seed"] + 1))


def world_pixel_index(budget, name: str):
    """The pixel index ``(H W,)`` of world ``name`` (:func:`vitbias.permute.rearrange`), ``None`` for plain."""
    made = worlds(budget)[name] if name in worlds(budget) else None
    if made is None:
        raise ValueError(f"no world {name!r}: expected one of {tuple(worlds(budget))}")
    size = budget.vit["img_size"]
    if "world" in made:
        return permute.world_index(made["world"], size)
    if not made:
        return None
    return permute.scramble_index(size, budget.vit["patch_size"], absorbed_orders(budget, name)[0])


def world_check_sizes(budget) -> tuple[int, int]:
    """``(theorem size, control size)``: the ViT is trained in the most scrambled world at the middle
    size, where three seeds show the theorem's equality within its margin (at the size before the
    largest the ViT's seeds spread too widely for three to show it), and both models in the control
    world at the size before the largest, where the ViT is well off its floor."""
    sizes = budget.train_sizes
    return sizes[len(sizes) // 2], sizes[-2]


def halved(config: dict) -> dict:
    """``config`` with half its steps (and a tenth of those as warm-up): is the full budget compute-limited?"""
    steps = config["train"]["steps"] // 2
    if steps < 1:
        raise ValueError(f"a run of {config['train']['steps']} steps cannot be halved")
    return {**config, "train": {**config["train"], "steps": steps, "warmup": train.warmup_steps(steps)}}


def crossover(budget) -> dict:
    """The runs of the crossover chapter, by key, each model under the step rule under which it fits
    its training set (``runs.experiment(..., fit=True)``):

    - ``(model, n, seed, "plain")``: both models' learning curves on the plain images;
    - ``("cnn", n, seed, world)``: the CNN's curve in every other world of the ladder (:func:`ladder`);
      the ViT's is the plain one by the theorem, so it is trained in the most scrambled world only,
      at the first size of :func:`world_check_sizes`;
    - ``(model, n, seed, control)``: both models in each control world, at the second of those sizes;
    - ``(model, seed)``: the recipe switched at ``budget.recipe_size``;
    - ``("vit", "half steps", seed)``: the ViT on the largest set with half its steps, every seed
      (paired with its full run: the gain of the doubling is measured seed by seed);
    - ``"pretraining"``: the ViT pretrained on other labels (quick and gpu profiles).
    """
    sizes, seeds = budget.train_sizes, budget.seeds
    made, rungs = worlds(budget), ladder(budget)

    def fitted(model, n, seed, **options):
        return runs.experiment(budget, model, n, seed, fit=True, **options)

    wanted = {(m, n, s, "plain"): fitted(m, n, s) for m in MODELS for n in sizes for s in seeds}
    wanted |= {("cnn", n, s, w): fitted("cnn", n, s, **made[w]) for w in rungs[1:] for n in sizes for s in seeds}
    checked = world_check_sizes(budget)
    wanted |= {("vit", checked[0], s, rungs[-1]): fitted("vit", checked[0], s, **made[rungs[-1]]) for s in seeds}
    wanted |= {(m, checked[-1], s, w): fitted(m, checked[-1], s, **made[w])
               for m in MODELS for w in CONTROL_WORLDS for s in seeds}
    switched = not budget.train["augment"]
    wanted |= {(m, s): fitted(m, budget.recipe_size, s, augment=switched) for m in MODELS for s in seeds}
    for s in seeds:
        largest = wanted["vit", sizes[-1], s, "plain"]
        if largest["train"]["steps"] >= 2:  # a one-step run (a test's budget) has no half
            wanted["vit", "half steps", s] = halved(largest)
    if "data" in budget.pretrain:
        wanted["pretraining"] = runs.pretraining(budget)
    return wanted


# The locality grid: the token grid of the locality chapter's ViTs (and of the priors chapter's
# hard-locality route), at least MIN_LOCALITY_GRID patches a side, so that a head can look near or
# far and a radius-1 window leaves at most a quarter of the attention pairs open. Per profile, the
# keywords of the budget's ViT that change. quick: 4-px patches (8 x 8) in two blocks instead of
# four, at the testbed's width and heads: four blocks on 65 tokens train about 3.4 times as long as
# the testbed's ViT (66 s against 19 s at 800 images, one thread), two blocks about half that, and
# the four-block model learned no more locality (first layer 0.93 of uniform at 2,000 images).
# gpu: a larger grid still, 2-px patches (16 x 16) at the budget's size. full: TinyViT-full reads
# an 8 x 8 grid already.
MIN_LOCALITY_GRID = 6
LOCALITY_VITS = {"quick": {"patch_size": 4, "depth": 2},
                 "gpu": {"patch_size": 2},
                 "full": {}}


def locality_vit(budget) -> dict:
    """The keywords of the budget's ViT that change on the locality grid (:data:`LOCALITY_VITS`).

    A budget that is none of the profiles' halves its patch until the grid has
    at least :data:`MIN_LOCALITY_GRID` patches a side, at its own width.
    """
    for name, known in profile.BUDGETS.items():
        if known == budget:
            return dict(LOCALITY_VITS[name])
    size, patch = int(budget.vit["img_size"]), int(budget.vit["patch_size"])
    while size // patch < MIN_LOCALITY_GRID and patch % 2 == 0:
        patch //= 2
    if size // patch < MIN_LOCALITY_GRID:
        raise ValueError(f"no patch size halved from {budget.vit['patch_size']} gives a grid of at least "
                         f"{MIN_LOCALITY_GRID} x {MIN_LOCALITY_GRID} on {size}-px images")
    return {} if patch == budget.vit["patch_size"] else {"patch_size": patch}


def locality_grid(budget) -> tuple[int, int]:
    """``(grid side, patch size)`` of the locality grid."""
    patch = int(locality_vit(budget).get("patch_size", budget.vit["patch_size"]))
    return int(budget.vit["img_size"]) // patch, patch


def locality_sizes(budget) -> tuple[int, int]:
    """The two training-set sizes of the locality grid's runs: ``budget.route_sizes``, where the plain
    ViT is off its floor and the routes are measured (below them it scores near chance)."""
    return budget.route_sizes[0], budget.route_sizes[-1]


def on_locality_grid(budget, train_size: int, seed: int, **options) -> dict:
    """The run config of the ViT on the locality grid: :func:`vitbias.runs.experiment` with the patch
    and the other keywords of :func:`locality_vit`, under the rule by which the ViT fits its training
    set; ``options`` are that function's (``permute``, ``route``)."""
    changes = locality_vit(budget)
    config = runs.experiment(budget, "vit", train_size, seed, patch=changes.pop("patch_size", None), fit=True,
                             **options)
    config["model"] = {**config["model"], **changes}
    return config


def locality(budget) -> dict:
    """The ViTs on the locality grid: ``(n, seed, shuffled fraction)`` at both :func:`locality_sizes`,
    shuffled at the smaller only, and ``("stem", seed)`` (a convolutional stem) at the smaller.

    The shuffled and stem runs are contrasts with the plain ViT, and the smaller size is where they
    can show something: there hard locality stands above the plain ViT (at the larger the two are
    level, so a shuffle has no gap to close); each run there also costs three eighths of one at the
    larger, which keeps a cold build of the quick profile within its time."""
    small, large = locality_sizes(budget)
    wanted = {(n, s, 0.0): on_locality_grid(budget, n, s) for n in (small, large) for s in budget.seeds}
    wanted |= {(small, s, 1.0): on_locality_grid(budget, small, s, permute=1.0) for s in budget.seeds}
    wanted |= {("stem", s): on_locality_grid(budget, small, s, route={"stem": True}) for s in budget.seeds}
    return wanted


def priors(budget) -> dict:
    """``(name, n, seed, shuffled fraction)``: every route of :func:`prior_routes` at the larger of
    ``budget.route_sizes``, where the plain ViT is far off its floor and still far below what more
    data gives it (the data-scarce regime a prior is for), every model under the rule by which it fits
    its training set; the CNN and the plain ViT at every size of the testbed (the crossover chapter's
    runs), the curves a route's accuracy is read against; on shuffled images, at the routes' size, the
    CNN and :data:`SHUFFLED_ROUTES` (the plain ViT on shuffled images is, by the crossover chapter's
    theorem, distributed as on ordered ones); on the locality grid, at :func:`locality_sizes` and
    shuffled at the smaller, the plain ViT (``"ViT, finer grid"``, the locality chapter's runs) and hard
    locality (:data:`LOCAL_ROUTE_NAME`)."""
    n, seeds = budget.route_sizes[-1], budget.seeds
    wanted = {}
    for size in budget.train_sizes:
        for s in seeds:
            wanted["CNN", size, s, 0.0] = runs.experiment(budget, "cnn", size, s, fit=True)
            wanted["ViT", size, s, 0.0] = runs.experiment(budget, "vit", size, s, fit=True)
    for s in seeds:
        wanted["CNN", n, s, 1.0] = runs.experiment(budget, "cnn", n, s, permute=1.0, fit=True)
        for name, (route, augment) in prior_routes(budget).items():
            for p in ((0.0, 1.0) if name in SHUFFLED_ROUTES else (0.0,)):
                wanted[name, n, s, p] = runs.experiment(budget, "vit", n, s, route=route, augment=augment,
                                                        permute=p, fit=True)
    small, large = locality_sizes(budget)
    for size in (small, large):
        for s in seeds:
            for p in ((0.0, 1.0) if size == small else (0.0,)):
                wanted["ViT, finer grid", size, s, p] = on_locality_grid(budget, size, s, permute=p)
                wanted[LOCAL_ROUTE_NAME, size, s, p] = on_locality_grid(budget, size, s, route=LOCAL_ROUTE,
                                                                        permute=p)
    return wanted


def robustness_size(budget) -> int:
    """The training-set size of the robustness chapter's runs: the larger of ``budget.route_sizes``,
    where every model fits its training set and the priors chapter's routes (the conv stem the
    matched comparison takes) are trained. (On the largest set a ViT run of the quick profile costs
    two and a half times as much.)"""
    return budget.route_sizes[-1]


def robustness(budget) -> dict:
    """``(model, condition, seed)`` at the larger route size: each texture condition, and ``"erasing"``;
    ``("CNN", n, seed)`` at every size and ``("ViT, conv stem", seed)`` (the priors chapter's, at the
    largest route size), for the matched comparison; every model under the rule by which it fits its
    training set.

    Textures exist on generated data only; on other data the one condition
    is ``"plain fill"``, the data as they are.
    """
    n, seeds = robustness_size(budget), budget.seeds
    textures = TEXTURES if budget.dataset["name"] == "shapes" else {"plain fill": None}
    wanted = {}
    for s in seeds:
        for model in ("CNN", "ViT"):
            for condition, texture in textures.items():
                wanted[model, condition, s] = runs.experiment(budget, model.lower(), n, s, texture=texture,
                                                              fit=True)
            wanted[model, "erasing", s] = runs.experiment(budget, model.lower(), n, s, erase=ERASE, fit=True)
        # For the comparison at matched clean accuracy: the CNN at every size (the crossover
        # chapter's runs) and the ViT with a convolutional stem (the priors chapter's).
        for size in budget.train_sizes:
            wanted["CNN", size, s] = runs.experiment(budget, "cnn", size, s, fit=True)
        wanted["ViT, conv stem", s] = runs.experiment(budget, "vit", budget.route_sizes[-1], s,
                                                      route={"stem": True}, fit=True)
    return wanted


# The symmetry chapter's trained models: name -> (model, RouteViT keywords or None).
SYMMETRY_MODELS = {"CNN": ("cnn", None), "ViT": ("vit", None),
                   "ViT, relative bias": ("vit", {"relative_bias": True})}


def symmetry(budget) -> dict:
    """``(name, seed)`` for every model of :data:`SYMMETRY_MODELS`, trained at the smaller route size
    (where the plain ViT is off its floor, at three eighths of the larger's cost per run) on images
    whose objects stand in the left band (``region="left"``, :data:`vitbias.data.REGIONS`), test
    images likewise, each under the step rule under which its model fits its training set
    (``fit=True``).

    Only generated images can place their objects, so a budget on photographs
    (``full``) trains these on the generated world, with its own models and recipe.
    """
    if budget.dataset["name"] != "shapes":
        budget = replace(budget, dataset=dict(profile.SHAPES))
    n = budget.route_sizes[0]
    return {(name, s): runs.experiment(budget, model, n, s, route=route, region="left", fit=True)
            for name, (model, route) in SYMMETRY_MODELS.items() for s in budget.seeds}


# The lab's challenge trains on at most this many images (the source's 5,000 CIFAR-10 images).
MAX_IMAGES = 5_000


def challenge_size(budget) -> int:
    """The lab's challenge's training-set size: the larger of the priors chapter's route sizes
    (``budget.route_sizes``), so that an entry stands beside the routes trained on as many images.

    In the ``full`` profile that is 5,000 CIFAR-10 images, the source's; it may
    not exceed :data:`MAX_IMAGES`.
    """
    n = budget.route_sizes[-1]
    if n > MAX_IMAGES:
        raise ValueError(f"the challenge trains on at most {MAX_IMAGES:,} images; the budget's route size is {n:,}")
    return n


def lab(budget) -> dict:
    """The lab's runs: the curves ``(model, n, seed)`` and the recipe switched ``(model, "recipe", seed)``
    (the crossover chapter's), the board at the challenge's size ``(name, seed)``: the routes, the
    plain ViT and the CNN (the priors chapter's), and ``("finer grid", seed)``, the locality chapter's
    ViT on its finer grid; every model fitting its training set, an entry too; all of them other
    chapters' runs."""
    sizes, seeds = budget.train_sizes, budget.seeds
    wanted = {(m, n, s): runs.experiment(budget, m, n, s, fit=True) for m in MODELS for n in sizes for s in seeds}
    switched = not budget.train["augment"]
    wanted |= {(m, "recipe", s): runs.experiment(budget, m, budget.recipe_size, s, augment=switched, fit=True)
               for m in MODELS for s in seeds}
    n = challenge_size(budget)
    wanted |= {(name, s): runs.experiment(budget, "vit", n, s, route=route, augment=augment, fit=True)
               for name, (route, augment) in prior_routes(budget).items() for s in seeds}
    # the board's plain models (lab.enter trains an entry as the plain ViT's run)
    wanted |= {(name, s): runs.experiment(budget, m, n, s, fit=True)
               for name, m in (("plain ViT", "vit"), ("CNN", "cnn")) for s in seeds}
    # section 8: the locality chapter's ViT on its finer grid, the larger set, the first seed
    wanted["finer grid", seeds[0]] = on_locality_grid(budget, locality_sizes(budget)[-1], seeds[0])
    return wanted


CHAPTERS = {"crossover": crossover, "locality": locality, "priors": priors, "robustness": robustness,
            "symmetry": symmetry, "lab": lab}


def chapter_runs(chapter: str, budget) -> dict:
    """The runs of ``chapter`` (one of :data:`CHAPTERS`)."""
    if chapter not in CHAPTERS:
        raise ValueError(f"no runs are planned for {chapter!r}: expected one of {tuple(CHAPTERS)}")
    return CHAPTERS[chapter](budget)


def _with_teachers(configs) -> list[dict]:
    """``configs`` and, for a distilled run, its teacher's configuration (trained first, timed apart)."""
    found = []
    for config in configs:
        teacher = config["train"].get("teacher")
        if teacher is not None:
            found += _with_teachers([teacher])
        found.append(config)
    return found


def training_seconds(configs, folder=None) -> tuple[float, int, int]:
    """``(seconds, runs, missing)``: the single-thread training time of the distinct runs in ``configs``
    as the run cache recorded it, how many distinct runs there are, and how many are not in the cache."""
    folder = runs.runs_folder() if folder is None else folder
    keys = {runs.run_key(c): c for c in _with_teachers(list(configs))}
    seconds, missing = 0.0, 0
    for key in keys:
        metrics = folder / key / "metrics.json"
        if metrics.is_file():
            seconds += json.loads(metrics.read_text())["seconds"]
        else:
            missing += 1
    return seconds, len(keys), missing
