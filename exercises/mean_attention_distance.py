"""Exercise: how far each head looks, in pixels (the book's ``vitbias.locality``).

Check your version: ``python -m exercises.grade FILE.py mean_attention_distance``.
"""


def mean_attention_distance(A, H_p, W_p, P, n_prefix):
    """The mean attention distance of each head, in pixels: ``(..., heads, N, N) -> (heads,)``.

    ``A`` holds attention maps (NumPy, float64): rows are queries, columns
    keys, every row sums to 1. Its last three axes are ``(heads, N, N)``; any
    axes before them index images. The ``N = n_prefix + H_p W_p`` tokens are
    the ``n_prefix`` prefix tokens ([CLS], registers; possibly none) first,
    then the patches of an ``H_p x W_p`` grid in raster order: patch
    ``(r, c)`` is token ``n_prefix + r W_p + c``. Patches are ``P`` pixels
    apart, so patches ``q`` and ``k`` lie ``D[q, k] = P |(r_q, c_q) - (r_k, c_k)|``
    pixels apart (Euclidean distance between the patch centres).

    Prefix tokens have no position: only patch queries count, and a patch
    query's weights on the prefix keys are dropped and its patch weights
    renormalised. For image ``b``, head ``h`` and patch query ``q``, with
    sums over the patch keys ``k`` only,

        d[b, h, q] = sum_k A[b, h, q, k] D[q, k] / sum_k A[b, h, q, k].

    Return, for every head, the mean of ``d[b, h, q]`` over the images ``b``
    and the patch queries ``q``: an array of shape ``(heads,)``.
    """
    raise NotImplementedError
