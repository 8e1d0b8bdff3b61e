"""lib/lessons/attention.py: the step-by-step head against the model's own attention, flash against naive,
GQA against transformers' repeat_kv, and the textbook numbers of the lesson."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lib.lessons.attention import (
    PATTERNS,
    attention_flops,
    attention_memory,
    capture_head_steps,
    causal_mask,
    check_head,
    clamp_head,
    flash_attention,
    gqa_groups,
    head_steps,
    kv_variants,
    layer_output,
    module_scale,
    pattern_scores,
    row_entropy,
    scaling_demo,
    softmax,
    strongest_pattern,
    CONDITIONAL,
    word_ids,
)
from lib.lessons.reference import REFERENCE_MODELS
from lib.model.arithmetic import kv_cache_bytes
from lib.model.capture import run_capture

TEXT = "Il gatto dorme sul tappeto perché è stanco. Il gatto sogna 🐱."


@pytest.fixture(scope="module")
def captures(request):
    """One capture per model, computed on first use."""
    cache = {}

    def get(fixture):
        if fixture not in cache:
            lm = request.getfixturevalue(fixture)
            cache[fixture] = (lm, run_capture(lm, TEXT))
        return cache[fixture]
    return get


# ----------------------------------------------------------------- the page's head equals the model's


@pytest.mark.parametrize("fixture", ["real", "tiny_llama", "tiny_gpt2"])
def test_step_by_step_head_equals_the_models_attention(fixture, captures):
    lm, cap = captures(fixture)
    for layer in range(cap.n_layers):
        for head in range(cap.n_heads):
            steps = capture_head_steps(cap, layer, head, scale=module_scale(lm, layer))
            np.testing.assert_allclose(steps.weights, cap.attention(layer, head), atol=1e-4, rtol=0)


@pytest.mark.parametrize("fixture", ["real", "tiny_llama", "tiny_gpt2"])
def test_weighted_sum_equals_transformers_eager_attention(fixture, captures):
    """Oracle: the family's own eager_attention_forward (with repeat_kv for GQA) on the captured q/k/v."""
    from transformers.models.gpt2.modeling_gpt2 import eager_attention_forward as gpt2_eager
    from transformers.models.llama.modeling_llama import eager_attention_forward as llama_eager

    lm, cap = captures(fixture)
    eager = llama_eager if lm.info.family == "llama" else gpt2_eager
    t = cap.n_tokens
    mask = torch.triu(torch.full((t, t), float("-inf")), 1)[None, None]  # additive [1, 1, T, T]
    for layer in (0, cap.n_layers - 1):
        module = lm.adapter.attention(lm.adapter.blocks(lm.model)[layer])
        q, k, v = (torch.from_numpy(np.array(x[layer]))[None] for x in (cap.q, cap.k, cap.v))
        with torch.inference_mode():
            out, weights = eager(module, q, k, v, mask, scaling=module.scaling)
        for head in range(cap.n_heads):
            steps = capture_head_steps(cap, layer, head, scale=module.scaling)
            np.testing.assert_allclose(steps.weights, weights[0, head].numpy(), atol=1e-5)
            np.testing.assert_allclose(steps.out, out[0, :, head].numpy(), atol=1e-4)


