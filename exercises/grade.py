"""Grade a reader's exercises against the book's functions.

    python -m exercises.grade FILE.py [NAME ...] [--seed SEED]

imports the functions of ``FILE.py`` and checks each exercise named (by
default, every exercise the file defines) against ``vitbias`` on cases drawn
at this run, plus fixed edge cases. It prints, per exercise, PASS or the
first failing case with its inputs, the expected and found values, and a
hint; then the seed, with which the same cases can be drawn again. The exit
status is 0 when every checked exercise passes, 1 when one fails, 2 when the
command itself is wrong (no such file, an unknown name, a file with none of
the exercises).

From Python, :func:`grade` prints the same report and returns whether all
passed; :func:`check` returns the :class:`Report` without printing::

    from exercises.grade import grade
    grade(globals())                                  # in a notebook
    grade({"grid_local_mask": my_mask}, seed=7)
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import inspect
import secrets
import sys
import textwrap
import traceback
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from exercises import EXERCISES
from exercises.checks import CHECKS
from exercises.spec import Case, Check, as_array


class GradeError(ValueError):
    """The grader was asked something it cannot do: an unknown exercise, a missing file."""


# ---------------------------------------------------------------------------
# What a run finds
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    case: Case
    found: str
    expected: str = ""
    problem: str = ""
    hint: str = ""


@dataclass(frozen=True)
class Result:
    name: str
    cases: int            # cases passed
    failure: Failure | None = None

    @property
    def passed(self) -> bool:
        return self.failure is None


@dataclass(frozen=True)
class Report:
    """Every checked exercise's :class:`Result`, and the seed that drew the cases."""

    seed: int
    results: tuple[Result, ...]
    replay: str = "--seed {seed}"

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)

    def failed(self) -> list[str]:
        return [result.name for result in self.results if not result.passed]

    def __str__(self) -> str:
        lines = [line for result in self.results for line in _result_lines(result)]
        passed = sum(result.passed for result in self.results)
        lines.append(f"{passed} of {len(self.results)} exercises pass. "
                     f"Cases drawn with seed {self.seed} (replay: {self.replay.format(seed=self.seed)}).")
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# Grading
# ---------------------------------------------------------------------------


def check(functions: Mapping[str, Callable], names: Iterable[str] | None = None,
          seed: int | None = None, replay: str = "seed={seed}") -> Report:
    """Check the reader's ``functions`` (name -> function) and return the :class:`Report`.

    ``names``: the exercises to check (default: every exercise ``functions``
    defines); a named exercise missing from ``functions`` fails. ``seed``
    draws the random cases (default: fresh entropy). Raises
    :class:`GradeError` for an unknown name or when nothing is left to check.
    """
    names = _chosen(functions, names)
    seed = secrets.randbits(32) if seed is None else _seed(seed)
    results = []
    for name in names:
        function = functions.get(name)
        if not callable(function):
            missing = "is not defined" if function is None else f"is a {type(function).__name__}, not a function"
            results.append(Result(name, 0, Failure(Case("", ()), found=f"{name} {missing}",
                                                   hint=f"define {_signature(name)}")))
            continue
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])  # a name's cases do not depend on the others
        results.append(_grade_one(name, function, CHECKS[name], rng))
    return Report(seed, tuple(results), replay)


def grade(functions: Mapping[str, Callable], names: Iterable[str] | None = None,
          seed: int | None = None, file=None) -> bool:
    """Check ``functions`` like :func:`check`, print the report, and return whether every exercise passed.

    An unknown name or nothing to check prints what went wrong and returns False.
    """
    file = sys.stdout if file is None else file
    try:
        report = check(functions, names, seed, replay="grade(..., seed={seed})")
    except GradeError as error:
        print(f"Cannot grade: {error}", file=file)
        return False
    print(report, file=file)
    return report.passed


def _chosen(functions, names) -> list[str]:
    if not isinstance(functions, Mapping):
        raise GradeError(f"functions must map exercise names to functions (a dict, or globals()), "
                         f"got {type(functions).__name__}")
    if names is None:
        names = [name for name in EXERCISES if callable(functions.get(name))]
        if not names:
            raise GradeError(f"none of the exercises is defined; they are: {', '.join(EXERCISES)}")
        return names
    names = [names] if isinstance(names, str) else list(names)
    unknown = [name for name in names if name not in EXERCISES]
    if unknown:
        raise GradeError(f"no exercise is called {', '.join(map(repr, unknown))}; "
                         f"the exercises are: {', '.join(EXERCISES)}")
    if not names:
        raise GradeError("no exercise named")
    return list(dict.fromkeys(names))


def _seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise GradeError(f"the seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def _grade_one(name: str, function: Callable, spec: Check, rng: np.random.Generator) -> Result:
    passed = 0
    for case in spec.cases(rng):
        expected = _call(spec.reference, case)
        try:
            found = _call(function, case)
        except NotImplementedError:
            return Result(name, passed, Failure(Case("", ()), "not implemented yet (it raises NotImplementedError)",
                                                hint=f"write the body of {_signature(name)}"))
        except Exception as error:  # the reader's code may raise anything; the report says what
            return Result(name, passed, Failure(
                case, f"raised {type(error).__name__}: {error}{_where(error, function)}", describe(expected),
                hint=f"it is called as {_signature(name)} with the inputs above"))
        if found is None:
            return Result(name, passed, Failure(case, "None", describe(expected), "nothing was returned",
                                                hint="return the result (is a return statement missing?)"))
        problem = spec.compare(found, expected)
        if problem is not None:
            return Result(name, passed, Failure(case, describe(found), describe(expected), problem,
                                                _hint(spec, case, found, expected)))
        passed += 1
    return Result(name, passed)


def _call(function: Callable, case: Case):
    # Fresh copies for every call: a function that writes into its inputs must not change the next call's.
    return function(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))


