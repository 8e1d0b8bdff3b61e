"""lib/lessons/loss: hand-made logits, torch's cross-entropy, and the model's own loss as oracles."""

import math

import numpy as np
import pytest
import torch

from lib.lessons.loss import bits, bits_saved, perplexity, text_loss
from lib.model.capture import run_capture


def test_uniform_logits_give_ln_v_and_perplexity_v():
    V, T = 8, 5
    loss = text_loss(np.zeros((T, V)), [0, 3, 7, 1, 1])
    np.testing.assert_allclose(loss.surprise, math.log(V))
    assert loss.n_predicted == T - 1
    assert math.isclose(loss.perplexity, V) and math.isclose(loss.bits_per_token, 3.0)


def test_hand_made_logits():
    # Row 0 gives token 1 probability 3/4; row 1 gives token 0 probability 1/2 (tied with token 1).
    logits = np.array([[0.0, math.log(3)], [0.0, 0.0], [5.0, -5.0]])
    loss = text_loss(logits, [0, 1, 0])
    np.testing.assert_allclose(loss.prob, [0.75, 0.5])
    np.testing.assert_allclose(loss.surprise, [-math.log(0.75), math.log(2)])
    assert loss.rank.tolist() == [1, 1]  # a tie with the top guess still ranks first
    assert loss.top.tolist() == [1, 0]
    assert math.isclose(loss.mean, (-math.log(0.75) + math.log(2)) / 2)
    wrong = text_loss(np.array([[4.0, 0.0, 2.0], [0.0, 0.0, 0.0]]), [0, 1])
    assert wrong.rank.tolist() == [3] and wrong.top.tolist() == [0]


def test_equal_to_torch_cross_entropy_on_random_logits():
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 5, (40, 300))
    ids = rng.integers(0, 300, 40)
    expected = torch.nn.functional.cross_entropy(torch.tensor(logits[:-1]), torch.tensor(ids[1:]), reduction="none")
    loss = text_loss(logits, ids)
    np.testing.assert_allclose(loss.surprise, expected.numpy(), atol=1e-10)
    assert math.isclose(loss.mean, float(expected.mean()), abs_tol=1e-10)


@pytest.mark.parametrize("fixture", ["tiny_llama", "tiny_gpt2", "real"])
def test_equal_to_the_models_own_loss(fixture, request):
    lm = request.getfixturevalue(fixture)
    cap = run_capture(lm, "The cat sat on the mat because it was tired.")
    ids = torch.tensor([cap.token_ids.tolist()])
    with torch.inference_mode():
        own = float(lm.model(input_ids=ids, labels=ids).loss)
    loss = text_loss(cap.logits, cap.token_ids)
    assert math.isclose(loss.mean, own, rel_tol=1e-5)
    assert math.isclose(loss.perplexity, math.exp(own), rel_tol=1e-4)


def test_the_seeds_drop_from_2_0_to_1_9():
    assert round(bits_saved(2.0, 1.9), 3) == 0.144  # the seed's "0.14 bits per token" checks out
    assert math.isclose(bits_saved(2.0, 1.9), 0.1 / math.log(2))
    assert round(perplexity(2.0), 2) == 7.39 and round(perplexity(1.9), 2) == 6.69
    assert math.isclose(bits(math.log(8)), 3.0)


def test_one_token_and_bad_shapes():
    one = text_loss(np.zeros((1, 5)), [2])
    assert one.n_predicted == 0 and math.isnan(one.mean)
    with pytest.raises(ValueError):
        text_loss(np.zeros((3, 5)), [1, 2])
    with pytest.raises(ValueError):
        text_loss(np.zeros((2, 5)), [1, 5])
    with pytest.raises(ValueError):
        text_loss(np.zeros(5), [1])
