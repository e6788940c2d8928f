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

import pytest

import exercises.solutions as solutions
from exercises import EXERCISES
from exercises.checks import CHECKS
from exercises.grade import check, grade, main
from exercises.tests import wrong_solutions as wrong
from vitbias import attention_conv, cost, locality, masks, patches, symmetry, toy

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
             "allowed_pairs": masks.allowed_pairs}
    report = check(books, seed=5)
    assert report.passed and len(report.results) == len(EXERCISES), str(report)


# ---------------------------------------------------------------------------
# Each plausible wrong solution is rejected
# ---------------------------------------------------------------------------


def test_equivariance_error_with_the_wrong_shift_sign_is_rejected():
    assert_rejected(wrong.equivariance_error_with_the_wrong_shift_sign)


def test_equivariance_error_not_relative_to_the_output_is_rejected():
    assert_rejected(wrong.equivariance_error_not_relative_to_the_output)


def test_equivariance_error_rounding_the_output_shift_is_rejected():
    assert_rejected(wrong.equivariance_error_rounding_the_output_shift)


def test_equivariance_error_reading_one_integer_as_a_vertical_shift_is_rejected():
    assert_rejected(wrong.equivariance_error_reading_one_integer_as_a_vertical_shift)


def test_equivariance_error_for_single_images_only_is_rejected():
    assert_rejected(wrong.equivariance_error_for_single_images_only)


def test_which_shifts_commute_ignoring_the_stride_is_rejected():
    assert_rejected(wrong.which_shifts_commute_ignoring_the_stride)


def test_which_shifts_commute_over_the_output_grid_is_rejected():
    assert_rejected(wrong.which_shifts_commute_over_the_output_grid)


def test_mean_attention_distance_without_dropping_the_prefix_is_rejected():
    assert_rejected(wrong.mean_attention_distance_without_dropping_the_prefix)


def test_mean_attention_distance_without_renormalising_is_rejected():
    assert_rejected(wrong.mean_attention_distance_without_renormalising)


def test_mean_attention_distance_reading_the_first_tokens_as_patches_is_rejected():
    assert_rejected(wrong.mean_attention_distance_reading_the_first_tokens_as_patches)


def test_mean_attention_distance_with_one_class_token_hard_coded_is_rejected():
    assert_rejected(wrong.mean_attention_distance_with_one_class_token_hard_coded)


def test_mean_attention_distance_in_grid_cells_is_rejected():
    assert_rejected(wrong.mean_attention_distance_in_grid_cells)


def test_mean_attention_distance_with_rows_and_columns_swapped_is_rejected():
    assert_rejected(wrong.mean_attention_distance_with_rows_and_columns_swapped)


def test_mean_attention_distance_with_manhattan_distance_is_rejected():
    assert_rejected(wrong.mean_attention_distance_with_manhattan_distance)


def test_rollout_without_the_residual_half_is_rejected():
    assert_rejected(wrong.rollout_without_the_residual_half)


def test_rollout_with_the_product_in_the_wrong_order_is_rejected():
    assert_rejected(wrong.rollout_with_the_product_in_the_wrong_order)


def test_rollout_not_renormalising_rows_is_rejected():
    assert_rejected(wrong.rollout_not_renormalising_rows)


def test_rollout_renormalising_before_adding_the_residual_is_rejected():
    assert_rejected(wrong.rollout_renormalising_before_adding_the_residual)


def test_rollout_renormalising_the_patch_shares_is_rejected():
    assert_rejected(wrong.rollout_renormalising_the_patch_shares)


def test_rollout_reading_a_column_is_rejected():
    assert_rejected(wrong.rollout_reading_a_column)


def test_rollout_reading_the_first_row_without_a_prefix_is_rejected():
    assert_rejected(wrong.rollout_reading_the_first_row_without_a_prefix)


def test_rollout_of_the_last_layer_only_is_rejected():
    assert_rejected(wrong.rollout_of_the_last_layer_only)


def test_conv_via_attention_computing_a_convolution_is_rejected():
    assert_rejected(wrong.conv_via_attention_computing_a_convolution)


