"""The 4 x 4 worked example, stated as properties."""

import numpy as np
import pytest
import torch

from vitbias import geometry, handvit


def test_patch_rows_are_patchify_of_a_one_channel_image():
    image = np.arange(16.0).reshape(4, 4)
    expected = geometry.patchify(torch.from_numpy(image)[None, None], 2)[0].numpy()
    np.testing.assert_array_equal(handvit.patch_rows(image), expected)
    np.testing.assert_array_equal(handvit.from_patch_rows(handvit.patch_rows(image)), image)


def test_the_embedding_reads_brightness_and_two_edges_and_misses_the_checkerboard():
    rows = handvit.EMBEDDING
    np.testing.assert_allclose(rows @ [1, 1, 1, 1], [1, 0, 0])     # a flat patch: brightness only
    np.testing.assert_allclose(rows @ [1, -1, -1, 1], [0, 0, 0])   # the checkerboard: nothing


def test_a_checkerboard_loses_1_in_every_patch_and_gives_the_tokens_of_uniform_grey():
    np.testing.assert_allclose(handvit.lost_per_patch(handvit.checkerboard()), 1.0, rtol=0, atol=1e-12)
    grey = handvit.forward(np.full((4, 4), 0.5))
    board = handvit.forward(handvit.checkerboard())
    np.testing.assert_allclose(board["tokens"], grey["tokens"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(board["probs"], grey["probs"], rtol=0, atol=1e-15)


def test_a_bar_loses_nothing():
    np.testing.assert_allclose(handvit.lost_per_patch(handvit.vertical_bar()), 0.0, atol=1e-12)


def test_the_cls_row_is_its_own_input_plus_the_attention_weighted_inputs():
    out = handvit.forward(handvit.vertical_bar())
    assert out["weights"].sum() == pytest.approx(1.0, abs=1e-15)
    expected = np.exp(out["scores"]) / np.exp(out["scores"]).sum()
    np.testing.assert_allclose(out["weights"], expected, rtol=1e-14)
    np.testing.assert_allclose(out["z"], out["inputs"][0] + out["weights"] @ out["inputs"], rtol=1e-14)
    assert out["probs"][0] > 0.5  # the bar is called vertical


def test_a_jigsaw_changes_the_answer_only_when_there_are_positions():
    bar, jig = handvit.vertical_bar(), handvit.swap_columns_of_patches(handvit.vertical_bar())
    assert not np.array_equal(bar, jig)
    plain = [handvit.forward(x, positions=False)["probs"] for x in (bar, jig)]
    placed = [handvit.forward(x)["probs"] for x in (bar, jig)]
    np.testing.assert_allclose(plain[0], plain[1], rtol=0, atol=1e-15)
    assert abs(placed[0][0] - placed[1][0]) > 1e-3


def test_bad_images_raise_value_errors():
    with pytest.raises(ValueError, match="4 x 4"):
        handvit.forward(np.zeros((4, 5)))
    with pytest.raises(ValueError, match="column"):
        handvit.vertical_bar(4)
    with pytest.raises(ValueError, match="patch rows"):
        handvit.from_patch_rows(np.zeros((3, 4)))
