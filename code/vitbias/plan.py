"""What several chapters' runs share: the worlds of the crossover ladder, the routes back to the
prior, the locality grid, the halved run, and the training time a run cache recorded.

Each chapter plans its own runs in its module (``vitbias.chapters.<name>.planned_runs(budget)``,
:func:`vitbias.chapters.chapter_runs`) from these pieces, and trains or reads them with
:func:`vitbias.runs.run_many`; the page "How this build was made" sums their training time from
the run cache (:func:`training_seconds`), and a device run can train a chapter's runs without
executing the chapter. Runs shared between chapters (the priors chapter's plain ViT is the
crossover chapter's) have the same configuration, hence the same cache entry, and are trained once.
"""

from __future__ import annotations

import json

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


# The one catalogue of the routes' names: each route of prior_routes and hard locality, by its short
# name, which the priors chapter's glue names (prior_<slug>_...) and the fingerprints' kinds carry.
ROUTE_SLUGS = {"gated positional": "gated", "relative bias": "relative", "conv stem": "stem",
               "crop and flip": "augment", "distilled from the CNN": "distill", LOCAL_ROUTE_NAME: "local1"}


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


# An augmented run sees a new version of each image at every pass, so it needs more passes than the
# plain run of its model and size to fit its training set: AUGMENTED_PASSES times the plain run's
# steps, for both models. Measured on the quick testbed, one thread: the TinyViT with crop and flip on
# 800 images, under the plain rule's 1,000 steps, fitted 0.656 of its images (test 0.621); in 2,000,
# 0.904 (0.871); in 4,000, 0.994, 0.994 and 0.990 for seeds 0-2 (test 0.969, 0.964, 0.975). The CNN with
# crop and flip on 125 images fitted about 0.93 in the plain rule's 150 steps, 1.000 in 300 and in 600.
AUGMENTED_PASSES = 4


def fitted(budget, model: str, train_size: int, seed: int = 0, **options) -> dict:
    """The run config of ``model`` under the rule by which it fits its training set:
    ``runs.experiment(budget, model, train_size, seed, fit=True, **options)``, and, when the run augments
    its images, :data:`AUGMENTED_PASSES` times those steps (a tenth of them as warm-up). A distilled
    run's teacher is the same rule's run. Every chapter plans its fitted runs through this function, so
    that a run shared between chapters has one configuration."""
    return _augmented_passes(runs.experiment(budget, model, train_size, seed, fit=True, **options))


def _augmented_passes(config: dict) -> dict:
    recipe = config["train"]
    if "teacher" in recipe:
        recipe = {**recipe, "teacher": _augmented_passes(recipe["teacher"])}
    if recipe.get("augment"):
        steps = recipe["steps"] * AUGMENTED_PASSES
        recipe = {**recipe, "steps": steps, "warmup": train.warmup_steps(steps)}
    return {**config, "train": recipe}


def halved(config: dict) -> dict:
    """``config`` with half its steps (and a tenth of those as warm-up): is the full budget compute-limited?"""
    steps = config["train"]["steps"] // 2
    if steps < 1:
        raise ValueError(f"a run of {config['train']['steps']} steps cannot be halved")
    return {**config, "train": {**config["train"], "steps": steps, "warmup": train.warmup_steps(steps)}}


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


def robustness_size(budget) -> int:
    """The training-set size of the robustness chapter's runs: the larger of ``budget.route_sizes``,
    where every model fits its training set and the priors chapter's routes (the conv stem the
    matched comparison takes) are trained. (On the largest set a ViT run of the quick profile costs
    two and a half times as much.)"""
    return budget.route_sizes[-1]


# The symmetry chapter's trained models: name -> (model, RouteViT keywords or None).
SYMMETRY_MODELS = {"CNN": ("cnn", None), "ViT": ("vit", None),
                   "ViT, relative bias": ("vit", {"relative_bias": True})}


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