@pytest.mark.parametrize("fixture", ["real", "tiny_llama", "tiny_gpt2"])
def test_output_projection_equals_what_attention_added_to_the_residual(fixture, captures):
    """resid[l+1] = resid[l] + attention + MLP in both families; the MLP part from the model's module."""
    lm, cap = captures(fixture)
    for layer in sorted({0, cap.n_layers // 2, cap.n_layers - 1}):
        got = layer_output(lm, cap, layer)
        down = lm.adapter.mlp_out(lm.adapter.blocks(lm.model)[layer])
        with torch.inference_mode():
            mlp = down(torch.from_numpy(np.array(cap.mlp[layer]))).numpy()
        added = cap.resid[layer + 1] - cap.resid[layer] - mlp  # [T, D]
        scale = float(np.abs(cap.resid[layer + 1]).max())  # float32 error grows with the stream's size
        np.testing.assert_allclose(got.out, added, atol=2e-6 * scale + 1e-5, rtol=0)
        # The heads' contributions add up to the output (the projection is linear).
        np.testing.assert_allclose(got.per_head.sum(0) + got.bias, got.out, atol=1e-4)
        h, t, dh = got.heads.shape
        assert got.concat.shape == (t, h * dh) and got.out.shape == (t, lm.info.d_model)
        np.testing.assert_array_equal(got.concat[:, dh:2 * dh], got.heads[1])


def test_module_scale_is_read_from_the_model(real, byte_tokenizer):
    assert module_scale(real, 0) == pytest.approx(1 / math.sqrt(real.info.d_head))
    from transformers import GPT2Config

    from tests.conftest import _tiny

    cfg = GPT2Config(vocab_size=257, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                     scale_attn_by_inverse_layer_idx=True)
    lm = _tiny(cfg, byte_tokenizer, "tiny-gpt2-layer-scaled")
    cap = run_capture(lm, "abcdefgh")
    assert module_scale(lm, 1) == pytest.approx(1 / math.sqrt(8) / 2)
    np.testing.assert_allclose(capture_head_steps(cap, 1, 0, scale=module_scale(lm, 1)).weights,
                               cap.attention(1, 0), atol=1e-5)


# ----------------------------------------------------------------- invariants of one head


def test_rows_sum_to_one_and_masked_entries_are_zero(captures):
    _, cap = captures("real")
    steps = capture_head_steps(cap, 4, 2)
    t = cap.n_tokens
    np.testing.assert_allclose(steps.weights.sum(-1), 1.0, atol=1e-12)
    assert np.all(steps.weights[~causal_mask(t)] == 0)
    assert np.all(np.isneginf(steps.masked[~steps.mask])) and np.all(np.isfinite(steps.masked[steps.mask]))
    np.testing.assert_allclose(steps.scaled, steps.scores * steps.scale)
    np.testing.assert_allclose(steps.scores, steps.q @ steps.k.T)
    np.testing.assert_allclose(steps.out, steps.weights @ steps.v)


def test_unmasked_head_reads_the_future_but_agrees_on_the_last_row(captures):
    _, cap = captures("real")
    causal = capture_head_steps(cap, 4, 2)
    free = capture_head_steps(cap, 4, 2, causal=False)
    assert free.mask.all() and not free.causal
    np.testing.assert_allclose(free.weights.sum(-1), 1.0, atol=1e-12)
    future = (free.weights * ~causal_mask(cap.n_tokens)).sum(-1)
    assert future[:-1].min() > 0 and future[-1] == 0
    # The last token already sees everything: the mask changes nothing there.
    np.testing.assert_allclose(free.weights[-1], causal.weights[-1], atol=1e-12)
    # Same scores, only the mask differs.
    np.testing.assert_array_equal(free.scaled, causal.scaled)


def test_softmax_textbook_cases():
    np.testing.assert_allclose(softmax(np.array([0.0, math.log(3.0), -np.inf])), [0.25, 0.75, 0.0])
    np.testing.assert_allclose(softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])  # no overflow
    assert np.all(softmax(np.array([-np.inf, -np.inf])) == 0)
    np.testing.assert_allclose(head_steps(np.eye(2), np.eye(2), np.eye(2), scale=1.0).weights,
                               [[1, 0], [1 / (1 + math.e), math.e / (1 + math.e)]])
    x = np.random.default_rng(1).standard_normal((5, 7))
    np.testing.assert_allclose(softmax(x), torch.softmax(torch.from_numpy(x), -1).numpy(), atol=1e-12)


def test_head_steps_rejects_bad_shapes_and_ranges(captures):
    _, cap = captures("tiny_llama")
    with pytest.raises(ValueError):
        head_steps(np.zeros((3, 4)), np.zeros((2, 4)), np.zeros((3, 4)))
    for layer, head in [(cap.n_layers, 0), (0, cap.n_heads), (-1, 0)]:
        with pytest.raises(IndexError):
            capture_head_steps(cap, layer, head)
    with pytest.raises(IndexError):
        check_head(30, 9, 0, 9)
    assert clamp_head(2, 4, 15, 7) == (1, 3)
    assert clamp_head(2, 4, -3, "x") == (0, 0)
    assert clamp_head(30, 9, 12, 4) == (12, 4)


# ----------------------------------------------------------------- GQA


@pytest.mark.parametrize("fixture", ["real", "tiny_llama", "tiny_gpt2"])
def test_gqa_mapping_matches_capture_and_repeat_kv(fixture, captures):
    from transformers.models.llama.modeling_llama import repeat_kv

    lm, cap = captures(fixture)
    groups = gqa_groups(lm.info.n_heads, lm.info.n_kv_heads)
    assert len(groups) == lm.info.n_kv_heads
    assert sorted(h for g in groups for h in g) == list(range(lm.info.n_heads))
    repeated = repeat_kv(torch.from_numpy(np.array(cap.k[0]))[None], lm.info.group_size)[0]  # [H, T, Dh]
    for kv, members in enumerate(groups):
        for h in members:
            assert cap.kv_head(h) == kv
            np.testing.assert_array_equal(repeated[h].numpy(), cap.key(0, h))
    if lm.info.family == "gpt2":
        assert all(len(g) == 1 for g in groups)  # no GQA: one K/V head per query head


def test_gqa_groups_textbook():
    assert gqa_groups(9, 3) == ((0, 1, 2), (3, 4, 5), (6, 7, 8))
    assert gqa_groups(4, 1) == ((0, 1, 2, 3),)
    with pytest.raises(ValueError):
        gqa_groups(9, 2)


def test_kv_variants_savings(real):
    live = {v.name: v for v in kv_variants(real.config, 8192)}
    assert live["grouped"].saving == pytest.approx(real.info.n_heads / real.info.n_kv_heads) == pytest.approx(3)
    assert live["grouped"].bytes == kv_cache_bytes(real.config, 8192)
    assert live["multi_query"].n_kv_heads == 1 and live["multi_query"].saving == pytest.approx(real.info.n_heads)
    llama = {v.name: v for v in kv_variants(REFERENCE_MODELS["Llama-3 8B"], 8192)}
    assert llama["grouped"].saving == pytest.approx(4)
    assert llama["grouped"].bytes == 2 * 32 * 8 * 128 * 2 * 8192  # 1 GiB, the seed's "1/4 of classic"
    assert llama["classic"].bytes == 4 * llama["grouped"].bytes
    gpt2 = {v.name: v for v in kv_variants(REFERENCE_MODELS["GPT-2 small"], 1024)}
    assert gpt2["grouped"].bytes == gpt2["classic"].bytes  # GPT-2 has no GQA


# ----------------------------------------------------------------- head patterns


def _head(t: int, key_of_row) -> np.ndarray:
    a = np.zeros((t, t))
    for i in range(t):
        a[i, key_of_row(i)] = 1.0
    return a


def test_patterns_on_textbook_heads():
    t = 8
    ids = np.array([1, 2, 3, 4, 2, 5, 3, 6])
    words = np.arange(t)
    prev = pattern_scores(_head(t, lambda i: max(i - 1, 0)), ids, words)
    assert prev["previous"] == pytest.approx(1.0) and prev["first"] == pytest.approx(0.0)
    assert strongest_pattern(prev) == "previous"
    first = pattern_scores(_head(t, lambda i: 0), ids, words)
    assert first["first"] == pytest.approx(1.0) and strongest_pattern(first) == "first"
    self_ = pattern_scores(_head(t, lambda i: i), ids, words)
    assert strongest_pattern(self_) == "self"
    # Row 4 (id 2) reads row 1 (id 2), row 6 (id 3) reads row 2; other rows read themselves.
    dup = pattern_scores(_head(t, lambda i: {4: 1, 6: 2}.get(i, i)), ids, words)
    assert dup["same_token"] == pytest.approx(1.0) and strongest_pattern(dup) == "same_token"
    uniform = np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None]
    assert strongest_pattern(pattern_scores(uniform, ids, words)) is None
    assert row_entropy(uniform) == pytest.approx(1.0)
    assert row_entropy(_head(t, lambda i: 0)) == pytest.approx(0.0)


