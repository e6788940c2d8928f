"""Image data for the experiments: a generated shape dataset and CIFAR-10.

The quick profile trains on **shapes**: 32 x 32 RGB images, each holding one
object on a cluttered background. The class is the object's outline (a disk,
a square, a plus, ...), drawn anywhere in the image at a random scale, small
rotation and colour. A convolution's two assumptions are nearly true here:
what decides the class is local (edges and corners), and it means the same
wherever the object sits. A ViT has to learn both from the data.

The object is filled with a plain colour (``texture="none"``) or with a
texture (stripes, checks, dots, ...). With ``texture="random"`` the texture carries no information about the class;
with ``texture="predictive"`` each class has its own texture, so texture and
outline agree. The three modes draw the same outlines, poses and colours from
the same seed; only the fill differs. :func:`cue_conflict` draws the outline of one class filled
with the texture of another, to ask which cue a trained model follows.

Images are generated in blocks of :data:`BLOCK` images, each from its own
seed, so a set is exactly reproducible from its seed and the first ``n``
images of a larger set are the set of size ``n``: training sets of growing
size are nested. Generation is vectorised over images; the only Python loops
run over the classes and the textures.

The full profile trains on **CIFAR-10**, read from the standard python
batches (``cifar-10-batches-py``) in the folder named by ``VITBIAS_DATA``.

Every image set holds ``uint8`` pixels of shape ``(N, 3, H, W)`` and integer
labels of shape ``(N,)``.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SIZE = 32
BLOCK = 1000
DATA_VARIABLE = "VITBIAS_DATA"
CIFAR_FOLDER = "cifar-10-batches-py"
CIFAR_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"

# Per-channel mean and standard deviation used to standardise pixels in [0, 1].
SHAPES_MEAN = (0.5, 0.5, 0.5)
SHAPES_STD = (0.25, 0.25, 0.25)
CIFAR_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR_STD = (0.2470, 0.2435, 0.2616)


@dataclass(frozen=True)
class ImageSet:
    """Images ``(N, 3, H, W)`` uint8, labels ``(N,)`` int64 and the class names.

    ``textures`` holds each image's texture index for generated sets (``None``
    for photographs); ``mean`` and ``std`` standardise the pixels once they
    are scaled to [0, 1].
    """

    images: np.ndarray
    labels: np.ndarray
    classes: tuple[str, ...]
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    textures: np.ndarray | None = field(default=None)

    def __post_init__(self):
        if self.images.dtype != np.uint8 or self.images.ndim != 4 or self.images.shape[1] != 3:
            raise ValueError(f"images must be uint8 of shape (N, 3, H, W), got "
                             f"{self.images.dtype} {self.images.shape}")
        if self.labels.shape != (len(self.images),):
            raise ValueError(f"labels must have shape ({len(self.images)},), got {self.labels.shape}")

    def __len__(self) -> int:
        return len(self.labels)

    def head(self, n: int) -> ImageSet:
        """The first ``n`` images (for generated sets: the set of size ``n``)."""
        if not 0 < n <= len(self):
            raise ValueError(f"n must be in 1..{len(self)}, got {n}")
        textures = None if self.textures is None else self.textures[:n]
        return ImageSet(self.images[:n], self.labels[:n], self.classes, self.mean, self.std, textures)


# ---------------------------------------------------------------------------
# Outlines. Each is a test on object coordinates (u, v): the object's centre
# is (0, 0), its half-size is 1, and v points down the image.
# ---------------------------------------------------------------------------

def _box(u, v, a, b):
    return (np.abs(u) <= a) & (np.abs(v) <= b)


OUTLINES = {
    # the ten classes of the experiments
    "disk": lambda u, v: u**2 + v**2 <= 1.0,
    "square": lambda u, v: _box(u, v, 0.8, 0.8),
    "triangle": lambda u, v: (v <= 0.7) & (np.abs(u) <= 0.55 * (v + 0.95)),
    "plus": lambda u, v: _box(u, v, 0.3, 1.0) | _box(u, v, 1.0, 0.3),
    "ring": lambda u, v: (u**2 + v**2 <= 1.0) & (u**2 + v**2 >= 0.55**2),
    "diamond": lambda u, v: np.abs(u) + np.abs(v) <= 1.05,
    "cross": lambda u, v: ((np.abs(u - v) <= 0.42) | (np.abs(u + v) <= 0.42)) & _box(u, v, 0.85, 0.85),
    "tee": lambda u, v: _box(u, v + 0.6, 0.95, 0.3) | (_box(u, v - 0.15, 0.3, 0.75)),
    "crescent": lambda u, v: (u**2 + v**2 <= 1.0) & ((u - 0.55) ** 2 + v**2 >= 0.8**2),
    "letter_h": lambda u, v: _box(np.abs(u) - 0.7, v, 0.22, 0.9) | _box(u, v, 0.9, 0.22),
    # ten more, for pretraining on other labels
    "frame": lambda u, v: _box(u, v, 0.85, 0.85) & ~_box(u, v, 0.5, 0.5),
    "ell": lambda u, v: _box(u + 0.55, v, 0.3, 0.9) | _box(u, v - 0.6, 0.85, 0.3),
    "cup": lambda u, v: _box(np.abs(u) - 0.65, v, 0.22, 0.9) | _box(u, v - 0.68, 0.87, 0.22),
    "half_disk": lambda u, v: (u**2 + v**2 <= 1.0) & (v >= -0.1),
    "hourglass": lambda u, v: (np.abs(u) <= np.abs(v) + 0.1) & _box(u, v, 0.9, 0.9),
    "star": lambda u, v: np.hypot(u, v) <= 0.55 + 0.45 * np.cos(5 * np.arctan2(u, -v)),
    "two_dots": lambda u, v: ((np.abs(u) - 0.5) ** 2 + v**2 <= 0.42**2),
    "ellipse": lambda u, v: u**2 + (v / 0.45) ** 2 <= 1.0,
    "arrow": lambda u, v: _box(u + 0.35, v, 0.55, 0.2) | ((u >= 0.05) & (np.abs(v) <= 0.95 * (0.95 - u))),
    "zigzag": lambda u, v: (_box(u, np.abs(v) - 0.7, 0.85, 0.2) | (np.abs(u + v) <= 0.3)) & _box(u, v, 0.85, 0.9),
}
SHAPE_CLASSES = tuple(OUTLINES)[:10]
OTHER_SHAPE_CLASSES = tuple(OUTLINES)[10:]

# ---------------------------------------------------------------------------
# Textures: 0/1 patterns of pixel coordinates (x, y) with a random phase p.
# ---------------------------------------------------------------------------

TEXTURES = {
    "horizontal": lambda x, y, p: (y + p) % 4 < 2,
    "vertical": lambda x, y, p: (x + p) % 4 < 2,
    "diagonal": lambda x, y, p: (x + y + p) % 4 < 2,
    "antidiagonal": lambda x, y, p: (x - y + p) % 4 < 2,
    "checks": lambda x, y, p: ((x + p) // 2 + y // 2) % 2 == 0,
    "dots": lambda x, y, p: ((x + p) % 3 == 0) & (y % 3 == 0),
    "grid": lambda x, y, p: ((x + p) % 4 == 0) | ((y + p) % 4 == 0),
    "coarse_checks": lambda x, y, p: ((x + p) // 4 + y // 4) % 2 == 0,
    "wide_stripes": lambda x, y, p: (y + p) % 6 < 3,
    "plain": lambda x, y, p: np.zeros(np.broadcast_shapes(x.shape, y.shape, p.shape), dtype=bool),
}
TEXTURE_NAMES = tuple(TEXTURES)
TEXTURE_DEPTH = 0.55  # textured pixels are this much darker than the object colour


# Where an object may stand, as shares of the image's width: the whole object (its outline, turned
# by any allowed rotation) lies inside the band, so an object in the left band never reaches the
# last quarter of the columns and one in the right band never the first. On the testbed's 4 x 4
# grid of 8-px patches that is a whole column of patches that the one band never shows an object.
# The two bands are mirror images of each other.
REGIONS = {"left": (0.0, 0.75), "right": (0.25, 1.0)}


def reach(half: np.ndarray, max_rotation: float) -> np.ndarray:
    """How far ``(N,)`` an object of half-size ``half`` can reach from its centre along x, turned by
    at most ``max_rotation`` degrees: ``half (cos a + sin a)``, the half-width of a turned square
    (every outline lies in the square ``|u|, |v| <= 1``)."""
    a = np.deg2rad(min(abs(float(max_rotation)), 45.0))
    return np.asarray(half, dtype=float) * (np.cos(a) + np.sin(a))


def object_centres(half: np.ndarray, size: int, rng: np.random.Generator, region: str | None = None,
                   max_rotation: float = 10.0) -> np.ndarray:
    """Centres ``(N, 2)`` (x, y in pixels) of objects of half-sizes ``half`` ``(N,)``, inside the image.

    Each coordinate is uniform on ``[half, size - half]``; with ``region`` (a
    key of :data:`REGIONS`) the x coordinate is instead uniform on the range
    that keeps the whole object, turned by up to ``max_rotation`` degrees
    (:func:`reach`), inside the region's band, drawn from the same random
    numbers.
    """
    if region is not None and region not in REGIONS:
        raise ValueError(f"region must be None or one of {tuple(REGIONS)}, got {region!r}")
    centre = rng.uniform(half[:, None], size - half[:, None], (len(half), 2))
    if region is not None:
        low, high = (share * size for share in REGIONS[region])
        r = reach(half, max_rotation)
        if np.any(high - low < 2 * r):
            raise ValueError(f"an object reaching {r.max():.1f} px from its centre does not fit in the "
                             f"{region} band, {high - low:.0f} px wide")
        where = (centre[:, 0] - half) / (size - 2 * half)  # uniform on [0, 1]
        centre[:, 0] = low + r + (high - low - 2 * r) * where
    return centre


def object_pose(n: int, rng: np.random.Generator, *, size: int = SIZE, scale=(6.0, 10.0),
                max_rotation: float = 10.0, region: str | None = None):
    """The first draws of :func:`render`: half-sizes ``(N,)``, centres ``(N, 2)`` and angles ``(N,)``
    (radians)."""
    half = rng.uniform(scale[0], scale[1], n)
    centre = object_centres(half, size, rng, region, max_rotation)
    angle = np.deg2rad(rng.uniform(-max_rotation, max_rotation, n))
    return half, centre, angle


def object_mask(outlines, half, centre, angle, *, size: int = SIZE,
                names: tuple[str, ...] = SHAPE_CLASSES) -> np.ndarray:
    """``(N, size, size)`` boolean: the pixels whose centres fall inside each image's outline."""
    outlines = np.asarray(outlines)
    pixel = np.arange(size) + 0.5
    dx = pixel[None, None, :] - centre[:, 0, None, None]
    dy = pixel[None, :, None] - centre[:, 1, None, None]
    cos, sin = np.cos(angle)[:, None, None], np.sin(angle)[:, None, None]
    u = (cos * dx + sin * dy) / half[:, None, None]
    v = (-sin * dx + cos * dy) / half[:, None, None]
    mask = np.zeros((len(outlines), size, size), dtype=bool)
    for index, name in enumerate(names):  # one vectorised test per class
        chosen = outlines == index
        if chosen.any():
            mask[chosen] = OUTLINES[name](u[chosen], v[chosen])
    return mask


