"""lib/lessons/sampling: oracle against transformers' logits warpers, greedy, invariants, seeded draws, cost."""

import math

import numpy as np
import pytest
import torch
from transformers import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

from lib.lessons.reference import REFERENCE_MODELS
from lib.lessons.sampling import entropy, filter_probs, filter_steps, logit_cost, make_rng, sample, softmax
from lib.model.arithmetic import count_params


def hf_probs(logits: np.ndarray, temperature: float, top_k, top_p) -> np.ndarray:
    """transformers' chain, in generate()'s order and with generate()'s on/off rules, in float64."""
    scores = torch.tensor(logits, dtype=torch.float64)[None]
    ids = torch.zeros((1, 1), dtype=torch.long)
    if temperature != 1.0:
        scores = TemperatureLogitsWarper(float(temperature))(ids, scores)
    if top_k:
        scores = TopKLogitsWarper(top_k=int(top_k))(ids, scores)
    if top_p is not None and top_p < 1.0:
        scores = TopPLogitsWarper(top_p=float(top_p))(ids, scores)
    return torch.softmax(scores, dim=-1)[0].numpy()


def logit_cases():
    """Random logits: continuous, with many ties, with extreme and -inf values, the real model's size."""
    rng = np.random.default_rng(0)
    yield "normal", rng.normal(0, 3, 1000)
    yield "ties", rng.integers(-3, 4, 500).astype(np.float64)  # seven values shared by ~70 tokens each
    yield "top_tie", np.array([5.0, 5.0, 5.0, 1.0, 0.0, -2.0, 5.0, -1.0])
    extreme = rng.normal(0, 1, 300)
    extreme[[3, 50, 70]] = [1e4, -1e4, 9999.5]
    extreme[100:120] = -np.inf  # tokens a model masked out
    yield "extreme", extreme
    yield "huge_range", rng.uniform(-1e30, 1e30, 200)
    yield "vocab_size", rng.normal(0, 4, 49152).astype(np.float32).astype(np.float64)


CASES = list(logit_cases())
SETTINGS = [(t, k, p) for t in (0.05, 0.7, 1.0, 1.6, 2.0) for k in (None, 1, 5, 60, 10**6)
            for p in (None, 0.05, 0.5, 0.9, 0.999)]


def unique_scores(x: np.ndarray) -> np.ndarray:
    """Mask of tokens whose score no other token shares (their identity cannot depend on a sort)."""
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    return counts[inverse] == 1


@pytest.mark.parametrize("name,logits", CASES, ids=[c[0] for c in CASES])
def test_equal_to_transformers_warpers_chained(name, logits):
    for t, k, p in SETTINGS[::4] if len(logits) > 10_000 else SETTINGS:  # the big one: a sample of settings
        ours = filter_probs(logits, t, k, p)
        theirs = hf_probs(logits, t, k, p)
        where = f"{name} T={t} k={k} p={p}"
        # The same number of tokens kept, with the same probabilities...
        assert np.count_nonzero(ours) == np.count_nonzero(theirs), where
        np.testing.assert_allclose(np.sort(ours), np.sort(theirs), atol=1e-6, err_msg=where)
        # ...on the same tokens, except where top-p cut through a group of tied scores: there
        # transformers keeps whichever tied tokens its unstable sort put last (see the module).
        u = unique_scores(logits)
        np.testing.assert_allclose(ours[u], theirs[u], atol=1e-6, err_msg=where)
        if u.all():
            np.testing.assert_allclose(ours, theirs, atol=1e-6, err_msg=where)


def test_tie_cut_keeps_lower_ids_and_the_same_mass_as_transformers():
    logits = np.zeros(6)  # six equal tokens; p = 0.5 keeps three of them
    ours = filter_probs(logits, 1.0, None, 0.5)
    theirs = hf_probs(logits, 1.0, None, 0.5)
    np.testing.assert_allclose(ours, [1 / 3, 1 / 3, 1 / 3, 0, 0, 0])
    assert np.count_nonzero(theirs) == 3 and math.isclose(theirs.max(), 1 / 3)


@pytest.mark.parametrize("name,logits", CASES, ids=[c[0] for c in CASES])
def test_temperature_zero_is_greedy_one_hot(name, logits):
    for k, p in [(None, None), (3, 0.5), (10**6, 0.0)]:
        probs = filter_probs(logits, 0.0, k, p)
        expected = np.zeros(len(logits))
        expected[int(np.argmax(logits))] = 1.0  # argmax: the first of tied maxima
        np.testing.assert_array_equal(probs, expected)
    # Greedy is the limit of a shrinking temperature when the maximum is unique.
    if np.count_nonzero(logits == logits.max()) == 1:
        np.testing.assert_allclose(filter_probs(logits, 1e-6), expected, atol=1e-9)


@pytest.mark.parametrize("name,logits", CASES, ids=[c[0] for c in CASES])
def test_every_stage_is_a_distribution_and_masks_nest(name, logits):
    for t, k, p in SETTINGS[::7]:
        s = filter_steps(logits, t, k, p)
        for probs in (s.model, s.tempered, s.top_k_probs, s.final):
            assert probs.shape == logits.shape and (probs >= 0).all()
            assert math.isclose(probs.sum(), 1.0, abs_tol=1e-9)
        assert not (s.kept_top_p & ~s.kept_top_k).any()  # top-p only removes more
        assert (s.final[~s.kept_top_p] == 0).all()
        assert (np.diff(s.cumulative) >= -1e-15).all() and math.isclose(s.cumulative[-1], 1.0, abs_tol=1e-9)
        np.testing.assert_array_equal(logits[s.order], np.sort(logits)[::-1])  # highest score first
        assert s.n_kept >= 1 and s.final[s.order[0]] > 0  # the best token always survives


