"""The book's figures: one module per chapter, one shared style.

- ``toy``: the bias trade-off toy (``book/bias-toy.md``);
- ``patches``: patches as tokens, their cost and positions (``book/patches.md``);
- ``symmetry``: which shifts a layer respects (``book/symmetry.md``);
- ``crossover``: the data-scale crossover (``book/crossover.md``);
- ``attention_conv``: attention computing a convolution (``book/attention-conv.md``);
- ``interactive``: the Plotly versions of five figures, for the HTML site;
- ``style``: the set-up and the ending every figure shares.

Each function draws one figure and returns it, closed (``interactive``'s return
Plotly figures, which :func:`interactive.show` turns into a cell's output).
"""