def test_a_previous_token_head_is_not_called_a_same_word_head():
    """A clean one-below-the-diagonal stripe over words of several pieces: on the rows that have an
    earlier piece of the same word, that piece is the previous token, so "same word" scores as high
    as "previous" there. Measured on the same rows, it does not beat the previous token: the label
    is "previous". A head that reads the first piece of its word is a same-word head."""
    words = np.array([0, 1, 1, 2, 2, 2, 3, 4, 4, 4, 4, 5])
    ids = np.arange(len(words)) + 10
    t = len(words)
    stripe = 0.85 * _head(t, lambda i: max(i - 1, 0)) + 0.15 * _head(t, lambda i: i)
    stripe[0] = _head(t, lambda i: 0)[0]
    s = pattern_scores(stripe, ids, words)
    assert s["previous"] == pytest.approx(0.85) and s["same_word"] == pytest.approx(0.85)
    assert s["previous@same_word"] == pytest.approx(s["same_word"])
    assert strongest_pattern(s) == "previous"
    starts = {w: int(np.argmax(words == w)) for w in set(words.tolist())}
    reader = _head(t, lambda i: starts[words[i]] if starts[words[i]] < i else i)
    r = pattern_scores(reader, ids, words)
    assert r["same_word"] == pytest.approx(1.0) and r["previous@same_word"] < 1 - 0.1
    assert strongest_pattern(r) == "same_word"