def render(outlines, textures, rng: np.random.Generator, *, size: int = SIZE,
           scale=(6.0, 10.0), max_rotation: float = 10.0,
           names: tuple[str, ...] = SHAPE_CLASSES, region: str | None = None) -> np.ndarray:
    """Draw one object per image: outline ``outlines[i]`` filled with texture ``textures[i]``.

    ``outlines`` index ``names`` and ``textures`` index :data:`TEXTURE_NAMES`,
    both of shape ``(N,)``. Position (:func:`object_centres`, in ``region``),
    half-size (``scale`` pixels), rotation (up to ``max_rotation`` degrees
    either way), colours and clutter are drawn from ``rng``. Returns uint8
    images of shape ``(N, 3, size, size)``.
    """
    outlines = np.asarray(outlines)
    textures = np.asarray(textures)
    if outlines.ndim != 1 or outlines.shape != textures.shape:
        raise ValueError(f"outlines and textures must be 1-D of equal length, got "
                         f"{outlines.shape} and {textures.shape}")
    if outlines.size and not (0 <= outlines.min() and outlines.max() < len(names)):
        raise ValueError(f"outline indices must be in 0..{len(names) - 1}")
    if textures.size and not (0 <= textures.min() and textures.max() < len(TEXTURES)):
        raise ValueError(f"texture indices must be in 0..{len(TEXTURES) - 1}")
    if not (size >= 8 and 0 < scale[0] <= scale[1] and 2 * scale[1] < size):
        raise ValueError(f"need size >= 8 and 0 < scale[0] <= scale[1] < size / 2, "
                         f"got size={size}, scale={scale}")
    n = len(outlines)

    # Pose: the object stays inside the image (and inside its band, with a region).
    half, centre, angle = object_pose(n, rng, size=size, scale=scale, max_rotation=max_rotation,
                                      region=region)
    phase = rng.integers(0, 12, n)

    # Colours: a dark object on a light background or the other way round.
    light_background = rng.random(n) < 0.5
    background = np.where(light_background[:, None], 0.55 + 0.35 * rng.random((n, 3)),
                          0.05 + 0.35 * rng.random((n, 3)))
    colour = np.where(light_background[:, None], 0.02 + 0.33 * rng.random((n, 3)),
                      0.60 + 0.38 * rng.random((n, 3)))

    # Clutter: smooth colour blotches (a random 4 x 4 field, upsampled) and pixel noise.
    field = rng.normal(0.0, 0.12, (n, 3, 4, 4))
    blotches = _upsample(field, size)
    noise = rng.normal(0.0, 0.03, (n, 3, size, size))

    mask = object_mask(outlines, half, centre, angle, size=size, names=names)

    xs = np.arange(size)[None, None, :]
    ys = np.arange(size)[None, :, None]
    pattern = np.zeros((n, size, size), dtype=bool)
    for index, name in enumerate(TEXTURE_NAMES):  # one vectorised pattern per texture
        chosen = textures == index
        if chosen.any():
            pattern[chosen] = TEXTURES[name](xs, ys, phase[chosen, None, None])

    shade = 1.0 - TEXTURE_DEPTH * pattern  # (N, size, size)
    image = background[:, :, None, None] + blotches
    image = np.where(mask[:, None], colour[:, :, None, None] * shade[:, None], image) + noise
    return np.round(255 * np.clip(image, 0.0, 1.0)).astype(np.uint8)


