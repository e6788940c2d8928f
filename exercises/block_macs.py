"""Exercise: the price of a token, one encoder block's multiply-adds (the book's ``vitbias.cost``).

Check your version: ``python -m exercises.grade FILE.py block_macs``.
"""


def block_macs(tokens, d, mlp_ratio=4.0):
    """One encoder block's multiply-adds, ``(dense, attention)``, as two integers.

    ``tokens`` (``N``) tokens of width ``d`` pass one pre-norm block whose MLP
    is ``d -> h -> d`` with ``h = int(d * mlp_ratio)``. Count one
    multiply-add per product of a matrix multiplication and nothing else
    (no softmax, GELU, LayerNorm or additions):

    - ``dense``: the Q, K, V and output projections and the MLP's two matrices;
    - ``attention``: the scores ``Q K^T`` and the weighted sum of the values.

    Use it on ViT-L/16 (``d = 1024``) at 224 and 384 pixels: 196 and 576
    patch tokens. By what factor does each part grow?
    """
    raise NotImplementedError
