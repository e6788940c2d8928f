"""Exercise: every parameter of a ViT, by part (the book's ``vitbias.cost``).

Check your version: ``python -m exercises.grade FILE.py parameter_counts``.
"""


def parameter_counts(config):
    """The parameters of the ViT that ``config`` describes, by part, and their total.

    ``config`` is a ``vitbias.vit.ViTConfig``; read ``img_size``,
    ``patch_size``, ``in_chans``, ``embed_dim`` (``d``), ``depth``,
    ``mlp_ratio`` (the MLP's hidden width is ``int(d * mlp_ratio)``),
    ``num_classes`` (0: no head), ``class_token``, ``reg_tokens`` and
    ``pos_embed``. The model is timm's ``VisionTransformer``: a
    ``Conv2d(in_chans, d, P, stride=P)`` patch embedding with bias; a learned
    [CLS] token (if ``class_token``) and ``reg_tokens`` register tokens; a
    learned position table with one row per token in the encoder, prefix
    tokens included (if ``pos_embed``); ``depth`` pre-norm blocks, each with
    two LayerNorms (weight and bias), Q, K, V and output projections with
    biases, and an MLP of two linear layers with biases; a final LayerNorm;
    a linear head with bias to ``num_classes``.

    Return a dict with exactly these keys, each an integer: ``"patch
    embedding"``, ``"[CLS] token"``, ``"register tokens"``, ``"position
    table"``, ``"encoder blocks"``, ``"final LayerNorm"``, ``"head"`` and
    ``"total"`` (their sum). For ViT-L/16 at 224 and 384 pixels, which parts
    change?
    """
    raise NotImplementedError
