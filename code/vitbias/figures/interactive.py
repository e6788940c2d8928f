"""The book's interactive figures: Plotly figures that run in the static HTML, no kernel needed.

One function per figure, each returning a ``plotly.graph_objects.Figure``
whose numbers come from the same ``vitbias`` functions as the chapter's glued
values:

- :func:`attention_sharpening`: the nine offset heads around one pixel as the
  sharpness ``alpha`` grows (``book/attention-conv.md``, from
  :func:`vitbias.attention_conv.positional_attention`);
- :func:`patch_size_slider`: tokens, kept dimensions and encoder cost as the
  patch side changes (``book/patches.md``, from :mod:`vitbias.cost` and
  :class:`vitbias.vit.ViTConfig`);
- :func:`position_resize`: the bilinear resize of the position table, each new
  cell's four old cells and weights on hover (``book/patches.md``, from
  :mod:`vitbias.positions`);
- :func:`pretraining_sets`: Table 5 of the ViT paper beside BiT's ResNet
  (``book/crossover.md``, from :mod:`vitbias.literature`);
- :func:`receptive_field_growth`: what the centre patch sees, layer by layer
  (``book/locality.md``, from :mod:`vitbias.locality`).

:func:`show` wraps a figure for a notebook cell: its HTML output draws the
figure with the plotly.js that the site serves from ``_static/plotly/`` (the
book's Sphinx extension, ``tools/booksite.py``, adds that script once to each
page holding a figure marked with :data:`MARKER`); anywhere else (a PDF, a
plain notebook front end) the cell shows its static image, or a sentence.

No number is kept behind the pointer: a figure with a slider gets two buttons
that step it and a table of its steps; a figure read by hovering carries its
numbers as a table in ``layout.meta["table"]`` (:func:`data_table`). Both
tables are folded under the figure, for a reader with a keyboard or a screen
reader.

Arrays enter the figures as lists, so their JSON holds decimal numbers a test
and a reader can check, not base64 blobs.
"""

from __future__ import annotations

import base64
import html as markup
import io
import json
import re

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import attention_conv, cost, geometry, locality, positions
from .. import literature as lit
from .. import vit as vit_configs

MARKER = "vitbias-plotly"
"""The class of the ``<div>`` every interactive figure is drawn into; the site loads plotly.js where it occurs."""

CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["sendDataToCloud", "sendChartToCloud"]}
TEMPLATE = "simple_white"
# A square-root colour scale (as in the static figures), so small weights stay visible: (position, colour).
SQRT_BLUES = [[(i / 10) ** 2, f"rgb({int(247 - 239 * i / 10)},{int(251 - 203 * i / 10)},{int(255 - 148 * i / 10)})"]
              for i in range(11)]
CLEAR = "rgba(0,0,0,0)"   # shapes drawn as outlines only
ANIMATE = {"frame": {"duration": 350, "redraw": True}, "transition": {"duration": 0}, "mode": "immediate"}


# ---------------------------------------------------------------------------
# Showing a figure in a notebook cell and on the site.
# ---------------------------------------------------------------------------


# For a figure whose layout.meta names ``hover_boxes`` (position_resize): hovering a cell of the
# trace it names frames the four old cells its customdata lists, each line as thick as its weight.
HOVER_BOXES = """  function boxes(div, meta) {
    var box = meta && meta.hover_boxes;
    if (!box) return;
    div.on("plotly_hover", function (event) {
      var p = event.points[0];
      if (p.curveNumber !== box.trace) return;
      Plotly.relayout(div, {shapes: cell_boxes(box, p.customdata, p.y, p.x)});
    });
  }
  function cell_boxes(box, c, row, col) {
    var cells = [[c[0], c[2], c[4]], [c[0], c[3], c[5]], [c[1], c[2], c[6]], [c[1], c[3], c[7]]];
    var shapes = cells.map(function (s) {
      return {type: "rect", xref: box.old[0], yref: box.old[1], x0: s[1] - 0.5, x1: s[1] + 0.5,
              y0: s[0] - 0.5, y1: s[0] + 0.5, line: {color: "black", width: 1 + 4 * s[2]},
              fillcolor: "rgba(0,0,0,0)"};
    });
    shapes.push({type: "circle", xref: box.new[0], yref: box.new[1], x0: col - 0.6, x1: col + 0.6,
                 y0: row - 0.6, y1: row + 0.6, line: {color: "black", width: 2}, fillcolor: "rgba(0,0,0,0)"});
    return shapes;
  }
"""


