"""lib/lessons/logit_lens.py: the lens at the last layer is the model; other layers match a direct
projection through the model's own final norm and unembedding; chunking changes nothing."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lib.lessons.logit_lens import Lens, lens_logits, lens_positions, logit_lens
from lib.model.capture import run_capture

TEXT = "The capital of France is Paris, and the capital of Italy is"


# The lens's float32 softmax over a 49,152-word vocabulary against a float64 one: a few parts in a
# million (2.3e-6 on the last layer's top token on one host, where 1e-6 had held on others).
F32_SOFTMAX = 2e-5


def _softmax(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def real_cap(real):
    return run_capture(real, TEXT)


@pytest.fixture(scope="module")
def real_lens(real, real_cap):
    return logit_lens(real, real_cap.resid, k=5)


@pytest.fixture(scope="module", params=["tiny_llama", "tiny_gpt2"])
def tiny(request):
    lm = request.getfixturevalue(request.param)
    return lm, run_capture(lm, "Hello, world! Ciao.")


def test_lens_at_the_last_layer_is_the_model(real, real_cap, real_lens):
    np.testing.assert_allclose(lens_logits(real, real_cap.resid[-1]), real_cap.logits, rtol=1e-5, atol=1e-4)
    lens = real_lens
    L, T = real.info.n_layers, real_cap.n_tokens
    assert lens.top_ids.shape == (L + 1, T, 5) and lens.final_prob.shape == (L + 1, T) and lens.n_layers == L
    probs = _softmax(real_cap.logits)
    np.testing.assert_array_equal(lens.top_ids[-1, :, 0], real_cap.logits.argmax(-1))
    np.testing.assert_array_equal(lens.final_ids, real_cap.logits.argmax(-1))
    np.testing.assert_allclose(lens.top_probs[-1], np.take_along_axis(probs, lens.top_ids[-1], -1), atol=F32_SOFTMAX)
    np.testing.assert_allclose(lens.final_prob[-1], probs.max(-1), atol=F32_SOFTMAX)
    assert (lens.final_rank[-1] == 0).all()


def test_lens_equals_gpt2_and_llama_logits(tiny):
    lm, cap = tiny
    np.testing.assert_allclose(lens_logits(lm, cap.resid[-1]), cap.logits, rtol=1e-5, atol=1e-5)
    lens = logit_lens(lm, cap.resid, k=3)
    np.testing.assert_array_equal(lens.top_ids[-1, :, 0], cap.logits.argmax(-1))


@pytest.mark.parametrize("layer", [0, 11, 29])
def test_intermediate_layers_match_a_direct_projection(real, real_cap, real_lens, layer):
    """The oracle: the model's final norm module, then a product with its unembedding weight."""
    with torch.inference_mode():
        normed = real.model.model.norm(torch.from_numpy(np.array(real_cap.resid[layer])))
        logits = (normed @ real.model.lm_head.weight.T).double().numpy()
    probs = _softmax(logits)
    lens = real_lens
    order = np.argsort(-logits, axis=-1, kind="stable")[:, :5]
    np.testing.assert_array_equal(lens.top_ids[layer], order)
    np.testing.assert_allclose(lens.top_probs[layer], np.take_along_axis(probs, order, -1), atol=F32_SOFTMAX)
    final = real_cap.logits.argmax(-1)
    np.testing.assert_allclose(lens.final_prob[layer], probs[np.arange(len(final)), final], atol=F32_SOFTMAX)
    ranks = (logits > logits[np.arange(len(final)), final][:, None]).sum(-1)
    np.testing.assert_array_equal(lens.final_rank[layer], ranks)


def test_chunks_and_positions_change_nothing(tiny_llama):
    cap = run_capture(tiny_llama, "Chunking must not matter at all.")
    whole = logit_lens(tiny_llama, cap.resid, k=4, chunk_rows=1024)
    small = logit_lens(tiny_llama, cap.resid, k=4, chunk_rows=7)
    # Matrix products batched differently round differently in float32: equal to a few ulps.
    for name in ("top_ids", "final_ids", "final_rank"):
        np.testing.assert_array_equal(getattr(whole, name), getattr(small, name))
    for name in ("top_probs", "final_prob"):
        np.testing.assert_allclose(getattr(whole, name), getattr(small, name), rtol=1e-5)
    pos = lens_positions(cap.n_tokens, 5)
    part = logit_lens(tiny_llama, cap.resid, positions=pos, k=4)
    np.testing.assert_array_equal(part.positions, pos)
    np.testing.assert_array_equal(part.top_ids, whole.top_ids[:, pos])
    np.testing.assert_allclose(part.final_prob, whole.final_prob[:, pos], rtol=1e-5)
    with pytest.raises(IndexError):
        logit_lens(tiny_llama, cap.resid, positions=np.array([cap.n_tokens]))


def test_probabilities_are_probabilities(real, real_cap):
    lens = logit_lens(real, real_cap.resid, positions=lens_positions(real_cap.n_tokens, 4), k=5)
    assert (lens.top_probs >= 0).all() and (lens.top_probs.sum(-1) <= 1 + 1e-6).all()  # float32 softmax
    assert (np.diff(lens.top_probs, axis=-1) <= 1e-12).all()  # best first
    # The final prediction's probability is never above the top-1 probability of the same layer.
    assert (lens.final_prob <= lens.top_probs[..., 0] + 1e-12).all()
    assert ((lens.final_rank == 0) == (lens.top_ids[..., 0] == lens.final_ids)).all()


def test_lens_positions_textbook():
    np.testing.assert_array_equal(lens_positions(10, 4), [6, 7, 8, 9])
    np.testing.assert_array_equal(lens_positions(3, 24), [0, 1, 2])
    assert lens_positions(0, 5).size == 0 and lens_positions(5, 0).size == 0


def test_first_layer_on_top_textbook():
    ranks = np.array([[3, 0], [0, 0], [2, 1], [0, 0], [0, 0]])  # [L+1, P]
    lens = Lens(positions=np.arange(2), top_ids=np.zeros((5, 2, 1), dtype=np.int64), top_probs=np.zeros((5, 2, 1)),
                final_ids=np.zeros(2, dtype=np.int64), final_prob=np.zeros((5, 2)), final_rank=ranks)
    np.testing.assert_array_equal(lens.first_layer_on_top(), [3, 3])
    assert lens.n_layers == 4