def test_textbook_cases():
    np.testing.assert_allclose(softmax(np.array([0.0, math.log(3)])), [0.25, 0.75])
    e = math.e
    np.testing.assert_allclose(filter_probs([2.0, 1.0, 0.0, -1.0], 1.0, top_k=2), [e / (e + 1), 1 / (e + 1), 0, 0])
    # Temperature 2 on logits [ln 4, 0] is softmax [ln 2, 0]: [2/3, 1/3].
    np.testing.assert_allclose(filter_probs([math.log(4), 0.0], 2.0), [2 / 3, 1 / 3])
    # probs 0.5, 0.3, 0.2: p = 0.8 keeps two tokens (0.5 + 0.3 reaches 0.8), p = 0.81 keeps all three.
    x = np.log([0.5, 0.3, 0.2])
    np.testing.assert_allclose(filter_probs(x, 1.0, None, 0.79), [0.625, 0.375, 0])
    assert np.count_nonzero(filter_probs(x, 1.0, None, 0.81)) == 3
    assert math.isclose(entropy(np.full(4, 0.25)), math.log(4))


def test_off_switches_and_bad_values_at_the_edges():
    x = np.random.default_rng(1).normal(size=50)
    plain = softmax(x)
    for k in (None, 0, 50, 51, 10**9):  # off, or k >= V keeps everything
        np.testing.assert_allclose(filter_probs(x, 1.0, k, None), plain)
    for p in (None, 1.0):
        np.testing.assert_allclose(filter_probs(x, 1.0, None, p), plain)
    only_top = filter_probs(x, 1.3, None, 0.0)  # top-p 0 keeps the most likely token
    assert np.count_nonzero(only_top) == 1 and only_top[np.argmax(x)] == 1.0
    np.testing.assert_allclose(only_top, hf_probs(x, 1.3, None, 0.0))
    for bad in [dict(temperature=-0.1), dict(temperature=float("nan")), dict(top_k=-1), dict(top_p=1.01),
                dict(top_p=-0.5)]:
        with pytest.raises(ValueError):
            filter_probs(x, **{"temperature": 1.0, **bad})
    for logits in ([], [[1.0, 2.0]], [1.0, float("nan")], [float("inf"), 0.0], [-np.inf, -np.inf]):
        with pytest.raises(ValueError):
            filter_probs(logits, 1.0)


def test_same_seed_same_sample_and_frequencies_follow_the_probabilities():
    probs = filter_probs(np.random.default_rng(2).normal(0, 2, 1000), 1.0, None, 0.9)
    assert [sample(probs, 42).token for _ in range(5)] == [sample(probs, 42).token] * 5
    assert sample(probs, 42) == sample(probs, np.random.default_rng(42))
    assert len({sample(probs, s).token for s in range(50)}) > 1
    rng = make_rng(7)
    p = np.array([0.5, 0.0, 0.3, 0.2])
    draws = np.array([sample(p, rng).token for _ in range(4000)])
    freq = np.bincount(draws, minlength=4) / len(draws)
    assert freq[1] == 0  # probability 0 never wins
    np.testing.assert_allclose(freq, p, atol=0.03)
    assert sample(np.array([0.0, 1.0, 0.0]), 7).token == 1
    for bad in (np.array([]), np.array([0.0, 0.0]), np.array([0.5, -0.1, 0.6]), np.array([np.nan, 1.0])):
        with pytest.raises(ValueError):
            sample(bad, 0)


def test_logit_cost_against_the_real_weights_and_the_seed(real):
    cfg = real.config
    cost = logit_cost(cfg)
    assert cost.output == 2 * 576 * 49152 == 56_623_104
    # Oracle: 2 FLOPs per weight of every matrix a token is multiplied by, counted on the tensors.
    model = real.model
    matmul = sum(p.numel() for n, p in model.named_parameters()
                 if n.endswith(".weight") and p.ndim == 2 and "embed_tokens" not in n)
    matmul += model.lm_head.weight.numel()  # tied: the same tensor, used once more as the output matrix
    assert cost.weights == 2 * matmul
    assert cost.two_n == 2 * count_params(cfg)
    assert 0.20 < cost.share < 0.22
    # A context adds the attention over it, and the output's share shrinks.
    longer = logit_cost(cfg, context=512)
    assert longer.attention == 4 * 30 * 512 * 9 * 64 and longer.share < cost.share
    # The seed's numbers for an 8B model: 2·4096·128256 ≈ 1.05 GFLOP, about 7% of a step.
    big = logit_cost(REFERENCE_MODELS["Llama-3 8B"])
    assert round(big.output / 1e9, 2) == 1.05
    assert round(big.share, 2) == 0.07


def test_the_draw_walks_the_strip_best_token_first():
    """probs [0.2, 0.5, 0.3]: segments 1 → [0, 0.5), 2 → [0.5, 0.8), 0 → [0.8, 1)."""
    probs = np.array([0.2, 0.5, 0.3])
    for seed in range(30):
        draw = sample(probs, seed)
        assert draw.u == np.random.default_rng(seed).random()
        assert draw.token == (1 if draw.u < 0.5 else 2 if draw.u < 0.8 else 0)