# For a figure with a slider: the buttons after it (:func:`_step_keys`) move the slider one step
# either way, and say which step it is on, so that a reader with a keyboard or a screen reader can
# step through it: the slider plotly.js draws takes no keyboard focus.
STEP_KEYS = """  function keys(div, spec) {
    var group = document.getElementById(div.id + "-keys");
    var slider = spec.layout.sliders && spec.layout.sliders[0];
    if (!group || !slider) return;
    var say = group.querySelector("[aria-live]");
    var prefix = (slider.currentvalue && slider.currentvalue.prefix) || "";
    function go(i) {
      var steps = div.layout.sliders[0].steps;
      i = Math.max(0, Math.min(steps.length - 1, i));
      Plotly.animate(div, steps[i].args[0], {frame: {duration: 0, redraw: true},
                                             transition: {duration: 0}, mode: "immediate"});
      Plotly.relayout(div, {"sliders[0].active": i});
      say.textContent = prefix + steps[i].label;
    }
    group.querySelectorAll("button").forEach(function (button) {
      button.disabled = false;
      button.addEventListener("click", function () {
        go((div.layout.sliders[0].active || 0) + Number(button.dataset.step));
      });
    });
  }
"""


def _slider_steps(spec: dict) -> int:
    """How many steps the figure's first slider has (0 without one)."""
    sliders = spec.get("layout", {}).get("sliders") or []
    return len(sliders[0].get("steps", [])) if sliders else 0


def _step_keys(name: str, steps: int) -> str:
    """The keyboard's way through a slider of ``steps`` steps: two buttons and a line a screen reader reads
    out (enabled once the figure is drawn)."""
    if not steps:
        return ""
    return (f'<div class="{MARKER}-keys" id="{name}-keys" role="group" aria-label="Step through the figure">'
            f'<button type="button" data-step="-1" disabled>Previous step</button> '
            f'<button type="button" data-step="1" disabled>Next step</button> '
            f'<span class="{MARKER}-step" aria-live="polite"></span></div>\n')


def step_rows(spec: dict) -> list[tuple[str, str]]:
    """``(slider label, what the frame shows)`` for each step of the figure's first slider: the label and
    the title of the frame that step shows, as plain text (a line break of the title becomes a semicolon)."""
    sliders = spec.get("layout", {}).get("sliders") or []
    if not sliders:
        return []
    titles = {frame.get("name"): frame.get("layout", {}).get("title", {}).get("text", "")
              for frame in spec.get("frames", [])}
    rows = []
    for step in sliders[0].get("steps", []):
        name = step["args"][0][0]
        if not titles.get(name):
            raise ValueError(f"the slider's step {step.get('label')!r} shows frame {name!r}, which has no title "
                             "to say what it shows")
        rows.append((str(step["label"]), re.sub(r"\s*<br>\s*", "; ", titles[name])))
    return rows


