"""The grader: it passes the reference solutions, rejects each plausible wrong one, and reports clearly.

Every wrong solution (``wrong_solutions.py``) must fail on every seed tried,
and where the grader singles the mistake out, its hint must say so.
"""

import importlib
import inspect
import io
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import exercises.solutions as solutions
from exercises import EXERCISES
from exercises.checks import CHECKS
from exercises.grade import check, grade, main
from exercises.tests import wrong_solutions as wrong
from vitbias import attention_conv, cost, locality, masks, patches, scaling, symmetry, toy

ROOT = Path(__file__).resolve().parents[2]
SEEDS = (0, 1, 2, 3)


def assert_rejected(function):
    """``function`` fails its exercise on every seed, with the hint ``wrong.WRONG`` names."""
    name, phrase = wrong.WRONG[function]
    for seed in SEEDS:
        report = check({name: function}, seed=seed)
        (result,) = report.results
        assert not result.passed, f"{function.__name__} passed with seed {seed}"
        if phrase is not None:
            assert phrase in result.failure.hint, f"seed {seed}:\n{report}"


# ---------------------------------------------------------------------------
# The reference solutions pass
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_the_reference_solutions_pass_every_exercise(seed):
    report = check(vars(solutions), seed=seed)
    assert [result.name for result in report.results] == list(EXERCISES)
    assert report.passed, str(report)


def test_the_books_own_functions_pass():
    books = {"equivariance_error": symmetry.equivariance_error, "which_shifts_commute": symmetry.which_shifts_commute,
             "mean_attention_distance": locality.mean_attention_distance,
             "attention_rollout": locality.attention_rollout, "conv_via_attention": attention_conv.conv_via_attention,
             "grid_local_mask": masks.grid_local_mask, "embed_linear": patches.embed_linear,
             "block_macs": cost.block_macs, "parameter_counts": cost.parameter_counts,
             "toy_crossing_rows": lambda n, sigma, beta: toy.crossover_rows(toy.Toy(n=n, k=1, beta=beta, sigma=sigma)),
             "allowed_pairs": masks.allowed_pairs, "ladder_winners": scaling.ladder_winners}
    report = check(books, seed=5)
    assert report.passed and len(report.results) == len(EXERCISES), str(report)


# ---------------------------------------------------------------------------
# Each plausible wrong solution is rejected
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("function", list(wrong.WRONG), ids=lambda function: function.__name__)
def test_each_wrong_solution_is_rejected(function):
    assert_rejected(function)


def test_the_ladder_is_graded_on_the_books_measurement_where_the_run_cache_holds_it(monkeypatch, tmp_path):
    """The grader's case of the book's measurement is the crossover chapter's seed means, read from the
    run cache; where the chapter's runs are not there, the case is left out."""
    from exercises import checks

    measured = ({"plain": 0.9, "patches shuffled": 0.6}, 0.7)
    monkeypatch.setattr(checks.crossover_chapter, "measured_ladder", lambda budget: measured)
    cases = list(CHECKS["ladder_winners"].cases(np.random.default_rng(0)))
    [own] = [case for case in cases if "the book's own measurement" in case.label]
    assert own.args == measured
    monkeypatch.setattr(checks.crossover_chapter, "measured_ladder", lambda budget: None)
    labels = [case.label for case in CHECKS["ladder_winners"].cases(np.random.default_rng(0))]
    assert not any("the book's own measurement" in label for label in labels)


def test_the_grader_opens_no_file_and_names_no_tests_folder():
    source = (ROOT / "exercises" / "checks.py").read_text()
    assert "tests" not in source
    assert not any(call in source for call in ("open(", "read_text(", "json.load"))


def test_every_wrong_solution_is_listed():
    written = {value for name, value in vars(wrong).items()
               if inspect.isfunction(value) and value.__module__ == wrong.__name__ and not name.startswith("_")}
    assert written == set(wrong.WRONG)


# ---------------------------------------------------------------------------
# The stubs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXERCISES)
def test_each_stub_has_the_books_signature_and_raises_not_implemented(name):
    stub = getattr(importlib.import_module(f"exercises.{name}"), name)
    reference = CHECKS[name].reference
    if name == "embed_linear":
        reference = patches.embed_linear  # the grader compares with the Conv2d way; the book's function is this one
    positional = [(p.name, p.kind, p.default) for p in inspect.signature(reference).parameters.values()
                  if p.kind != p.KEYWORD_ONLY]
    assert [(p.name, p.kind, p.default) for p in inspect.signature(stub).parameters.values()] == positional
    assert stub.__doc__ and len(stub.__doc__) > 200
    with pytest.raises(NotImplementedError):
        stub(*[None] * sum(default is inspect.Parameter.empty for _, _, default in positional))


