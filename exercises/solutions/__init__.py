"""Reference solutions of the exercises, written from their docstrings (NumPy and PyTorch only).

The grader's own tests check that it accepts every one of them; the book
shows them folded under each exercise.
"""

from exercises.solutions.allowed_pairs import allowed_pairs
from exercises.solutions.attention_rollout import attention_rollout
from exercises.solutions.block_macs import block_macs
from exercises.solutions.conv_via_attention import conv_via_attention
from exercises.solutions.embed_linear import embed_linear
from exercises.solutions.equivariance_error import equivariance_error
from exercises.solutions.grid_local_mask import grid_local_mask
from exercises.solutions.ladder_winners import ladder_winners
from exercises.solutions.mean_attention_distance import mean_attention_distance
from exercises.solutions.parameter_counts import parameter_counts
from exercises.solutions.toy_crossing_rows import toy_crossing_rows
from exercises.solutions.which_shifts_commute import which_shifts_commute

__all__ = ["equivariance_error", "which_shifts_commute", "mean_attention_distance", "attention_rollout",
           "conv_via_attention", "grid_local_mask", "embed_linear", "block_macs", "parameter_counts",
           "toy_crossing_rows", "allowed_pairs", "ladder_winners"]
