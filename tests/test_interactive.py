"""The interactive figures show the library's numbers, and the site serves their plotly.js itself.

Each figure's values are read back out of the figure (its traces and
frames, as the page receives them) and compared with the ``vitbias``
function the chapter glues from: exactly, since both are the same
computation. The last tests build a two-page book with the site's extension
and check that plotly.js comes from ``_static/``, once, on the page that has a
figure, and nowhere else.
"""

from __future__ import annotations

import html as html_module
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import plotly
import pytest
import torch

from tools import booksite, sitebuild, sitecheck
from vitbias import attention_conv, cost, geometry, locality, positions, vit
from vitbias import literature as lit
from vitbias.figures import interactive

# Geographic and map traces fetch topojson and icons from CDNs (tools/sitecheck.py, NOT_FETCHED).
OFFLINE_TRACES = {"heatmap", "bar", "scatter"}


def frame(fig, name):
    return next(f for f in fig.frames if f.name == name)


# The nine heads (book/attention-conv.md).

@pytest.fixture(scope="module")
def heads():
    return interactive.attention_sharpening(alphas=(0.5, 2.0, 8.0, 20.0))


def test_each_frame_holds_the_heads_of_positional_attention_at_its_alpha(heads):
    offsets = geometry.kernel_offsets(3, dim=2)
    centre = np.ravel_multi_index((3, 3), (7, 7))
    for i, alpha in enumerate((0.5, 2.0, 8.0, 20.0)):
        expected = attention_conv.positional_attention((7, 7), offsets, alpha)[:, centre].reshape(9, 7, 7).numpy()
        shown = np.array([trace.z for trace in frame(heads, f"alpha_{i}").data])
        assert np.array_equal(shown, expected)
    assert np.array_equal(np.array([trace.z for trace in heads.data]),
                          np.array([trace.z for trace in frame(heads, "alpha_0").data]))


def test_each_head_sits_where_its_offset_points_and_the_title_names_the_weakest_target(heads):
    offsets = geometry.kernel_offsets(3, dim=2)
    for trace, (r, c) in zip(heads.data, offsets):
        assert trace.name == f"head Δ = ({r:+d}, {c:+d})"
        subplot = heads.get_subplot(int(r) + 2, int(c) + 2)
        assert trace.xaxis == subplot.xaxis.plotly_name.replace("axis", "")
    last = np.array([trace.z for trace in frame(heads, "alpha_3").data])
    target = last[np.arange(9), 3 + offsets[:, 0], 3 + offsets[:, 1]]
    assert frame(heads, "alpha_3").layout.title.text == f"α = 20: each head puts {target.min():.4f} on its target"
    assert [step.label for step in heads.layout.sliders[0].steps] == ["0.5", "2", "8", "20"]
    assert heads.layout.updatemenus[0].buttons[0].label == "Sharpen"


# The patch side (book/patches.md).

@pytest.fixture(scope="module")
def sizes():
    return interactive.patch_size_slider(patches=(8, 16, 32))


def test_the_bars_are_the_cost_model_of_vit_b(sizes):
    rows = cost.cost_table(d=768, depth=12, settings=[(224, 8), (224, 16), (224, 32)])
    dense, attention = sizes.data[1], sizes.data[2]
    assert list(dense.y) == [r.dense for r in rows] and list(attention.y) == [r.attention for r in rows]
    assert list(dense.customdata) == [vit.VIT_B_16.replace(patch_size=P).num_patches for P in (8, 16, 32)]
    assert list(dense.customdata) == [r.tokens for r in rows]


