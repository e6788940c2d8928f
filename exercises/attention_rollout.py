"""Exercise: attention rollout (Abnar and Zuidema 2020; the book's ``vitbias.locality``).

Check your version: ``python -m exercises.grade FILE.py attention_rollout``.
"""


def attention_rollout(A_layers, n_prefix, H_p, W_p):
    """The attention rollout of a ViT, read on the patch grid: ``L x (..., heads, N, N) -> (..., H_p, W_p)``.

    ``A_layers`` is a list of the ``L`` layers' attention maps, first layer
    first, each a NumPy array of shape ``(..., heads, N, N)`` (rows are
    queries, each row sums to 1, as read from a model: in float32, that is
    within about 1e-6). Tokens: the ``n_prefix`` prefix tokens first, then the
    ``H_p x W_p`` patches in raster order, ``N = n_prefix + H_p W_p``.

    For each layer, average the heads (``A_bar``), count the residual
    connection as half the flow and renormalise the rows:

        A_hat = (A_bar / 2 + I / 2), each row divided by its sum.

    Multiply the layers with the last on the left, ``R = A_hat_L ... A_hat_1``
    (separately for every leading index). Row ``i`` of ``R`` is how much of
    each input token reaches output token ``i``. Return

    - the first token's row at the patch columns, ``R[0, n_prefix:]``, when
      ``n_prefix >= 1`` (the [CLS] token that classifies), not renormalised;
    - the mean of the rows, ``(1 / N) sum_i R[i, :]``, when ``n_prefix = 0``
      (a model that averages its patch tokens);

    laid out on the grid: shape ``(..., H_p, W_p)``.
    """
    raise NotImplementedError
