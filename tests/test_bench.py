"""``make bench`` (``tools/bench.py``): what it reads from a build, and its loops against the library."""

import nbformat
import numpy as np
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

from tools import bench
from vitbias import locality


def _cache_execution(build, uri: str, seconds: float, source: str) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source, execution_count=1)])
    bundle = CacheBundleIn(notebook, uri, data={"execution_seconds": seconds})
    get_cache(str(build / ".jupyter_cache")).cache_notebook_bundle(bundle, check_validity=False)


def test_chapter_seconds_reads_the_last_execution_of_the_chapter_from_the_cache(tmp_path):
    assert bench.chapter_seconds("crossover", build=tmp_path) is None
    _cache_execution(tmp_path, "/book/crossover.md", 600.0, "x = 1")
    _cache_execution(tmp_path, "/book/bias-toy.md", 5.0, "y = 2")
    _cache_execution(tmp_path, "/book/crossover.md", 420.0, "x = 2")
    assert bench.chapter_seconds("crossover", build=tmp_path) == 420.0
    assert bench.chapter_seconds("bias-toy", build=tmp_path) == 5.0
    assert bench.chapter_seconds("lab", build=tmp_path) is None


def test_the_loops_the_bench_times_compute_what_the_locality_module_computes():
    grid, P = 3, 4
    scores = np.random.default_rng(0).standard_normal((2, 2, 1 + grid * grid, 1 + grid * grid))
    A = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    distance = locality.mean_attention_distance(A, grid, grid, P, 1)
    np.testing.assert_allclose(np.ravel(distance), bench._distance_by_loops(A, grid, grid, P, 1), rtol=1e-10)
    rollout = locality.attention_rollout([A, A], 1, grid, grid)
    np.testing.assert_allclose(np.reshape(rollout, (2, -1)), bench._rollout_by_loops([A, A], 1), rtol=1e-10)
