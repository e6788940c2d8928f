"""vitbias: the code behind the book on the inductive bias of Vision Transformers.

One module per idea, in six layers listed from the bottom up. A module
imports only from its own layer and the layers below it, and no modules
import each other in a cycle (``make lint`` checks both against this map,
``tools/layers.py``). So the mathematics never depends on training, training
never depends on what a chapter measures, and nothing below the book depends
on the book.

1. Foundations

- ``geometry``: what every chapter shares: shifts, patchify and its inverse,
  tokens on a grid, grid coordinates and offsets, circular convolution (by
  hand, by the library, as a matrix) and parameter counts;
- ``data``: the generated world of shapes (textures, cue conflicts, where
  objects may stand) and CIFAR-10;
- ``literature``: published numbers, each with its paper and table;
- ``recorded``: one run's sd that names its kind, and the glued numbers
  recorded under it for the noise command to measure.

2. Ideas: the models and the mathematics, with no training

- ``vit``: the book's one ViT, written to be read, with timm's parameter
  names and its attention maps, masks and biases on request;
- ``masks``: the convolution's neighbourhood as an attention mask;
- ``attention_conv``: multi-head attention as a sum over heads, and the
  convolution it can compute (the priors start from it);
- ``priors``: the ViT with routes to the convolution's assumption put back
  (hard and soft locality, relative positions, a convolutional stem, a
  distillation token);
- ``models``: the small CNN and the TinyViT, built from plain configurations;
- ``permute``: fixed rearrangements of the pixel positions (a shuffle of the
  patch grid, one pixel order inside every patch, the worlds built from them
  and their controls), which break a convolution's locality and which a
  ViT absorbs exactly (``absorb``);
- ``patches``: patches as tokens, the jigsaw and what a token can keep;
- ``cost``: parameter and multiply-add counts of a ViT;
- ``positions``: resizing the position table, 2-D rotary positions;
- ``handvit``: a whole ViT small enough to check by hand;
- ``toy``: the bias trade-off toy (a shared 3-tap convolution against a full
  linear map), its error formulas and its Monte Carlo experiment;
- ``crossover``: the compute a ViT needs to match a ResNet (Table 6);
- ``scaling``: power laws of learning curves, their crossings, and the
  tests that decide the book's verdicts (Welch's t, paired tests,
  equivalence);
- ``locality``: what a trained ViT learns in place of locality: the mean
  attention distance of each head, attention rollout, and the receptive
  fields of stacked convolutions and of attention;
- ``conv_fit``: whether one attention layer learns, by gradient descent, the
  convolution it can express.

3. Training

- ``profile``: the build profile (``quick``: generated data on any CPU;
  ``gpu``: the same world at scale on one GPU; ``full``: CIFAR-10 and
  pretrained weights), its budgets and the device;
- ``train``: the trainer (AdamW, a fixed step budget) and evaluation;
- ``runs``: the run cache (train once, reuse everywhere), runs side by side.

4. Ideas measured on trained models

- ``symmetry``: shifts, strided and patch convolutions, equivariance errors,
  and how much a trained model's answers move under shifts;
- ``robustness``: shape bias on cue conflict, occlusion, small adversarial
  steps;
- ``twins``: the permutation theorem, run as two trainings;
- ``probe``: linear probes on frozen features.

5. Chapters' experiments

- ``plan``: what several chapters' runs share: the ladder's worlds, the routes
  back to the prior, the locality grid, and the training time a cache recorded;
- ``lab``: the lab's challenge, a ViT for small data, trained and scored;
- ``fingerprint``: short trainings of every kind of run, which any change of
  code moves;
- ``noise``: one run's standard deviation, measured from the run cache over
  seeds and kernel sets, from which the bands of trained numbers are made;
- ``noise_measured``: what ``python -m tools.booktools noise`` measured
  (generated);
- ``evidence``: what a chapter found, the numbers its prose glues, each with
  the tolerance its kind calls for (exact, rounding, a band over seeds, an
  unchecked verdict), and the claims its page asserts;
- ``chapters``: one module per chapter that measures, holding its analysis
  (``measure`` turns the chapter's runs or computations into its evidence)
  and, for a chapter that trains, its runs (``planned_runs``) and their
  groups by kind of number (``noise_groups``).

6. Book helpers and figures

- ``book``: gluing numbers into the prose with a declared tolerance, the
  policy for trained numbers (bands, verdicts), and the record of how a
  build was made;
- ``figures``: the figures, one module per chapter, the interactive ones
  and one shared style.
"""

import warnings

# timm imports tqdm.auto, which warns in a kernel without ipywidgets; the
# warning is about progress bars, which the book never shows.
warnings.filterwarnings("ignore", message="IProgress not found")

__version__ = "0.1.0"