def test_a_stub_file_fails_with_not_implemented_and_a_non_zero_exit():
    done = subprocess.run([sys.executable, "-m", "exercises.grade", "exercises/attention_rollout.py"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "attention_rollout: FAIL" in done.stdout and "not implemented yet" in done.stdout


# ---------------------------------------------------------------------------
# The command line and the report
# ---------------------------------------------------------------------------


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, text, name="mine.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).strip() + "\n")
    return path


def test_the_solutions_file_passes_with_exit_status_zero(capsys):
    code, out, _ = run(capsys, ROOT / "exercises/solutions/__init__.py", "--seed", 11)
    assert code == 0
    assert out.count(": PASS") == len(EXERCISES) and "seed 11" in out


def test_the_report_names_the_failing_exercise_and_shows_inputs_expected_found_and_a_hint(tmp_path, capsys):
    mine = write(tmp_path, """
        from exercises.solutions import grid_local_mask
        from exercises.tests.wrong_solutions import rollout_without_the_residual_half as attention_rollout
    """)
    code, out, _ = run(capsys, mine, "--seed", 3)
    assert code == 1
    assert "grid_local_mask: PASS" in out and "attention_rollout: FAIL on" in out
    failing = out[out.index("attention_rollout: FAIL"):]
    for part in ("inputs:", "A_layers:", "n_prefix:", "expected:", "found:", "differs:", "hint:"):
        assert part in failing
    assert "residual" in failing
    assert "1 of 2 exercises pass" in out and "--seed 3" in out


def test_only_the_named_exercises_are_checked(capsys):
    code, out, _ = run(capsys, ROOT / "exercises/solutions/__init__.py", "grid_local_mask", "block_macs")
    assert code == 0
    assert [line.split(":")[0] for line in out.splitlines() if ": PASS" in line] == ["grid_local_mask", "block_macs"]


def test_an_unknown_name_is_an_error_that_lists_the_exercises(capsys):
    code, out, err = run(capsys, ROOT / "exercises/solutions/__init__.py", "rollout")
    assert code == 2 and out == ""
    assert "no exercise is called 'rollout'" in err and "attention_rollout" in err and "Traceback" not in err


def test_a_named_exercise_the_file_does_not_define_fails(tmp_path, capsys):
    mine = write(tmp_path, "from exercises.solutions import grid_local_mask")
    code, out, _ = run(capsys, mine, "grid_local_mask", "block_macs")
    assert code == 1 and "block_macs: FAIL" in out and "not defined" in out


def test_a_file_with_none_of_the_exercises_is_an_error(tmp_path, capsys):
    code, _, err = run(capsys, write(tmp_path, "def helper():\n    return 1"))
    assert code == 2 and "none of the exercises" in err


def test_a_missing_file_or_one_that_does_not_import_is_an_error_not_a_traceback(tmp_path, capsys):
    code, _, err = run(capsys, tmp_path / "absent.py")
    assert code == 2 and "no file" in err
    code, _, err = run(capsys, write(tmp_path, "def grid_local_mask(:\n    pass", "broken.py"))
    assert code == 2 and "SyntaxError" in err and "Traceback" not in err


def test_a_function_that_raises_is_reported_with_its_exception(capsys):
    def block_macs(tokens, d):
        return tokens * d, 0

    report = check({"block_macs": block_macs}, seed=0)
    assert not report.passed
    assert "raised TypeError" in report.results[0].failure.found
    assert "block_macs(tokens, d, mlp_ratio=4.0)" in report.results[0].failure.hint


def test_the_seed_replays_the_same_cases_and_each_run_draws_a_fresh_one():
    function = wrong.mean_attention_distance_with_rows_and_columns_swapped
    first, again = (str(check({"mean_attention_distance": function}, seed=1234)) for _ in range(2))
    assert first == again
    assert len({check({"block_macs": solutions.block_macs}).seed for _ in range(3)}) > 1


def test_grade_prints_the_report_and_returns_whether_all_passed():
    out = io.StringIO()
    assert grade({"grid_local_mask": solutions.grid_local_mask}, seed=4, file=out)
    assert "grid_local_mask: PASS" in out.getvalue() and "seed 4" in out.getvalue()
    assert not grade({"grid_local_mask": wrong.grid_local_mask_hiding_the_prefix_tokens}, file=io.StringIO())


def test_grade_explains_bad_requests_instead_of_raising():
    out = io.StringIO()
    assert not grade({"grid_local_mask": solutions.grid_local_mask}, names=["mask"], file=out)
    assert out.getvalue().startswith("Cannot grade: no exercise is called 'mask'")
    out = io.StringIO()
    assert not grade({"print": print}, file=out)
    assert "none of the exercises" in out.getvalue()
    assert not grade(vars(solutions), seed=-1, file=io.StringIO())