def test_conv_via_attention_with_the_kernel_transposed_is_rejected():
    assert_rejected(wrong.conv_via_attention_with_the_kernel_transposed)


def test_conv_via_attention_adding_the_bias_per_head_is_rejected():
    assert_rejected(wrong.conv_via_attention_adding_the_bias_per_head)


def test_conv_via_attention_ignoring_alpha_is_rejected():
    assert_rejected(wrong.conv_via_attention_ignoring_alpha)


def test_conv_via_attention_with_the_nearest_offset_is_rejected():
    assert_rejected(wrong.conv_via_attention_with_the_nearest_offset)


def test_grid_local_mask_hiding_the_prefix_tokens_is_rejected():
    assert_rejected(wrong.grid_local_mask_hiding_the_prefix_tokens)


def test_grid_local_mask_with_manhattan_distance_is_rejected():
    assert_rejected(wrong.grid_local_mask_with_manhattan_distance)


def test_grid_local_mask_with_euclidean_distance_is_rejected():
    assert_rejected(wrong.grid_local_mask_with_euclidean_distance)


def test_grid_local_mask_one_short_of_the_radius_is_rejected():
    assert_rejected(wrong.grid_local_mask_one_short_of_the_radius)


def test_grid_local_mask_with_the_prefix_last_is_rejected():
    assert_rejected(wrong.grid_local_mask_with_the_prefix_last)


def test_grid_local_mask_with_a_column_major_grid_is_rejected():
    assert_rejected(wrong.grid_local_mask_with_a_column_major_grid)


def test_grid_local_mask_of_floats_is_rejected():
    assert_rejected(wrong.grid_local_mask_of_floats)


def test_grid_local_mask_without_a_default_prefix_is_rejected():
    assert_rejected(wrong.grid_local_mask_without_a_default_prefix)


def test_embed_linear_flattening_channels_last_is_rejected():
    assert_rejected(wrong.embed_linear_flattening_channels_last)


def test_embed_linear_in_column_major_order_is_rejected():
    assert_rejected(wrong.embed_linear_in_column_major_order)


def test_embed_linear_without_the_bias_is_rejected():
    assert_rejected(wrong.embed_linear_without_the_bias)


def test_block_macs_with_one_attention_product_is_rejected():
    assert_rejected(wrong.block_macs_with_one_attention_product)


def test_block_macs_assuming_an_mlp_ratio_of_four_is_rejected():
    assert_rejected(wrong.block_macs_assuming_an_mlp_ratio_of_four)


def test_block_macs_in_flops_is_rejected():
    assert_rejected(wrong.block_macs_in_flops)


def test_parameter_counts_without_the_patch_bias_is_rejected():
    assert_rejected(wrong.parameter_counts_without_the_patch_bias)


def test_parameter_counts_with_positions_for_patches_only_is_rejected():
    assert_rejected(wrong.parameter_counts_with_positions_for_patches_only)


def test_parameter_counts_without_the_blocks_layernorms_is_rejected():
    assert_rejected(wrong.parameter_counts_without_the_blocks_layernorms)


def test_parameter_counts_with_a_head_even_without_classes_is_rejected():
    assert_rejected(wrong.parameter_counts_with_a_head_even_without_classes)


def test_toy_crossing_rows_without_the_plus_one_is_rejected():
    assert_rejected(wrong.toy_crossing_rows_without_the_plus_one)


def test_toy_crossing_rows_with_unsquared_errors_is_rejected():
    assert_rejected(wrong.toy_crossing_rows_with_unsquared_errors)


def test_allowed_pairs_without_the_prefix_is_rejected():
    assert_rejected(wrong.allowed_pairs_without_the_prefix)


def test_allowed_pairs_counting_the_prefix_block_twice_is_rejected():
    assert_rejected(wrong.allowed_pairs_counting_the_prefix_block_twice)


def test_allowed_pairs_with_a_diamond_window_is_rejected():
    assert_rejected(wrong.allowed_pairs_with_a_diamond_window)


def test_every_wrong_solution_is_tested():
    tested = {name[len("test_"):-len("_is_rejected")] for name in globals() if name.endswith("_is_rejected")}
    assert tested == {function.__name__ for function in wrong.WRONG}


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
