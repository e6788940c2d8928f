"""The layers of ``vitbias`` (``tools/layers.py``, run by ``make lint``): the map in
``__init__.py`` places every module, and no import runs upward."""

import textwrap

import pytest

from tools import layers

MAP = '''"""A package in three layers.

1. Bottom

- ``base``: what everything uses;
- ``shapes``: more of the bottom.

2. Middle

- ``model``: built on the bottom.

3. Top

- ``figures``: a sub-package, all its modules with it.
"""
'''


def write_package(root, modules: dict[str, str], docstring: str = MAP):
    """A package at ``root`` with ``docstring`` as its map and ``modules`` (dotted name: source)."""
    root.mkdir()
    (root / "__init__.py").write_text(docstring)
    for name, source in modules.items():
        path = root.joinpath(*name.split("."))
        if name == "figures":
            path.mkdir(exist_ok=True)
            path = path / "__init__.py"
        else:
            path = path.with_suffix(".py")
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return root


@pytest.fixture
def package(tmp_path):
    """A package whose imports all run down its layers."""
    return write_package(tmp_path / "pkg", {
        "base": "import numpy\n",
        "shapes": "from . import base\n",
        "model": "from .base import thing\nfrom pkg import shapes\n",
        "figures": "",
        "figures.style": "from .. import model\n",
        "figures.plots": "from . import style\nfrom pkg.base import thing\n",
    })


def test_vitbias_imports_run_down_the_layers_of_its_map():
    assert layers.check() == []


def test_the_map_has_the_six_layers_the_book_describes():
    titles = [layer.title for layer in layers.read_layers()]
    assert titles == ["Foundations", "Ideas: the models and the mathematics, with no training", "Training",
                      "Ideas measured on trained models", "Chapters' experiments", "Book helpers and figures"]
    assert [layer.rank for layer in layers.read_layers()] == [1, 2, 3, 4, 5, 6]


def test_no_idea_of_the_mathematics_imports_the_trainer_or_the_run_cache():
    read = layers.read_layers()
    ideas, training = read[1], read[2]
    assert {"profile", "train", "runs"} == set(training.members)
    graph = layers.import_graph(layers.PACKAGE, layers.package_modules())
    assert {name: sorted(set(graph[name]) & set(training.members)) for name in ideas.members} == {
        name: [] for name in ideas.members}


def test_the_map_is_read_bottom_first_and_a_sub_package_takes_its_modules(package):
    read = layers.read_layers(package)
    assert [(layer.rank, layer.title, layer.members) for layer in read] == [
        (1, "Bottom", ("base", "shapes")), (2, "Middle", ("model",)), (3, "Top", ("figures",))]
    assert layers.layer_of("figures.plots", read).title == "Top"
    assert layers.package_modules(package) == ["base", "figures", "figures.plots", "figures.style", "model",
                                               "shapes"]
    assert layers.check(package) == []


@pytest.mark.parametrize("source", [
    "from .model import build\n",
    "from pkg import model\n",
    "import pkg.model\n",
    "def late():\n    from . import model\n",
])
def test_an_upward_import_is_caught_however_it_is_written(package, source):
    (package / "base.py").write_text(source)
    assert layers.check(package) == [
        "base (layer 1, Bottom) imports model (layer 2, Middle), a higher layer",
        "an import cycle: base -> model -> base"]   # model imports base: the upward import closes a cycle


def test_an_upward_import_from_a_sub_package_names_its_module(package):
    (package / "model.py").write_text("from .figures.style import canvas\n")
    assert layers.check(package) == [
        "model (layer 2, Middle) imports figures (layer 3, Top), a higher layer",
        "model (layer 2, Middle) imports figures.style (layer 3, Top), a higher layer",
        "an import cycle: figures.style -> model -> figures.style"]  # figures.style imports model


def test_a_module_missing_from_the_map_and_a_name_with_no_module_fail(package):
    (package / "extra.py").write_text("")
    (package / "shapes.py").unlink()
    assert layers.check(package) == [
        "extra: not placed in any layer of the map in __init__.py",
        "shapes: placed in layer 1, Bottom but there is no such module"]


def test_a_package_without_a_map_fails(tmp_path):
    root = write_package(tmp_path / "pkg", {"base": ""}, docstring='"""No layers here."""\n')
    assert layers.check(root)[0].startswith("__init__.py: the docstring declares no layer")


def test_the_command_fails_on_an_upward_import_and_passes_otherwise(package, capsys):
    assert layers.main([str(package)]) == 0
    (package / "shapes.py").write_text("from . import figures\n")
    assert layers.main([str(package)]) == 1
    assert "shapes (layer 1, Bottom) imports figures (layer 3, Top)" in capsys.readouterr().out


def test_two_modules_of_one_layer_that_import_each_other_are_named_in_their_cycle(tmp_path):
    root = write_package(tmp_path / "pkg", {
        "base": "def f():\n    from . import shapes\n",   # inside a function counts too
        "shapes": "from . import base\n",
        "model": "", "figures": "",
    })
    assert layers.check(root) == ["an import cycle: base -> shapes -> base"]


def test_a_longer_cycle_is_named_from_its_first_module_round_to_it_again():
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["e"]}
    assert layers.import_cycles(graph) == [["a", "b", "c", "a"]]   # a module importing itself is not a cycle
    assert layers.import_cycles({"a": ["b"], "b": []}) == []