def _folded_table(name: str, summary: str, columns, rows) -> str:
    """An HTML table folded under ``summary``: a header row of ``columns``, then ``rows``, the first cell of
    each a row header."""
    head = "".join(f'<th scope="col">{markup.escape(str(c))}</th>' for c in columns)
    body = "".join(f'<tr><th scope="row">{markup.escape(str(row[0]))}</th>'
                   + "".join(f"<td>{markup.escape(str(cell))}</td>" for cell in row[1:]) + "</tr>"
                   for row in rows)
    return (f'<details class="{MARKER}-table" id="{name}-table"><summary>{markup.escape(summary)}</summary>'
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></details>\n")


def data_table(spec: dict) -> dict | None:
    """The numbers a figure without a slider shows on hover, as ``layout.meta["table"]`` holds them:
    ``{"summary": ..., "columns": [...], "rows": [[...], ...]}``, or ``None``. A reader who cannot point
    at the figure reads them there instead."""
    table = ((spec.get("layout") or {}).get("meta") or {}).get("table")
    if table is None:
        return None
    if set(table) != {"summary", "columns", "rows"} or any(len(row) != len(table["columns"])
                                                            for row in table["rows"]):
        raise ValueError("a figure's table needs a summary, columns and rows as long as the columns")
    return table


def _step_table(name: str, spec: dict) -> str:
    """The figure as an HTML table a screen reader can read, folded under its summary: with a slider, one
    row per step (:func:`step_rows`), for a reader who cannot see the figure or move its slider; without
    one, the numbers it shows on hover (:func:`data_table`), for a reader who cannot point at it."""
    rows = step_rows(spec)
    if not rows:
        table = data_table(spec)
        return "" if table is None else _folded_table(name, table["summary"], table["columns"], table["rows"])
    slider = spec["layout"]["sliders"][0]
    heading = ((slider.get("currentvalue") or {}).get("prefix") or "step").strip(" =:") or "step"
    return _folded_table(name, "The figure as a table, step by step", (heading, "what the figure shows"), rows)


class Interactive:
    """A figure as a cell output: HTML that draws it, with a static image or a sentence for elsewhere.

    ``figure``: a Plotly figure; ``name``: the id of its ``<div>`` (fixed, so
    a rebuild writes the same page); ``static``: a matplotlib figure or PNG
    bytes shown where HTML with scripts is not (PDF), or ``None``;
    ``fallback``: the sentence shown inside the ``<div>`` until the figure is
    drawn, and as the plain-text output.
    """

    def __init__(self, figure: go.Figure, name: str, static=None, fallback: str = ""):
        if not name.replace("-", "").isalnum():
            raise ValueError(f"name must be letters, digits and hyphens (an HTML id), got {name!r}")
        self.figure, self.name, self.fallback = figure, name, fallback or "An interactive figure."
        self.png = _png(static) if static is not None else None

    def html(self) -> str:
        """The ``<div>`` and the script that draws the figure into it once plotly.js has loaded."""
        spec = self.figure.to_plotly_json()
        spec = {"data": spec.get("data", []), "layout": spec.get("layout", {}),
                "frames": spec.get("frames", []), "config": CONFIG}
        payload = json.dumps(spec, cls=_Encoder, sort_keys=True, separators=(",", ":"))
        payload = payload.replace("</", "<\\/")   # never closes the <script> early
        steps = _slider_steps(spec)
        counted = f' data-steps="{steps}"' if steps else ""
        return (f'<div class="{MARKER}" id="{self.name}"{counted}>'
                f'<p class="{MARKER}-fallback"><em>{self.fallback}</em></p>'
                f"</div>\n{_step_keys(self.name, steps)}{_step_table(self.name, spec)}<script>(function () {{\n"
                f"  var spec = {payload};\n"
                f"  function draw() {{\n"
                f'    var div = document.getElementById("{self.name}");\n'
                f"    if (!div || !window.Plotly || div.dataset.drawn) return;\n"
                f'    div.dataset.drawn = "1"; div.innerHTML = "";\n'
                f"    Plotly.newPlot(div, spec).then(function () {{\n"
                f"      boxes(div, spec.layout.meta); keys(div, spec);\n"
                f"    }});\n"
                f"  }}\n"
                f"{HOVER_BOXES}"
                f"{STEP_KEYS if steps else '  function keys() {}' + chr(10)}"
                f'  if (window.Plotly) draw(); else window.addEventListener("load", draw);\n'
                f"}})();</script>")

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/html": self.html(), "text/plain": self.fallback}
        if self.png is not None:
            bundle["image/png"] = base64.b64encode(self.png).decode("ascii")
        return bundle


def show(figure: go.Figure, name: str, static=None, fallback: str = "") -> Interactive:
    """``figure`` as a cell's output (:class:`Interactive`)."""
    return Interactive(figure, name, static, fallback)


def _png(static) -> bytes:
    if isinstance(static, bytes):
        return static
    buffer = io.BytesIO()
    static.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


class _Encoder(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, np.generic):
            return o.item()
        return super().default(o)


def _steps_slider(labels, frames, prefix: str) -> dict:
    """A slider that jumps to frame ``frames[i]`` when set to ``labels[i]``."""
    return {"active": 0, "currentvalue": {"prefix": prefix}, "pad": {"t": 40},
            "steps": [{"label": label, "method": "animate", "args": [[frame], ANIMATE]}
                      for label, frame in zip(labels, frames)]}


# ---------------------------------------------------------------------------
# The figures.
# ---------------------------------------------------------------------------


def attention_sharpening(alphas=(0.25, 0.5, 1, 1.5, 2, 3, 4, 5, 6, 8, 10, 12, 15, 18, 20),
                         grid=(7, 7), kernel: int = 3) -> go.Figure:
    """The ``kernel^2`` offset heads seen from the centre pixel of a circular ``grid``, one frame per ``alpha``.

    Heatmap ``j`` (trace ``j``, placed in the ``kernel x kernel`` layout by its
    offset) holds head ``j``'s weights over the grid, ``(H, W)``: row ``centre``
    of :func:`vitbias.attention_conv.positional_attention` ``(h, N, N)`` for the
    offsets :func:`vitbias.geometry.kernel_offsets`. Frame ``i`` (named
    ``alpha_i``) holds the ``h`` maps at ``alphas[i]``; the figure starts at
    ``alphas[0]``. "Sharpen" plays the frames; the slider picks one.
    """
    alphas = [float(a) for a in alphas]
    H, W = grid
    offsets = geometry.kernel_offsets(kernel, dim=2)                         # (h, 2)
    centre = np.ravel_multi_index((H // 2, W // 2), grid)
    maps = np.stack([attention_conv.positional_attention(grid, offsets, a)[:, centre].reshape(-1, H, W).numpy()
                     for a in alphas])                                        # (alphas, h, H, W)
    a = kernel // 2
    fig = make_subplots(kernel, kernel, horizontal_spacing=0.03, vertical_spacing=0.05,
                        subplot_titles=[f"Δ = ({r:+d}, {c:+d})" for r, c in offsets])
    for j, (r, c) in enumerate(offsets):
        fig.add_trace(go.Heatmap(z=maps[0, j].tolist(), zmin=0, zmax=1, colorscale=SQRT_BLUES,
                                 showscale=j == 0, colorbar={"title": {"text": "weight"}, "len": 0.8},
                                 name=f"head Δ = ({r:+d}, {c:+d})",
                                 hovertemplate="row %{y}, column %{x}: weight %{z:.4f}<extra>%{fullData.name}</extra>"),
                      row=int(r) + a + 1, col=int(c) + a + 1)
        axes = {"row": int(r) + a + 1, "col": int(c) + a + 1}
        fig.add_shape(type="rect", x0=W // 2 + c - 0.5, x1=W // 2 + c + 0.5, y0=H // 2 + r - 0.5,
                      y1=H // 2 + r + 0.5, line={"color": "darkorange", "width": 2}, fillcolor=CLEAR, opacity=1, **axes)
        fig.add_shape(type="circle", x0=W // 2 - 0.2, x1=W // 2 + 0.2, y0=H // 2 - 0.2, y1=H // 2 + 0.2,
                      line={"color": "crimson", "width": 2}, fillcolor="crimson", opacity=1, **axes)
    fig.update_xaxes(showticklabels=False, ticks="", showline=False, constrain="domain")
    fig.update_yaxes(showticklabels=False, ticks="", showline=False, autorange="reversed",
                     scaleanchor="x", constrain="domain")
    targets = maps[:, np.arange(len(offsets)), H // 2 + offsets[:, 0], W // 2 + offsets[:, 1]]  # (alphas, h)
    titles = [f"α = {alpha:g}: each head puts {t.min():.4f} on its target" for alpha, t in zip(alphas, targets)]
    names = [f"alpha_{i}" for i in range(len(alphas))]
    fig.frames = [go.Frame(name=name, data=[go.Heatmap(z=m.tolist()) for m in frame],
                           traces=list(range(len(offsets))), layout={"title": {"text": title}})
                  for name, frame, title in zip(names, maps, titles)]
    fig.update_layout(
        template=TEMPLATE, height=620, title={"text": titles[0]}, margin={"t": 90, "b": 20},
        sliders=[_steps_slider([f"{alpha:g}" for alpha in alphas], names, "α = ")],
        updatemenus=[{"type": "buttons", "direction": "left", "x": 0, "y": -0.02, "xanchor": "left",
                      "yanchor": "top", "showactive": False,
                      "buttons": [{"label": "Sharpen", "method": "animate", "args": [None, {**ANIMATE,
                                                                                            "fromcurrent": True}]},
                                  {"label": "Blur", "method": "animate", "args": [[names[0]], ANIMATE]}]}])
    fig.layout.sliders[0].pad = {"t": 40, "l": 140}
    return fig


def face_tokens(patch: int, image: int = 224, centre: float = 112.0, radius: float = 48.0) -> np.ndarray:
    """Which patches of an ``image x image`` picture a round face (a disk) overlaps: ``(image/P, image/P)`` bools.

    A patch counts when the nearest point of its square lies strictly inside
    the disk, so a patch the face only touches at one point does not.
    """
    side = image // patch
    lows = np.arange(side) * patch                                    # each patch's first pixel
    nearest = np.clip(centre, lows, lows + patch)                     # the nearest coordinate along one axis
    gap = (nearest - centre) ** 2
    return gap[:, None] + gap[None, :] < radius**2


def patch_size_slider(patches=(8, 14, 16, 28, 32), config: vit_configs.ViTConfig = vit_configs.VIT_B_16,
                      face_radius: float = 48.0) -> go.Figure:
    """A face of ``2 face_radius`` pixels cut into patches, and what each patch side costs, one step per side.

    Left, trace 0: a heatmap ``(S, S)``, ``S = img_size / P``, with 1 on the
    patches the face covers (:func:`face_tokens`). Right, traces 1 and 2: the
    encoder's multiply-adds per image in billions for every side, the dense and
    the attention part (:func:`vitbias.cost.cost_table` of ``config``'s width and
    depth). Step ``i`` of the slider shows ``patches[i]``; its title gives the
    tokens (``config.replace(patch_size=P).num_patches``), the face's tokens and
    the share of a patch's ``P^2 C`` numbers that a token of width ``d`` can
    keep, ``min(d, P^2 C) / P^2 C``. The figure starts at the side nearest 16.
    """
    image, d = config.img_size, config.embed_dim
    rows = cost.cost_table(d=d, depth=config.depth, settings=[(image, P) for P in patches])
    start = int(np.argmin([abs(P - 16) for P in patches]))
    labels = [f"P = {P}" for P in patches]
    fig = make_subplots(1, 2, column_widths=[0.45, 0.55], horizontal_spacing=0.12,
                        subplot_titles=[f"a face {2 * face_radius:.0f} px across, at {image} px",
                                        "encoder multiply-adds per image"])
    covered = [face_tokens(P, image, image / 2, face_radius) for P in patches]
    fig.add_trace(go.Heatmap(z=covered[start].astype(int).tolist(), x0=patches[start] / 2, dx=patches[start],
                             y0=patches[start] / 2, dy=patches[start], zmin=0, zmax=1, showscale=False,
                             colorscale=[[0, "rgb(235,235,235)"], [1, "rgb(253,208,162)"]], xgap=1, ygap=1,
                             name="patches", hovertemplate="patch at (%{y:.0f}, %{x:.0f}) px<extra></extra>"),
                  row=1, col=1)
    widths = [[3 if i == k else 0 for i in range(len(patches))] for k in range(len(patches))]
    for part, colour in (("dense", "rgb(31,119,180)"), ("attention", "rgb(214,39,40)")):
        fig.add_trace(go.Bar(x=labels, y=[getattr(r, part) for r in rows], name=f"{part} part", marker_color=colour,
                             marker_line={"color": "black", "width": widths[start]},
                             customdata=[r.tokens for r in rows],
                             hovertemplate="%{x}: %{customdata} tokens, %{y:.2f} G<extra>%{fullData.name}</extra>"),
                      row=1, col=2)
    r0 = image / 2
    face = [("circle", r0 - face_radius, r0 + face_radius, r0 - face_radius, r0 + face_radius)] + \
           [("circle", r0 + dx - 7, r0 + dx + 7, r0 - 20, r0 - 6) for dx in (-18, 18)] + \
           [("rect", r0 - 20, r0 + 20, r0 + 16, r0 + 22)]
    for kind, x0, x1, y0, y1 in face:
        fig.add_shape(type=kind, x0=x0, x1=x1, y0=y0, y1=y1, line={"color": "black", "width": 2},
                      fillcolor=CLEAR, opacity=1, row=1, col=1)
    fig.update_xaxes(range=[0, image], showticklabels=False, ticks="", constrain="domain", row=1, col=1)
    fig.update_yaxes(range=[image, 0], showticklabels=False, ticks="", scaleanchor="x", constrain="domain",
                     row=1, col=1)
    fig.update_yaxes(title={"text": "billions"}, row=1, col=2)

    def title(i: int) -> str:
        P, r = patches[i], rows[i]
        shape = config.replace(patch_size=P)
        kept = min(d, shape.patch_dim) / shape.patch_dim
        return (f"P = {P}: {shape.num_patches} tokens, the face in {int(covered[i].sum())} of them<br>"
                f"a token keeps at most {100 * kept:.0f} % of its patch's {shape.patch_dim} numbers; "
                f"{r.total:.1f} G multiply-adds")

    names = [f"patch_{P}" for P in patches]
    fig.frames = [go.Frame(name=name, traces=[0, 1, 2], layout={"title": {"text": title(i)}},
                           data=[go.Heatmap(z=covered[i].astype(int).tolist(), x0=P / 2, dx=P, y0=P / 2, dy=P),
                                 go.Bar(marker_line_width=widths[i]), go.Bar(marker_line_width=widths[i])])
                  for i, (name, P) in enumerate(zip(names, patches))]
    slider = _steps_slider([str(P) for P in patches], names, "patch side P = ")
    fig.update_layout(template=TEMPLATE, height=470, barmode="stack", title={"text": title(start), "font":
                                                                              {"size": 13}},
                      legend={"x": 0.99, "xanchor": "right", "y": 0.95, "yanchor": "top"},
                      margin={"t": 110}, sliders=[{**slider, "active": start, "pad": {"t": 30}}])
    return fig


def patch_size_static(patches=(8, 16, 32), image: int = 224, face_radius: float = 48.0):
    """The print version of :func:`patch_size_slider`: the face cut at a few patch sides, one panel each.

    A closed matplotlib figure; each panel's title gives the tokens and the
    face's tokens (:func:`face_tokens`).
    """
    import matplotlib.pyplot as plt

    from .style import bare, canvas, finish

    fig, axes = canvas(1, len(patches), figsize=(2.6 * len(patches), 2.9), squeeze=False)
    for ax, P in zip(axes[0], patches):
        covered = face_tokens(P, image, image / 2, face_radius)
        ax.imshow(covered, cmap="Oranges", vmin=0, vmax=2.5, extent=(0, image, image, 0))
        for edge in np.arange(0, image + 1, P):
            ax.axhline(edge, color="white", linewidth=0.8)
            ax.axvline(edge, color="white", linewidth=0.8)
        ax.add_patch(plt.Circle((image / 2, image / 2), face_radius, fill=False, color="black", linewidth=1.5))
        tokens = vit_configs.VIT_B_16.replace(img_size=image, patch_size=P).num_patches
        bare(ax, f"P = {P}: {tokens} tokens, the face {int(covered.sum())}", fontsize=8)
    return finish(fig)


def position_resize(old_pattern, new_pattern, cell=(6, 10)) -> go.Figure:
    """A position-table pattern on the old grid (trace 0, ``(n, n)``) and resized (trace 1, ``(m, m)``).

    Hovering new cell ``(i, j)`` names the four old cells it averages and
    their weights, and frames those cells (each frame as thick as its
    weight; ``cell`` is framed until then): its ``customdata`` is ``(r0, r1, c0, c1, w00, w01, w10,
    w11)``, the rows and columns of :func:`vitbias.positions.bilinear_sources`
    and the outer product of their weights, as
    :func:`vitbias.positions.four_weights` gives them. ``new_pattern`` must be
    the resize of ``old_pattern`` (:func:`vitbias.positions.resize_position_table`
    channel by channel); the figure checks it to 1e-5.
    """
    old, new = np.asarray(old_pattern, dtype=np.float64), np.asarray(new_pattern, dtype=np.float64)
    if old.ndim != 2 or new.ndim != 2 or old.shape[0] != old.shape[1] or new.shape[0] != new.shape[1]:
        raise ValueError(f"expected two square grids, got {old.shape} and {new.shape}")
    n, m = old.shape[0], new.shape[0]
    if not all(isinstance(k, (int, np.integer)) and 0 <= k < m for k in cell) or len(cell) != 2:
        raise ValueError(f"cell must be (row, column) of the {m} x {m} grid, got {cell!r}")
    A = positions.interpolation_matrix(m, n)
    if not np.allclose(A @ old @ A.T, new, atol=1e-5):
        raise ValueError(f"new_pattern is not the bilinear resize of old_pattern from {n} x {n} to {m} x {m}")
    lower, upper, t = positions.bilinear_sources(m, n)                          # (m,) each
    w = np.stack([1 - t, t], axis=1)                                            # (m, 2)
    weights = w[:, None, :, None] * w[None, :, None, :]                         # (m, m, 2, 2): rows i, cols j
    custom = np.concatenate([np.broadcast_to(lower[:, None, None], (m, m, 1)),
                             np.broadcast_to(upper[:, None, None], (m, m, 1)),
                             np.broadcast_to(lower[None, :, None], (m, m, 1)),
                             np.broadcast_to(upper[None, :, None], (m, m, 1)),
                             weights.reshape(m, m, 4)], axis=2)                 # (m, m, 8)
    fig = make_subplots(1, 2, column_widths=[n / (n + m), m / (n + m)], horizontal_spacing=0.06,
                        subplot_titles=[f"the table on its {n} x {n} grid", f"resized to {m} x {m}"])
    shared = {"colorscale": "RdBu", "zmid": 0, "zmin": -max(abs(old).max(), abs(new).max()), "showscale": False}
    fig.add_trace(go.Heatmap(z=old.tolist(), name="old", **shared,
                             hovertemplate="old row %{y}, column %{x}: %{z:.3f}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Heatmap(
        z=new.tolist(), customdata=custom.tolist(), name="new", **shared,
        hovertemplate=("new row %{y}, column %{x}: %{z:.3f}<br>"
                       "= %{customdata[4]:.2f} × old (%{customdata[0]}, %{customdata[2]})"
                       " + %{customdata[5]:.2f} × old (%{customdata[0]}, %{customdata[3]})<br>"
                       "+ %{customdata[6]:.2f} × old (%{customdata[1]}, %{customdata[2]})"
                       " + %{customdata[7]:.2f} × old (%{customdata[1]}, %{customdata[3]})<extra></extra>")),
        row=1, col=2)
    i, j = cell
    c = custom[i, j]
    for r, col, weight in ((c[0], c[2], c[4]), (c[0], c[3], c[5]), (c[1], c[2], c[6]), (c[1], c[3], c[7])):
        fig.add_shape(type="rect", x0=col - 0.5, x1=col + 0.5, y0=r - 0.5, y1=r + 0.5, fillcolor=CLEAR, opacity=1,
                      line={"color": "black", "width": 1 + 4 * weight}, row=1, col=1)
    fig.add_shape(type="circle", x0=j - 0.6, x1=j + 0.6, y0=i - 0.6, y1=i + 0.6, fillcolor=CLEAR, opacity=1,
                  line={"color": "black", "width": 2}, row=1, col=2)
    fig.update_xaxes(showticklabels=False, ticks="", constrain="domain")
    fig.update_yaxes(showticklabels=False, ticks="", autorange="reversed", constrain="domain")
    fig.update_yaxes(scaleanchor="x", row=1, col=1)
    fig.update_yaxes(scaleanchor="x2", row=1, col=2)
    # The weights of a new cell are the product of its row's and its column's, and rows and columns
    # resize alike: one line per new index says all that hovering shows.
    table = {"summary": f"The resize as a table: the two old rows (or columns) each of the {m} new ones "
                        "averages, and their weights",
             "columns": ["new row or column", "old ones it averages", "their weights"],
             "rows": [[int(k), f"{lower[k]} and {upper[k]}", f"{1 - t[k]:.2f} and {t[k]:.2f}"] for k in range(m)]}
    fig.update_layout(template=TEMPLATE, height=430, margin={"t": 60},
                      meta={"hover_boxes": {"trace": 1, "old": ["x", "y"], "new": ["x2", "y2"]}, "table": table})
    return fig


def pretraining_sets(table5: dict | None = None, bit: dict | None = None, images: dict | None = None) -> go.Figure:
    """ImageNet top-1 against the size of the pretraining set: Table 5 of the ViT paper and BiT's ResNet152x4.

    One line per model (a trace named after it; the BiT ResNet is the last),
    ``x`` the number of pretraining images of each set it was pretrained on,
    ``y`` the published accuracy (%), ``customdata`` the set's name. The
    defaults are :data:`vitbias.literature.VIT_TABLE5`, ``BIT_R152X4`` and
    ``PRETRAINING_IMAGES``.
    """
    table5 = lit.VIT_TABLE5 if table5 is None else table5
    bit = lit.BIT_R152X4 if bit is None else bit
    images = lit.PRETRAINING_IMAGES if images is None else images
    sets = list(images)
    models = sorted({model for model, _ in table5}, key=lambda m: list(table5).index((m, sets[-1])))
    fig = go.Figure()
    hover = "%{fullData.name}, %{customdata}: %{y:.2f} %<extra></extra>"
    for model in models:
        points = [(images[s].value, table5[(model, s)].value, s) for s in sets if (model, s) in table5]
        x, y, names = zip(*points)
        fig.add_trace(go.Scatter(x=list(x), y=list(y), customdata=list(names), name=model, mode="lines+markers",
                                 hovertemplate=hover))
    fig.add_trace(go.Scatter(x=[images[s].value for s in sets], y=[bit[s].value for s in sets], customdata=sets,
                             name="BiT ResNet152x4", mode="lines+markers", hovertemplate=hover,
                             line={"color": "black", "dash": "dash"}, marker={"symbol": "square"}))
    fig.update_xaxes(type="log", tickvals=[images[s].value for s in sets],
                     ticktext=[f"{s} ({images[s].value / 1e6:.1f}M)" for s in sets],
                     title={"text": "pretraining set (images)"})
    fig.update_yaxes(title={"text": "ImageNet top-1 after fine-tuning (%)"})
    table = {"summary": "The figure as a table: ImageNet top-1 (%) of each model after each pretraining set",
             "columns": ["model", *[f"{s} ({images[s].value / 1e6:.1f}M images)" for s in sets]],
             "rows": [[m, *[f"{table5[(m, s)].value:.2f}" if (m, s) in table5 else "not reported" for s in sets]]
                      for m in models] + [["BiT ResNet152x4", *[f"{bit[s].value:.2f}" for s in sets]]]}
    fig.update_layout(template=TEMPLATE, height=450, hovermode="closest", colorway=[
        "#440154", "#3b528b", "#21918c", "#5ec962", "#b5de2b"], margin={"t": 30}, meta={"table": table})
    return fig


def receptive_field_growth(grid: int = 14, kernel: int = 3, layers: int = 8) -> go.Figure:
    """The patches the centre patch of a ``grid x grid`` map sees after each layer, one frame per layer.

    Trace 0: stacked ``kernel x kernel`` stride-1 convolutions, a ``(grid,
    grid)`` map with 1 on the patches within ``l * (kernel // 2)`` rows and
    columns of the centre cell ``grid // 2``; trace 1: attention, 1 everywhere.
    The counts in each frame's title are :func:`vitbias.locality.conv_receptive_field`
    and :func:`vitbias.locality.attention_receptive_field`, and equal the maps' sums.
    """
    conv = locality.conv_receptive_field(grid, kernel, layers)                   # (layers,)
    attention = locality.attention_receptive_field(grid, layers)                 # (layers,)
    centre = grid // 2
    reach = np.maximum.outer(abs(np.arange(grid) - centre), abs(np.arange(grid) - centre))  # (grid, grid)
    maps = [(reach <= layer * (kernel // 2)).astype(int) for layer in range(1, layers + 1)]
    fig = make_subplots(1, 2, horizontal_spacing=0.08,
                        subplot_titles=[f"{kernel} x {kernel} convolutions", "self-attention"])
    scale = {"zmin": 0, "zmax": 1, "showscale": False, "xgap": 1, "ygap": 1}
    fig.add_trace(go.Heatmap(z=maps[0].tolist(), colorscale=[[0, "rgb(235,235,235)"], [1, "rgb(31,119,180)"]],
                             name="convolutions", hovertemplate="row %{y}, column %{x}<extra></extra>", **scale),
                  row=1, col=1)
    fig.add_trace(go.Heatmap(z=np.ones((grid, grid), dtype=int).tolist(), name="attention",
                             colorscale=[[0, "rgb(235,235,235)"], [1, "rgb(214,39,40)"]],
                             hovertemplate="row %{y}, column %{x}<extra></extra>", **scale), row=1, col=2)
    for col in (1, 2):
        fig.add_shape(type="rect", x0=centre - 0.5, x1=centre + 0.5, y0=centre - 0.5, y1=centre + 0.5,
                      line={"color": "black", "width": 2}, fillcolor=CLEAR, opacity=1, row=1, col=col)
    fig.update_xaxes(showticklabels=False, ticks="", showline=False, constrain="domain")
    fig.update_yaxes(showticklabels=False, ticks="", showline=False, autorange="reversed", constrain="domain")
    fig.update_yaxes(scaleanchor="x", row=1, col=1)
    fig.update_yaxes(scaleanchor="x2", row=1, col=2)
    titles = [f"layer {layer}: the convolutions see {c} of {grid * grid} patches, attention {a}"
              for layer, c, a in zip(range(1, layers + 1), conv, attention)]
    names = [f"layer_{layer}" for layer in range(1, layers + 1)]
    fig.frames = [go.Frame(name=name, data=[go.Heatmap(z=m.tolist())], traces=[0], layout={"title": {"text": t}})
                  for name, m, t in zip(names, maps, titles)]
    fig.update_layout(template=TEMPLATE, height=450, title={"text": titles[0]}, margin={"t": 90},
                      sliders=[_steps_slider([str(layer) for layer in range(1, layers + 1)], names, "layer ")],
                      updatemenus=[{"type": "buttons", "x": 0, "y": -0.02, "xanchor": "left", "yanchor": "top",
                                    "showactive": False, "direction": "left",
                                    "buttons": [{"label": "Next layers", "method": "animate",
                                                 "args": [None, {**ANIMATE, "fromcurrent": True,
                                                                 "frame": {"duration": 700, "redraw": True}}]},
                                                {"label": "Layer 1", "method": "animate",
                                                 "args": [[names[0]], ANIMATE]}]}])
    fig.layout.sliders[0].pad = {"t": 40, "l": 190}
    return fig