def test_patterns_vectorised_equal_per_head_and_short_texts_give_nan(captures):
    lm, cap = captures("real")
    words = word_ids(cap.text, cap.offsets)
    every = pattern_scores(cap.attn, cap.token_ids, words)
    assert set(every) == set(PATTERNS) | {f"previous@{name}" for name in CONDITIONAL}
    for layer, head in [(0, 0), (7, 3), (cap.n_layers - 1, cap.n_heads - 1)]:
        one = pattern_scores(cap.attention(layer, head), cap.token_ids, words)
        for name in PATTERNS:
            np.testing.assert_allclose(every[name][layer, head], one[name], atol=1e-9)
            assert 0 <= one[name] <= 1 + 1e-6
    # "Il gatto ... Il gatto": repeated tokens exist, so same_token is measured.
    assert np.isfinite(every["same_token"]).all()
    single = run_capture(lm, "Hello")  # one token: nothing to compare
    assert single.n_tokens == 1
    scores = pattern_scores(single.attn, single.token_ids, word_ids(single.text, single.offsets))
    assert all(np.isnan(scores[name]).all() for name in PATTERNS)
    assert strongest_pattern({k: float(v[0, 0]) for k, v in scores.items()}) is None


def test_word_ids_follow_whitespace(real):
    text = "un gatto  nero, felicissimo 🐱!"
    enc = real.tokenizer(text, return_offsets_mapping=True)
    words = word_ids(text, np.array(enc["offset_mapping"]))
    # Oracle: the text spanned by each word's tokens, against str.split (whitespace-only tokens
    # make empty words, and an emoji's byte pieces share one character's span).
    spans: dict[int, tuple[int, int]] = {}
    for w, (s, e) in zip(words.tolist(), enc["offset_mapping"]):
        lo, hi = spans.get(w, (s, e))
        spans[w] = (min(lo, s), max(hi, e))
    rebuilt = [text[s:e].strip() for _, (s, e) in sorted(spans.items())]
    assert [w for w in rebuilt if w] == text.split()
    np.testing.assert_array_equal(word_ids("un gatto", [[0, 2], [2, 5], [5, 8]]), [0, 1, 1])
    np.testing.assert_array_equal(word_ids("ab", [[0, 0], [0, 1], [1, 2]]), [0, 1, 1])  # <s>, then a word


# ----------------------------------------------------------------- √Dh


@pytest.mark.parametrize("d_head", [4, 64, 256])
def test_scaling_demo_variance_is_dh_then_one(d_head):
    demo = scaling_demo(d_head, n_samples=8000, seed=3)
    assert demo.var_raw == pytest.approx(d_head, rel=0.1)
    assert demo.var_scaled == pytest.approx(1.0, rel=0.1)
    assert demo.weights_raw.sum() == pytest.approx(1.0) and demo.weights_scaled.sum() == pytest.approx(1.0)
    assert demo.max_raw >= demo.max_scaled


