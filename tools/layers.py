"""The layers of ``vitbias``: a module imports only from its own layer and the layers below it.

The package's map, the docstring of its ``__init__.py``, is the contract. A
line ``1. Geometry and data`` opens a layer, the layers numbered from the
bottom up; each bullet under it that starts with a module's name in double
backquotes (``- ``geometry``: ...``) places that module, or a sub-package
with all its modules. ``make lint`` runs the check::

    python -m tools.layers [PACKAGE_FOLDER]     # code/vitbias by default

and fails, naming the module, the import and both layers, when a module
imports from a higher layer, when a module is missing from the map, or when
the map names a module that does not exist; and, naming the modules in the
order they import each other, when modules import each other in a cycle
(within a layer, where the layers alone allow it). Imports are read with
:func:`tools.booktools.imported_modules`, the reader that decides which
chapters a change re-executes, so imports inside functions count too.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from tools.booktools import PACKAGE, imported_modules, module_file

LAYER = re.compile(r"^(\d+)\.\s+(\S.*)$")
MEMBER = re.compile(r"^\s*[-*]\s+``([\w.]+)``")


@dataclass(frozen=True)
class Layer:
    """One layer of the map: its rank (1 at the bottom), its title and the modules it places."""

    rank: int
    title: str
    members: tuple[str, ...]


def read_layers(root: Path = PACKAGE) -> list[Layer]:
    """The layers the docstring of ``root/__init__.py`` declares, bottom first."""
    docstring = ast.get_docstring(ast.parse((root / "__init__.py").read_text(encoding="utf-8"))) or ""
    layers = []
    for line in docstring.splitlines():
        heading, member = LAYER.match(line), MEMBER.match(line)
        if heading:
            layers.append(Layer(int(heading.group(1)), heading.group(2).rstrip(":"), ()))
        elif member and layers:
            last = layers[-1]
            layers[-1] = Layer(last.rank, last.title, last.members + (member.group(1),))
    return layers


def package_modules(root: Path = PACKAGE) -> list[str]:
    """The dotted names of the package's modules (a sub-package by its own name), the root excepted."""
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            names.append(".".join(parts))
    return names


def layer_of(name: str, layers: list[Layer]) -> Layer | None:
    """The layer that places ``name``, itself or the closest package above it."""
    placed = {member: layer for layer in layers for member in layer.members}
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in placed:
            return placed[".".join(parts[:i])]
    return None


def _describe(layer: Layer) -> str:
    return f"layer {layer.rank}, {layer.title}"


def map_problems(layers: list[Layer], modules: list[str]) -> list[str]:
    """Modules the map leaves out, and names it places that are not modules."""
    if not layers:
        return ["__init__.py: the docstring declares no layer (a line such as `1. Geometry and data`)"]
    problems = [f"{name}: not placed in any layer of the map in __init__.py"
                for name in modules if layer_of(name, layers) is None]
    problems += [f"{member}: placed in {_describe(layer)} but there is no such module"
                 for layer in layers for member in layer.members if member not in modules]
    return problems


def upward_imports(root: Path, layers: list[Layer], modules: list[str]) -> list[str]:
    """Each import of a module from a higher layer than its own."""
    problems = []
    for name in modules:
        own = layer_of(name, layers)
        source = module_file(name, root).read_text(encoding="utf-8")
        for target in sorted(imported_modules(source, current=name, root=root)):
            theirs = layer_of(target, layers)
            if own and theirs and theirs.rank > own.rank:
                problems.append(f"{name} ({_describe(own)}) imports {target} ({_describe(theirs)}), "
                                "a higher layer")
    return problems


def import_graph(root: Path, modules: list[str]) -> dict[str, list[str]]:
    """Each module of the package and the package's modules it imports (at the top or in a function)."""
    known = set(modules)
    graph = {}
    for name in modules:
        source = module_file(name, root).read_text(encoding="utf-8")
        graph[name] = sorted(t for t in imported_modules(source, current=name, root=root) if t in known and t != name)
    return graph


def import_cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """One cycle ``[a, b, ..., a]`` for each group of modules that import each other (Tarjan's strongly
    connected components of ``graph``, each of two or more modules), in a fixed order."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, []):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_through(min(group), group, graph) for group in sorted(groups, key=min)]


def _cycle_through(start: str, group: set[str], graph: dict[str, list[str]]) -> list[str]:
    """A shortest path from ``start`` back to itself inside ``group`` (breadth first)."""
    previous, frontier = {}, [start]
    while frontier:
        following = []
        for node in frontier:
            for target in graph[node]:
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, node, start]
                if target in group and target not in previous:
                    previous[target] = node
                    following.append(target)
        frontier = following
    raise ValueError(f"{start} is in no cycle of {sorted(group)}")


def cycle_problems(root: Path, modules: list[str]) -> list[str]:
    """Each cycle of imports among the package's modules."""
    return [f"an import cycle: {' -> '.join(cycle)}" for cycle in import_cycles(import_graph(root, modules))]


def check(root: Path = PACKAGE) -> list[str]:
    """Every breach of the layers the package's map declares, and every import cycle (an empty list when
    there is none)."""
    layers, modules = read_layers(root), package_modules(root)
    return map_problems(layers, modules) + upward_imports(root, layers, modules) + cycle_problems(root, modules)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("package", nargs="?", type=Path, default=PACKAGE, help="the package's folder")
    args = parser.parse_args(argv)
    problems = check(args.package.resolve())
    print("\n".join(problems) or f"{args.package.name}: every import runs down the layers of its map")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