def test_the_source_numbers_at_32_and_8_pixels(sizes):
    # The slides: at P = 32 "the face becomes ~9 tokens and 75% of each patch's dimensions are gone
    # with ViT-B"; at P = 8, 784 tokens.
    at_32 = frame(sizes, "patch_32")
    assert np.array(at_32.data[0].z).sum() == 9 == interactive.face_tokens(32).sum()
    assert at_32.layout.title.text.startswith("P = 32: 49 tokens, the face in 9 of them<br>"
                                              "a token keeps at most 25 % of its patch's 3072 numbers")
    assert frame(sizes, "patch_8").layout.title.text.startswith("P = 8: 784 tokens")
    assert np.array(frame(sizes, "patch_8").data[0].z).shape == (28, 28)
    assert sizes.layout.sliders[0].active == 1 and sizes.data[0].dx == 16   # it opens at P = 16


def test_a_patch_counts_for_the_face_when_the_face_covers_part_of_it():
    covered = interactive.face_tokens(32)   # the face spans pixels 64 to 160: patches 2, 3 and 4
    assert covered[2:5, 2:5].all() and covered.sum() == 9
    assert interactive.face_tokens(16).sum() < interactive.face_tokens(8).sum() / 3


# The position-table resize (book/patches.md).

@pytest.fixture(scope="module")
def resize():
    old = np.add.outer(np.sin(np.arange(14) / 2), np.cos(np.arange(14) / 3))
    table = torch.cat([torch.zeros(1, 1, 1), torch.as_tensor(old).reshape(1, 196, 1)], dim=1)
    new = positions.resize_position_table(table, 14, 24)[0, 1:, 0].reshape(24, 24).numpy()
    return old, new, interactive.position_resize(old, new)


def test_every_new_cell_names_the_four_cells_and_weights_of_four_weights(resize):
    _, _, fig = resize
    custom = np.array(fig.data[1].customdata)                        # (24, 24, 8)
    for i, j in [(6, 10), (0, 0), (23, 23), (11, 12)]:
        (r0, r1), (c0, c1), weights = positions.four_weights(i, j, old_grid=14, new_grid=24)
        assert list(custom[i, j, :4]) == [r0, r1, c0, c1]
        assert np.array_equal(custom[i, j, 4:].reshape(2, 2), weights)
    assert np.allclose(custom[..., 4:].sum(axis=-1), 1, rtol=0, atol=1e-12)
    # The slides' example: new row 6, column 10 averages with 0.27, 0.44, 0.11 and 0.18.
    assert np.array_equal(np.round(custom[6, 10, 4:], 2), [w.value for row in lit.LAB_RESIZE_WEIGHTS for w in row])


def test_the_example_cell_is_framed_until_the_reader_hovers_another(resize):
    _, _, fig = resize
    (r0, r1), (c0, c1), weights = positions.four_weights(6, 10, old_grid=14, new_grid=24)
    boxes = [(s.y0 + 0.5, s.x0 + 0.5, s.line.width) for s in fig.layout.shapes if s.type == "rect"]
    assert boxes == [(r, c, 1 + 4 * weights[i, k]) for i, r in enumerate((r0, r1)) for k, c in enumerate((c0, c1))]
    circle = next(s for s in fig.layout.shapes if s.type == "circle")
    assert (circle.xref, (circle.x0 + circle.x1) / 2, (circle.y0 + circle.y1) / 2) == ("x2", 10, 6)
    assert fig.layout.meta["hover_boxes"] == {"trace": 1, "old": ["x", "y"], "new": ["x2", "y2"]}


def test_the_maps_are_the_patterns_it_was_given_and_a_wrong_resize_is_refused(resize):
    old, new, fig = resize
    assert np.array_equal(np.array(fig.data[0].z), old) and np.array_equal(np.array(fig.data[1].z), new)
    with pytest.raises(ValueError, match="not the bilinear resize"):
        interactive.position_resize(old, new + 1e-3)
    with pytest.raises(ValueError, match="square grids"):
        interactive.position_resize(old[:, :5], new)
    with pytest.raises(ValueError, match="of the 24 x 24 grid"):
        interactive.position_resize(old, new, cell=(6, 24))


# Table 5 (book/crossover.md).