def test_scaling_demo_seeded_and_saturating():
    a, b = scaling_demo(64, seed=7), scaling_demo(64, seed=7)
    np.testing.assert_array_equal(a.raw, b.raw)
    assert not np.array_equal(a.raw, scaling_demo(64, seed=8).raw)
    # Without the scaling the softmax approaches one-hot as Dh grows; with it, it does not.
    maxima = [scaling_demo(d, seed=0).max_raw for d in (4, 64, 1024)]
    assert maxima == sorted(maxima) and maxima[-1] > 0.9
    scaled = [scaling_demo(d, seed=0).max_scaled for d in (4, 64, 1024)]
    assert max(scaled) - min(scaled) < 0.1


# ----------------------------------------------------------------- cost and flash attention


def test_attention_flops_textbook():
    # Seed 004: Llama-3 8B, 2048 tokens: 4·n²·d·L ≈ 2.2 TFLOP, about 1.1 with the causal mask.
    assert attention_flops(2048, 4096, 32) == 4 * 2048 ** 2 * 4096 * 32
    assert attention_flops(2048, 4096, 32) / 1e12 == pytest.approx(2.2, abs=0.01)
    assert attention_flops(2048, 4096, 32, causal=True) / 1e12 == pytest.approx(1.1, abs=0.01)
    assert attention_flops(4096, 576, 30) == 4 * attention_flops(2048, 576, 30)  # n² : double n, 4x


def test_attention_memory_naive_is_quadratic_tiled_is_linear():
    n1, t1 = attention_memory(1024, 64, 32, 32)
    n2, t2 = attention_memory(2048, 64, 32, 32)
    n3, t3 = attention_memory(4096, 64, 32, 32)
    assert n2 == 4 * n1 and n3 == 4 * n2
    assert t3 - t2 == 2 * (t2 - t1)  # equal steps in n give equal steps in memory
    assert n1 == 1024 * 1024 * 4


@pytest.mark.parametrize("t,bq,bk,causal", [(1, 4, 4, True), (37, 5, 7, True), (37, 5, 7, False),
                                            (16, 16, 16, True), (20, 64, 3, True), (9, 1, 1, True)])
