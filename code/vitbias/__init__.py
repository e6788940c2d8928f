"""vitbias: the code behind the book on the inductive bias of Vision Transformers.

One module per idea the book teaches:

- ``vit``: a ViT written to be read (checked against timm's);
  ``patches``: patchify, the jigsaw and what a token can keep;
  ``cost``: parameter and multiply-add counts; ``positions``: resizing the
  position table, 2-D RoPE; ``handvit``: a ViT small enough to check by hand.
- ``toy``: the bias trade-off toy (a shared 3-tap convolution against a full
  linear map), its error formulas and its Monte Carlo experiment.
- ``symmetry``: shifts, strided and patch convolutions, equivariance errors.
- ``crossover``: the compute a ViT needs to match a ResNet (Table 6).
- ``attention_conv``: multi-head attention as a sum over heads, and the
  convolution it can compute.
- ``permute``: fixed rearrangements of the pixel positions (a shuffle of the
  patch grid, the same pixel order inside every patch, the worlds built from
  them and their controls), which break a convolution's locality and which a
  ViT absorbs exactly (``absorb``); ``twins``: the theorem, run as two
  trainings.
- ``locality``: what a trained ViT learns in place of locality: the mean
  attention distance of each head, attention rollout, and the receptive
  fields of stacked convolutions and of attention.
- ``geometry``: what they share: shifts, patchify and its inverse, tokens
  on a grid, grid coordinates and offsets, circular convolution (by hand,
  by the library, as a matrix) and parameter counts.

and the plumbing:

- ``data`` (generated shapes, CIFAR-10), ``models`` (the small CNN, the
  TinyViT), ``train`` (the trainer), ``runs`` (the run cache), ``plan``
  (which runs each chapter trains), ``fingerprint`` (short trainings that
  any change of code moves), ``probe`` (linear probes on frozen features);
- ``profile``: the build profile (``quick``, ``gpu`` or ``full``), its budgets and the device;
- ``scaling``: power laws of learning curves, their crossings, and the
  tests that decide the book's verdicts (Welch's t, equivalence);
- ``book``: gluing numbers into the prose with a declared tolerance, the
  policy for trained numbers (bands, verdicts), and the record of how a
  build was made;
- ``literature``: published numbers with their paper and table;
- ``figures``: the figures, one module per chapter and one shared style.
"""

import warnings

# timm imports tqdm.auto, which warns in a kernel without ipywidgets; the
# warning is about progress bars, which the book never shows.
warnings.filterwarnings("ignore", message="IProgress not found")

__version__ = "0.1.0"