def _upsample(field: np.ndarray, size: int) -> np.ndarray:
    """Bilinear upsampling of ``(N, C, k, k)`` to ``(N, C, size, size)``."""
    k = field.shape[-1]
    position = (np.arange(size) + 0.5) * k / size - 0.5
    low = np.clip(np.floor(position).astype(int), 0, k - 2)
    weight = np.clip(position - low, 0.0, 1.0)
    rows = field[..., low, :] * (1 - weight)[:, None] + field[..., low + 1, :] * weight[:, None]
    return rows[..., low] * (1 - weight) + rows[..., low + 1] * weight


# ---------------------------------------------------------------------------
# Generated sets.
# ---------------------------------------------------------------------------

TEXTURE_MODES = ("none", "random", "predictive")
PLAIN = TEXTURE_NAMES.index("plain")
SPLITS = {"train": 0, "test": 1}


def shapes(n: int, seed: int = 0, *, split: str = "train", texture: str = "random",
           classes: str = "main", region: str | None = None) -> ImageSet:
    """``n`` generated images, balanced over 10 outline classes.

    ``texture="none"``: every object is filled with a plain colour.
    ``texture="random"``: each image's texture is drawn at random, so only the
    outline tells the class. ``texture="predictive"``: class ``i`` always wears
    texture ``i``. ``classes="other"`` uses ten different outlines (for
    pretraining on other labels). ``split`` selects an independent stream of
    the same seed, so train and test sets never share an image. ``region``
    (``"left"`` or ``"right"``) keeps every object wholly inside that band of
    the image's columns (:data:`REGIONS`); everything else is drawn as without it.

    Images are made in blocks of :data:`BLOCK`: the first ``m`` images of a
    set of size ``n`` are the set of size ``m``. The largest set made so far
    of each stream is kept in memory (:data:`KEEP_IMAGES` images at most), so
    smaller sets of a stream are read from it; a large set is generated
    block by block on several CPU cores (:data:`PARALLEL_BLOCKS`).
    """
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if texture not in TEXTURE_MODES:
        raise ValueError(f"texture must be one of {TEXTURE_MODES}, got {texture!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {tuple(SPLITS)}, got {split!r}")
    names = {"main": SHAPE_CLASSES, "other": OTHER_SHAPE_CLASSES}.get(classes)
    if names is None:
        raise ValueError(f"classes must be 'main' or 'other', got {classes!r}")
    if region is not None and region not in REGIONS:
        raise ValueError(f"region must be None or one of {tuple(REGIONS)}, got {region!r}")
    stream = (int(seed), SPLITS[split], texture, classes, region)
    kept = _KEPT.get(stream)
    if kept is None or len(kept) < n:
        count = -(-n // BLOCK)
        tasks = [(stream, block) for block in range(count)]
        if count >= PARALLEL_BLOCKS and _cores() > 2:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # fork: the workers need nothing but NumPy and this module, already loaded
            context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
            with ProcessPoolExecutor(min(_cores(), count), mp_context=context) as pool:
                blocks = list(pool.map(_block, tasks))
        else:
            blocks = [_block(task) for task in tasks]
        images, labels, textures = (np.concatenate(parts) for parts in zip(*blocks))
        kept = ImageSet(images, labels, names, SHAPES_MEAN, SHAPES_STD, textures)
        _keep(stream, kept)
    # A copy, so that a caller who writes into its images cannot change the kept set.
    return ImageSet(kept.images[:n].copy(), kept.labels[:n].copy(), names, SHAPES_MEAN, SHAPES_STD,
                    kept.textures[:n].copy())


KEEP_IMAGES = 2_000_000   # images kept in memory across calls (about 6 GB at 32 x 32)
PARALLEL_BLOCKS = 16      # from this many blocks on, blocks are drawn on several cores
_KEPT: dict = {}


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _keep(stream, images: ImageSet) -> None:
    _KEPT[stream] = images
    while sum(len(kept) for kept in _KEPT.values()) > KEEP_IMAGES and len(_KEPT) > 1:
        del _KEPT[next(iter(_KEPT))]  # the oldest stream goes first


def _block(task):
    """One block of :data:`BLOCK` images of ``stream = (seed, split, texture, classes, region)``."""
    (seed, split, texture, classes, region), block = task
    names = SHAPE_CLASSES if classes == "main" else OTHER_SHAPE_CLASSES
    rng = np.random.default_rng([seed, split, 0 if classes == "main" else 1, block])
    # A whole balanced block is drawn, so that a set's images do not depend on its size.
    label = rng.permutation(np.arange(BLOCK) % len(names))
    tex = {"none": np.full(BLOCK, PLAIN), "predictive": label,
           "random": rng.integers(0, len(TEXTURES), BLOCK)}[texture]
    return render(label, tex, rng, names=names, region=region), label.astype(np.int64), tex.astype(np.int64)


def cue_conflict(n: int, seed: int = 0) -> ImageSet:
    """``n`` images whose outline and texture belong to different classes.

    ``labels`` hold the outline's class and ``textures`` the texture's class
    (texture ``j`` is the texture that class ``j`` wears when texture is
    predictive); the two differ in every image.
    """
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be a positive integer, got {n!r}")
    rng = np.random.default_rng([seed, 2, 0])
    k = len(SHAPE_CLASSES)
    outline = rng.permutation(np.arange(n) % k)
    texture = (outline + rng.integers(1, k, n)) % k  # any class but the outline's
    return ImageSet(render(outline, texture, rng), outline.astype(np.int64), SHAPE_CLASSES,
                    SHAPES_MEAN, SHAPES_STD, texture.astype(np.int64))


# ---------------------------------------------------------------------------
# CIFAR-10 from the standard python batches.
# ---------------------------------------------------------------------------

def cifar10_folder() -> Path:
    """Where CIFAR-10 is looked for: ``$VITBIAS_DATA/cifar-10-batches-py``."""
    root = os.environ.get(DATA_VARIABLE, "").strip()
    if not root:
        raise FileNotFoundError(
            f"the full profile needs CIFAR-10, and {DATA_VARIABLE} is not set. Download "
            f"{CIFAR_URL}, extract it into a folder D (giving D/{CIFAR_FOLDER}) and set "
            f"{DATA_VARIABLE}=D.")
    return Path(root).expanduser() / CIFAR_FOLDER


def cifar10(split: str = "train", folder: Path | str | None = None) -> ImageSet:
    """CIFAR-10's 50,000 training or 10,000 test images, in file order."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {tuple(SPLITS)}, got {split!r}")
    folder = Path(folder) if folder is not None else cifar10_folder()
    names = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
    missing = [name for name in names + ["batches.meta"] if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"CIFAR-10 is not in {folder} (missing {', '.join(missing)}). Download {CIFAR_URL} "
            f"and extract it into {folder.parent}, so that {folder} holds data_batch_1 .. "
            f"data_batch_5, test_batch and batches.meta; {DATA_VARIABLE} names the folder "
            f"that contains {CIFAR_FOLDER}.")
    data, labels = [], []
    for name in names:
        with open(folder / name, "rb") as handle:
            batch = pickle.load(handle, encoding="bytes")
        data.append(np.asarray(batch[b"data"], dtype=np.uint8))
        labels.append(np.asarray(batch[b"labels"], dtype=np.int64))
    with open(folder / "batches.meta", "rb") as handle:
        meta = pickle.load(handle, encoding="bytes")
    classes = tuple(name.decode() for name in meta[b"label_names"])
    images = np.concatenate(data).reshape(-1, 3, SIZE, SIZE)
    return ImageSet(images, np.concatenate(labels), classes, CIFAR_MEAN, CIFAR_STD)


# ---------------------------------------------------------------------------
# One entry point for the experiments: a plain-dict specification.
# ---------------------------------------------------------------------------

def load(spec: dict) -> tuple[ImageSet, ImageSet]:
    """The ``(train, test)`` sets named by ``spec``.

    ``{"name": "shapes", "train": n, "test": m, "seed": s, "texture": ..., "classes": ..., "region": ...}``
    generates them; ``{"name": "cifar10", "train": n, "test": m, "seed": s}`` takes
    the first ``n`` training images of CIFAR-10 in an order shuffled by ``s``
    (so smaller sets are nested in larger ones) and the first ``m`` test images.
    ``"test_seed": t`` draws the generated test set from ``t`` instead of ``s``, so
    that runs on training sets of different seeds are scored on the same images.
    """
    spec = dict(spec)
    name = spec.pop("name", None)
    n_train, n_test, seed = spec.pop("train", None), spec.pop("test", None), spec.pop("seed", 0)
    test_seed = spec.pop("test_seed", seed)
    if not all(isinstance(v, (int, np.integer)) and v >= 1 for v in (n_train, n_test)):
        raise ValueError(f"train and test must be positive integers, got {n_train!r}, {n_test!r}")
    if name == "shapes":
        unknown = set(spec) - {"texture", "classes", "region"}
        if unknown:
            raise ValueError(f"unknown shapes options {sorted(unknown)}")
        return (shapes(n_train, seed, split="train", **spec),
                shapes(n_test, test_seed, split="test", **spec))
    if name == "cifar10":
        if spec or test_seed != seed:
            raise ValueError(f"unknown cifar10 options {sorted(spec) or ['test_seed']}: its test set is fixed")
        train, test = cifar10("train"), cifar10("test")
        if n_train > len(train) or n_test > len(test):
            raise ValueError(f"CIFAR-10 has {len(train)} training and {len(test)} test images, "
                             f"asked for {n_train} and {n_test}")
        order = np.random.default_rng(seed).permutation(len(train))[:n_train]
        return (ImageSet(train.images[order], train.labels[order], train.classes, train.mean, train.std),
                test.head(n_test))
    raise ValueError(f"unknown dataset {name!r}: expected 'shapes' or 'cifar10'")