def _where(error: Exception, function: Callable) -> str:
    """Where in the reader's file the error was raised: the deepest frame of that file."""
    home = getattr(getattr(function, "__code__", None), "co_filename", None)
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == home]
    if not frames:
        return ""
    frame = frames[-1]
    return f"\n(in {Path(frame.filename).name}, line {frame.lineno}: {frame.line})"


def _hint(spec: Check, case: Case, found, expected) -> str:
    if spec.explain is not None:
        hint = spec.explain(found, expected)
        if hint:
            return hint
    for mistake in spec.mistakes:
        try:
            wrong = _call(mistake.function, case)
        except Exception:  # a known mistake that does not apply to this case
            continue
        if spec.compare(found, wrong) is None and spec.compare(wrong, expected) is not None:
            return mistake.hint
    return spec.hint


def _signature(name: str) -> str:
    stub = importlib.import_module(f"exercises.{name}")
    return f"{name}{inspect.signature(getattr(stub, name))}"


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------


def _result_lines(result: Result) -> list[str]:
    if result.passed:
        return [f"{result.name}: PASS ({result.cases} cases)"]
    f = result.failure
    where = f" on {f.case.label}" if f.case.label else ""
    after = f" (after {result.cases} case{'s' if result.cases > 1 else ''} passed)" if result.cases else ""
    lines = [f"{result.name}: FAIL{where}{after}"]
    if f.case.shown:
        lines.append("  inputs:")
        lines += [f"    {key}: {value}" for key, value in f.case.shown.items()]
    if f.expected:
        lines.append(_block("expected", f.expected))
    lines.append(_block("found", f.found))
    if f.problem:
        lines.append(_block("differs", f.problem))
    if f.hint:
        lines.append(_block("hint", textwrap.fill(f.hint, 96)))
    return lines


def _block(title: str, text: str) -> str:
    head = f"  {title}:"
    body = str(text).splitlines() or [""]
    if len(body) == 1 and len(head) + len(body[0]) < 110:
        return f"{head} {body[0]}"
    return head + "\n" + textwrap.indent("\n".join(body), "    ")


def describe(value) -> str:
    """A short text for a value: shape, type and the numbers when there are few."""
    if isinstance(value, Mapping):
        return "\n".join(f"{key!r}: {describe(item)}" for key, item in value.items()) or "{}"
    if isinstance(value, (bool, int, float, np.number, str)) or value is None:
        return repr(value.item() if isinstance(value, np.number) else value)
    if isinstance(value, tuple) and all(isinstance(v, (int, float, np.number)) for v in value):
        return repr(tuple(v.item() if isinstance(v, np.number) else v for v in value))
    try:
        array = as_array(value)
    except Exception:
        return f"a {type(value).__name__}"
    kind = type(value).__name__
    head = f"{kind} of shape {array.shape}, dtype {array.dtype}"
    if array.dtype == bool and array.ndim == 2 and array.size <= 900:
        rows = ["".join("#" if v else "." for v in row) for row in array]
        return head + " (# True, . False)\n" + "\n".join(rows)
    if array.dtype == object or array.size == 0:
        return head
    if array.size <= 48:
        return head + "\n" + np.array2string(array, precision=6, max_line_width=100)
    numbers = array.astype(float) if array.dtype != bool else array
    return head + f", from {numbers.min():.6g} to {numbers.max():.6g}"


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------


def load_functions(path: str | Path) -> dict[str, Callable]:
    """The functions that the Python file ``path`` defines, by name."""
    path = Path(path)
    if not path.is_file():
        raise GradeError(f"no file {str(path)!r}")
    if path.suffix != ".py":
        raise GradeError(f"{str(path)!r} is not a Python file (.py)")
    spec = importlib.util.spec_from_file_location(f"_solutions_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))  # so that the file can import its neighbours
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # whatever the file raises while it is imported
        raise GradeError(f"importing {str(path)!r} raised {type(error).__name__}: {error}") from None
    finally:
        sys.path.pop(0)
    return {name: value for name, value in vars(module).items() if callable(value)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m exercises.grade",
        description="Check your exercises against the book's functions, on cases drawn at this run.",
        epilog=f"The exercises: {', '.join(EXERCISES)}.")
    parser.add_argument("file", help="a Python file defining your functions")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="the exercises to check (default: every exercise the file defines)")
    parser.add_argument("--seed", type=int, help="draw the cases of an earlier run again")
    args = parser.parse_args(argv)
    try:
        functions = load_functions(args.file)
        report = check(functions, args.names or None, args.seed,
                       replay=f"python -m exercises.grade {args.file} {' '.join(args.names)} --seed {{seed}}"
                       .replace("  ", " "))
    except GradeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(report)
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
