"""Exercise: the patch embedding as patchify and one matrix product (the book's ``vitbias.patches``).

Check your version: ``python -m exercises.grade FILE.py embed_linear``.
"""


def embed_linear(images, weight, bias):
    """The ViT paper's patch embedding ``x_p E + b``, computed without a convolution.

    ``images``: a torch tensor ``(B, C, H, W)``; ``weight``: ``(d, C, P, P)``,
    the weight of ``nn.Conv2d(C, d, kernel_size=P, stride=P)``; ``bias``:
    ``(d,)``. ``P`` divides ``H`` and ``W``. Returns the tokens ``(B, N, d)``,
    ``N = (H / P)(W / P)``, in raster order (patch ``(r, c)`` in row
    ``r W / P + c``): the same numbers as that ``Conv2d`` applied to the
    images and flattened, ``conv(images).flatten(2).transpose(1, 2)``.

    Cut the patches with ``Tensor.unfold`` or ``reshape``/``permute``, flatten
    each in the order of ``weight.reshape(d, -1)`` (channel, then row, then
    column), and multiply by the weight as a ``(C P^2, d)`` matrix.
    """
    raise NotImplementedError