def test_each_line_is_a_model_of_table_5_and_the_last_is_bits_resnet():
    fig = interactive.pretraining_sets()
    lines = {trace.name: trace for trace in fig.data}
    assert set(lines) == {m for m, _ in lit.VIT_TABLE5} | {"BiT ResNet152x4"} and fig.data[-1].name == "BiT ResNet152x4"
    for (model, pretraining), published in lit.VIT_TABLE5.items():
        line = lines[model]
        i = list(line.customdata).index(pretraining)
        assert line.y[i] == published.value and line.x[i] == lit.PRETRAINING_IMAGES[pretraining].value
    assert list(lines["ViT-L/16"].y) == [76.53, 85.15, 87.12]   # "hover L/16 and follow it up"
    assert list(lines["ViT-H/14"].customdata) == ["ImageNet-21k", "JFT-300M"]
    assert list(lines["BiT ResNet152x4"].y) == [lit.BIT_R152X4[s].value for s in lit.PRETRAINING_SETS]


# The receptive field (book/locality.md).

def test_each_layer_shows_as_many_patches_as_conv_receptive_field_counts():
    fig = interactive.receptive_field_growth(14, 3, 8)
    counts = [int(np.array(frame(fig, f"layer_{layer}").data[0].z).sum()) for layer in range(1, 9)]
    assert counts == list(locality.conv_receptive_field(14, 3, 8))
    assert counts == [9, 25, 49, 81, 121, 169, 196, 196]   # the source: 9 in layer 1, 49 in layer 3, all in layer 7
    assert np.array(fig.data[1].z).sum() == 196 == locality.attention_receptive_field(14, 1)[0]
    assert frame(fig, "layer_3").layout.title.text == "layer 3: the convolutions see 49 of 196 patches, attention 196"
    field = np.array(frame(fig, "layer_1").data[0].z)
    assert field[6:9, 6:9].all()   # centred on cell (7, 7)


# The cell's output.

ALL = {
    "heads": lambda: interactive.attention_sharpening(alphas=(1, 10)),
    "sizes": lambda: interactive.patch_size_slider(),
    "table5": lambda: interactive.pretraining_sets(),
    "fields": lambda: interactive.receptive_field_growth(),
    "resize": lambda: interactive.position_resize(np.eye(3), positions.interpolation_matrix(4, 3) @ np.eye(3)
                                                  @ positions.interpolation_matrix(4, 3).T, cell=(1, 2)),
}


@pytest.mark.parametrize("build", ALL.values(), ids=ALL.keys())
def test_the_html_draws_the_figure_it_holds_and_names_no_host(build):
    fig = build()
    assert {trace.type for trace in fig.data} <= OFFLINE_TRACES
    html = interactive.show(fig, "a-figure").html()
    steps = len(fig.layout.sliders[0].steps) if fig.layout.sliders else 0
    counted = f' data-steps="{steps}"' if steps else ""
    assert html.startswith(f'<div class="{interactive.MARKER}" id="a-figure"{counted}>')
    assert booksite._WIDGET_DIV.search(html).group(1) == "a-figure"
    assert not sitecheck._text_urls(html), "an inline script may not name a URL (tools/sitecheck.py)"
    assert html.count("</script>") == 1 and "bdata" not in html   # plain numbers, not base64 arrays
    spec = json.loads(re.search(r"var spec = (\{.*\});\n", html).group(1))
    assert spec["config"]["displaylogo"] is False
    assert [t.get("z", t.get("y")) for t in spec["data"]] == \
        [json.loads(json.dumps(t.z if t.type == "heatmap" else t.y, cls=interactive._Encoder)) for t in fig.data]
    assert len(spec["frames"]) == len(fig.frames)


@pytest.mark.parametrize("build", ALL.values(), ids=ALL.keys())
def test_a_figure_with_a_slider_has_two_buttons_that_step_it_and_a_line_that_says_the_step(build):
    fig = build()
    html = interactive.show(fig, "a-figure").html()
    keys = re.search(r'<div class="vitbias-plotly-keys" id="a-figure-keys".*?</div>', html, re.S)
    if not fig.layout.sliders:
        assert keys is None and "data-steps" not in html
        return
    assert keys is not None
    assert re.findall(r'<button type="button" data-step="(-?1)" disabled>', keys.group(0)) == ["-1", "1"]
    assert 'aria-live="polite"' in keys.group(0) and "function keys(div, spec)" in html