def test_flash_equals_naive(t, bq, bk, causal):
    rng = np.random.default_rng(t * 100 + bq)
    q, k, v = rng.standard_normal((3, t, 8)) * 3  # large scores: the rescaling must work
    run = flash_attention(q, k, v, bq, bk, causal=causal)
    np.testing.assert_allclose(run.out, head_steps(q, k, v, causal=causal).out, atol=1e-12)
    n_qb, n_kb = -(-t // bq), -(-t // bk)
    assert len(run.steps) + len(run.skipped) == n_qb * n_kb
    if not causal:
        assert run.skipped == ()
    # Every row's running sum at its last tile is the softmax denominator, relative to its max.
    last = {}
    for s in run.steps:
        last[s.q_block] = s
    for qb, s in last.items():
        np.testing.assert_allclose(s.partial, run.out[s.q0:s.q1], atol=1e-12)


@pytest.mark.parametrize("t,bq,bk,window", [(37, 5, 7, 4), (37, 8, 8, 8), (20, 4, 4, 1), (33, 16, 2, 10),
                                            (12, 4, 4, 40)])
def test_flash_with_a_sliding_window_equals_naive(t, bq, bk, window):
    """A local layer (Gemma 3): keys more than window - 1 back are hidden; rows that see nothing in
    a tile stay finite, and tiles wholly out of every row's window are skipped."""
    rng = np.random.default_rng(t * 10 + window)
    q, k, v = rng.standard_normal((3, t, 8)) * 3
    run = flash_attention(q, k, v, bq, bk, window=window)
    np.testing.assert_allclose(run.out, head_steps(q, k, v, window=window).out, atol=1e-12)
    assert np.isfinite(run.out).all() and all(np.isfinite(s.partial).all() for s in run.steps)
    n_qb, n_kb = -(-t // bq), -(-t // bk)
    assert len(run.steps) + len(run.skipped) == n_qb * n_kb
    if window < t - bq - bk:  # far tiles exist below the diagonal: skipped too
        assert any(kb < qb * bq // bk for qb, kb in run.skipped)


@pytest.mark.parametrize("window", [None, 5])
def test_flash_over_every_head_at_once_is_each_heads_own_run(window):
    """Leading dimensions (the heads of a layer): the same tiles, each a product over all heads; the
    same outputs as one run per head, and as the naive way; without recording, no steps kept."""
    rng = np.random.default_rng(7)
    q, k, v = rng.standard_normal((3, 4, 23, 8)) * 3  # 4 heads, 23 tokens
    run = flash_attention(q, k, v, 4, 3, window=window, record=False)
    assert run.out.shape == (4, 23, 8) and run.steps == ()
    for h in range(4):
        one = flash_attention(q[h], k[h], v[h], 4, 3, window=window)
        np.testing.assert_allclose(run.out[h], one.out, atol=1e-12)
        np.testing.assert_allclose(run.out[h], head_steps(q[h], k[h], v[h], window=window).out, atol=1e-12)
        assert run.skipped == one.skipped
    kept = flash_attention(q, k, v, 4, 3, window=window)
    assert kept.steps[0].partial.shape == (4, 4, 8)  # [heads, Bq, Dh]
    np.testing.assert_allclose(kept.out, run.out, atol=0)


def test_flash_on_the_live_head_equals_the_models_output(captures):
    lm, cap = captures("real")
    steps = capture_head_steps(cap, 3, 4)
    run = flash_attention(steps.q, steps.k, steps.v, 4, 4)
    np.testing.assert_allclose(run.out, steps.out, atol=1e-10)
    # The running max only grows, and the rescale factors are at most 1.
    for s in run.steps:
        assert np.all(s.rescale <= 1.0 + 1e-12)
    assert run.naive_bytes == cap.n_tokens ** 2 * 4
    with pytest.raises(ValueError):
        flash_attention(steps.q, steps.k, steps.v, 0, 4)


@pytest.mark.parametrize("name", ["Llama-3 8B", "GPT-2 small"])
def test_attention_flops_agree_with_lib_arithmetic(name, real):
    """Two ways to the same count: from (n, d, L) here, from the whole config in lib.model.arithmetic."""
    from lib.lessons.reference import numbers
    from lib.model.arithmetic import attention_flops as from_config

    for label, cfg in ((name, REFERENCE_MODELS[name]), ("live", real.config)):
        n = numbers(cfg)
        for tokens in (1, 512, 2048):
            for causal in (False, True):
                ours = attention_flops(tokens, n["n_heads"] * n["d_head"], n["n_layers"], causal=causal)
                assert ours == pytest.approx(from_config(cfg, tokens, causal=causal)), (label, tokens, causal)


def test_attention_flops_count_only_the_window_on_local_layers(tiny_gemma):
    """A local layer reads min(i + 1, W) keys for token i: the count by hand, from (n, d, L, W) and
    from the whole config agree, and equal the plain count while the text fits in the window."""
    from lib.model.arithmetic import attention_flops as from_config

    info, cfg = tiny_gemma.info, tiny_gemma.config
    width, n_local = info.n_heads * info.d_head, sum(x == "sliding_attention" for x in info.layer_types)
    W = info.sliding_window
    for n in (1, W, W + 1, 50):
        by_hand = 4 * width * (n_local * sum(min(i + 1, W) for i in range(n))
                               + (info.n_layers - n_local) * n * (n + 1) / 2)
        ours = attention_flops(n, width, info.n_layers, causal=True, window=W, n_local=n_local)
        assert ours == by_hand == pytest.approx(from_config(cfg, n, causal=True)), n
    assert attention_flops(W, width, info.n_layers, causal=True, window=W, n_local=n_local) == \
        attention_flops(W, width, info.n_layers, causal=True)


def test_shown_variants_gives_each_configuration_once():
    from lib.lessons.attention import shown_variants

    def names(config):
        return [(v.name, own) for v, own in shown_variants(kv_variants(config, 1024))]

    base = {"num_hidden_layers": 2, "num_attention_heads": 8, "head_dim": 4, "hidden_size": 32, "vocab_size": 64}
    assert names(dict(base, num_key_value_heads=1)) == [("classic", False), ("multi_query", True)]
    assert names(dict(base, num_key_value_heads=8)) == [("classic", True), ("multi_query", False)]
    assert names(dict(base, num_key_value_heads=2)) == [("classic", False), ("multi_query", False), ("grouped", True)]
