"""Exercise: which worlds of the crossover ladder the ViT wins (the book's ``vitbias.scaling``).

Check your version: ``python -m exercises.grade FILE.py ladder_winners``.
"""


def ladder_winners(cnn, vit_plain):
    """The worlds of the crossover chapter's ladder in which the ViT beats the CNN at the largest size.

    ``cnn`` maps each world of the ladder, in its order (the plain images
    first, then each rung more scrambled), to the CNN's mean test accuracy at
    the largest training set in that world. ``vit_plain`` is the ViT's mean
    test accuracy at the same size on the plain images: the ViT was trained in
    no other world. Every rung rearranges every image by one fixed rule that
    carries patches onto patches and pixels inside a patch by one order shared
    by all patches (``vitbias.permute.absorb``). Return the names of the worlds
    in which the ViT's accuracy is above the CNN's, as a list (a tie is no
    win).
    """
    raise NotImplementedError