@pytest.mark.parametrize("build", ALL.values(), ids=ALL.keys())
def test_a_figure_with_a_slider_offers_a_table_with_one_row_per_step_saying_what_that_step_shows(build):
    fig = build()
    html = interactive.show(fig, "a-figure").html()
    table = re.search(r'<details class="vitbias-plotly-table" id="a-figure-table">.*?</details>', html, re.S)
    if not fig.layout.sliders:
        assert "step by step" not in html
        return
    rows = re.findall(r'<tr><th scope="row">(.*?)</th><td>(.*?)</td></tr>', table.group(0))
    steps = fig.layout.sliders[0].steps
    assert [label for label, _ in rows] == [step.label for step in steps]
    for (_, shown), step in zip(rows, steps):
        title = frame(fig, step.args[0][0]).layout.title.text
        assert shown == html_module.escape(title.replace("<br>", "; "))
    assert '<th scope="col">what the figure shows</th>' in table.group(0)


@pytest.mark.parametrize("build", ALL.values(), ids=ALL.keys())
def test_no_figure_keeps_its_numbers_behind_the_pointer_a_table_offers_them(build):
    fig = build()
    html = interactive.show(fig, "a-figure").html()
    table = re.search(r'<details class="vitbias-plotly-table" id="a-figure-table"><summary>(.+?)</summary>'
                      r"<table><thead><tr>(.*?)</tr></thead><tbody>(.*?)</tbody></table></details>", html, re.S)
    assert table is not None, "a reader who cannot point at the figure or move its slider has no table"
    columns = re.findall(r'<th scope="col">(.*?)</th>', table.group(2))
    rows = re.findall(r"<tr>(.*?)</tr>", table.group(3))
    assert rows and all(len(re.findall(r"<t[hd]\b", row)) == len(columns) for row in rows)


def test_the_table_of_table_5_holds_every_published_number_and_says_where_a_model_was_not_reported():
    table = interactive.data_table(interactive.pretraining_sets().to_plotly_json())
    rows = {row[0]: row[1:] for row in table["rows"]}
    assert set(rows) == {m for m, _ in lit.VIT_TABLE5} | {"BiT ResNet152x4"}
    for model, cells in rows.items():
        for pretraining, cell in zip(lit.PRETRAINING_SETS, cells):
            published = (lit.BIT_R152X4[pretraining] if model == "BiT ResNet152x4"
                         else lit.VIT_TABLE5.get((model, pretraining)))
            assert cell == (f"{published.value:.2f}" if published else "not reported")
    assert rows["ViT-H/14"][0] == "not reported"   # Table 5 has no ViT-H/14 pretrained on ImageNet-1k alone


def test_the_table_of_the_resize_gives_each_new_index_its_two_old_ones_and_the_weights_of_four_weights(resize):
    _, _, fig = resize
    rows = interactive.data_table(fig.to_plotly_json())["rows"]
    assert len(rows) == 24
    (r0, r1), (c0, c1), weights = positions.four_weights(6, 10, old_grid=14, new_grid=24)
    assert rows[6][1] == f"{r0} and {r1}" and rows[10][1] == f"{c0} and {c1}"
    row_w, col_w = [float(w) for w in rows[6][2].split(" and ")], [float(w) for w in rows[10][2].split(" and ")]
    assert np.allclose(np.outer(row_w, col_w), weights, atol=0.01)   # the cell's weights: the outer product


def test_a_table_whose_rows_do_not_match_its_columns_is_refused():
    spec = {"layout": {"meta": {"table": {"summary": "s", "columns": ["a", "b"], "rows": [[1]]}}}}
    with pytest.raises(ValueError, match="as long as the columns"):
        interactive.data_table(spec)


def test_the_table_of_the_layers_names_each_layer_and_what_the_convolutions_see():
    rows = interactive.step_rows(interactive.receptive_field_growth(grid=14, kernel=3, layers=3).to_plotly_json())
    assert rows == [("1", "layer 1: the convolutions see 9 of 196 patches, attention 196"),
                    ("2", "layer 2: the convolutions see 25 of 196 patches, attention 196"),
                    ("3", "layer 3: the convolutions see 49 of 196 patches, attention 196")]


def test_a_slider_step_whose_frame_has_no_title_is_refused():
    spec = interactive.receptive_field_growth(layers=2).to_plotly_json()
    spec["frames"][1]["layout"] = {}
    with pytest.raises(ValueError, match="no title"):
        interactive.step_rows(spec)


def test_the_output_carries_a_static_image_only_when_given_one():
    fig = interactive.pretraining_sets()
    bare = interactive.show(fig, "t5", fallback="see the figure above")._repr_mimebundle_()
    assert set(bare) == {"text/html", "text/plain"} and bare["text/plain"] == "see the figure above"
    with_image = interactive.show(fig, "t5", static=interactive.patch_size_static())._repr_mimebundle_()
    assert set(with_image) == {"text/html", "text/plain", "image/png"}
    with pytest.raises(ValueError, match="HTML id"):
        interactive.show(fig, "not an id")


# The site: plotly.js from _static/, once, where a figure is.

def test_the_site_and_the_figures_agree_on_the_marker():
    assert booksite.WIDGET_MARKER == interactive.MARKER
    assert booksite.plotly_script() == Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def notebook_with(outputs) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell("# A page"),
                nbformat.v4.new_code_cell("figures", outputs=[
                    nbformat.v4.new_output("display_data", data=bundle) for bundle in outputs])]
    return nb


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("plotly-site")
    two = [interactive.show(interactive.pretraining_sets(), name)._repr_mimebundle_() for name in ("one", "two")]
    nbformat.write(notebook_with(two), root / "figures.ipynb")
    nbformat.write(notebook_with([]), root / "plain.ipynb")
    (root / "intro.md").write_text("# Intro\n\nNo figure here.\n")
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: figures\n- file: plain\n")
    tools = Path(booksite.__file__).parent
    (root / "_config.yml").write_text(
        "title: t\nexecute:\n  execute_notebooks: 'off'\n"
        f"sphinx:\n  local_extensions:\n    booksite: {tools}\n"
        "  config:\n    suppress_warnings: ['mystnb.unknown_mime_type']\n")
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    done = subprocess.run([str(jupyter_book), "build", str(root), "--builder", "html", "-q"],
                          capture_output=True, text=True, timeout=600,
                          env={k: v for k, v in os.environ.items() if k not in sitebuild.VARIABLES})
    html = root / "_build" / "html"
    assert done.returncode == 0 and (html / "index.html").is_file(), done.stdout[-2000:] + done.stderr[-3000:]
    return html


def loaded_scripts(page: Path) -> list[str]:
    return re.findall(r'<script[^>]*src="([^"?]*)', page.read_text(encoding="utf-8"))


def test_a_page_with_figures_loads_plotly_from_static_once(site):
    scripts = [s for s in loaded_scripts(site / "figures.html") if "plotly" in s]
    assert scripts == [f"_static/{booksite.PLOTLY_SCRIPT}"]
    served = site / "_static" / booksite.PLOTLY_SCRIPT
    assert served.read_bytes() == booksite.plotly_script().read_bytes()
    assert (site / "figures.html").read_text(encoding="utf-8").count(f'class="{interactive.MARKER}"') == 2


def test_pages_without_a_figure_do_not_load_plotly(site):
    for page in ("plain.html", "intro.html"):
        assert not [s for s in loaded_scripts(site / page) if "plotly" in s], page


def test_the_site_with_figures_loads_nothing_from_another_host(site):
    assert sitecheck.problems(site) == []
