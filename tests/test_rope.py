"""lib/lessons/rope.py: oracles (transformers' own RoPE, the live model's capture), textbook cases, invariants."""

import numpy as np
import pytest
import torch
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

from lib.lessons import rope
from lib.model.capture import run_capture

TEXT = "Il cane morde l'uomo, poi l'uomo morde il cane: l'ordine cambia tutto."


def _model_cos_sin(lm, positions):
    """cos, sin [1, T, Dh] from the model's own rotary module, as its attention layers get them."""
    rot = lm.adapter.rotary(lm.model)
    ids = torch.tensor([positions])
    with torch.inference_mode():
        return rot(torch.zeros(1, dtype=torch.float32), ids)


# ---------------------------------------------------------------- textbook cases


def test_frequencies_textbook_values():
    np.testing.assert_allclose(rope.frequencies(4, 10_000), [1.0, 0.01])
    th = rope.frequencies(64, 1e5)
    assert th[0] == 1.0 and np.all(np.diff(th) < 0)  # the first pair spins fastest
    np.testing.assert_allclose(th[-1], 1e5 ** (-62 / 64))
    np.testing.assert_allclose(rope.periods(4, 10_000), [2 * np.pi, 200 * np.pi])
    with pytest.raises(ValueError):
        rope.frequencies(5)


@pytest.mark.parametrize("fixture", ["tiny_llama", "real"])
def test_frequencies_equal_the_models_inv_freq(fixture, request):
    lm = request.getfixturevalue(fixture)
    base = lm.info.rope_theta
    inv = lm.adapter.rotary(lm.model).inv_freq.numpy()
    np.testing.assert_allclose(rope.frequencies(lm.info.d_head, base), inv, rtol=1e-6)


def test_a_quarter_turn_and_the_pair_layout():
    # Pair 0 of a 2-dim vector with θ = 1 (base 1): position π/2 turns (1, 0) into (0, 1).
    x = np.array([[1.0, 0.0]])
    np.testing.assert_allclose(rope.apply_rotary(x, np.cos([[np.pi / 2] * 2]), np.sin([[np.pi / 2] * 2])),
                               [[0.0, 1.0]], atol=1e-12)
    np.testing.assert_allclose(rope.rotate_half(np.array([1.0, 2.0, 3.0, 4.0])), [-3, -4, 1, 2])
    np.testing.assert_array_equal(rope.half_to_interleaved(6), [0, 3, 1, 4, 2, 5])
    np.testing.assert_array_equal(rope.interleaved_to_half(6), [0, 2, 4, 1, 3, 5])
    np.testing.assert_array_equal(rope.pair_points(np.arange(8.0).reshape(2, 4), 1), [[1, 3], [5, 7]])
    np.testing.assert_allclose(rope.angles([0, 1, 2], 4, 10_000)[2], [2.0, 0.02])


# ---------------------------------------------------------------- oracle: transformers


@pytest.mark.parametrize("fixture", ["tiny_llama", "real"])
def test_apply_rope_equals_transformers_with_the_models_cos_sin(fixture, request):
    lm = request.getfixturevalue(fixture)
    i = lm.info
    g = torch.Generator().manual_seed(0)
    context = i.context_length
    for positions in (list(range(40)), list(range(context - 24, context)), [0, 3, 1, 100, 7]):
        t = len(positions)
        q = torch.randn(1, i.n_heads, t, i.d_head, generator=g)
        k = torch.randn(1, i.n_kv_heads, t, i.d_head, generator=g)
        cos, sin = _model_cos_sin(lm, positions)
        q_hf, k_hf = apply_rotary_pos_emb(q, k, cos, sin)
        # float64 angles here against the model's float32 ones: a few ulps of an angle of ~8000 rad.
        atol = 2e-6 * max(positions) + 1e-6
        np.testing.assert_allclose(rope.apply_rope(q, positions, i.rope_theta).numpy(), q_hf.numpy(), atol=atol)
        np.testing.assert_allclose(rope.apply_rope(k.numpy(), positions, i.rope_theta), k_hf.numpy(), atol=atol)
        # With the model's own cos/sin the one implementation is transformers' formula exactly.
        np.testing.assert_allclose(rope.apply_rotary(q, cos[0], sin[0]).numpy(), q_hf.numpy(), atol=1e-6)


def test_capture_post_rope_q_k_equal_apply_rope_on_captured_pre_rope(real):
    cap = run_capture(real, TEXT)
    base = real.info.rope_theta
    assert base == 1e5
    np.testing.assert_allclose(rope.apply_rope(cap.q_pre, None, base), cap.q, atol=2e-4)
    np.testing.assert_allclose(rope.apply_rope(cap.k_pre, None, base), cap.k, atol=2e-4)
    # Not a vacuous check: the rotation really moved the later tokens.
    assert np.abs(cap.q[:, :, 5:] - cap.q_pre[:, :, 5:]).max() > 0.1


# ---------------------------------------------------------------- the two conventions


def test_interleaved_form_is_the_half_split_form_after_the_permutation():
    g = torch.Generator().manual_seed(1)
    d_head, t, base = 64, 50, 1e5
    to_inter, to_half = rope.half_to_interleaved(d_head), rope.interleaved_to_half(d_head)
    x = torch.randn(3, t, d_head, generator=g, dtype=torch.float64)
    rotated_half = rope.apply_rope(x, None, base)
    rotated_inter = rope.apply_rope_interleaved(x[..., to_inter], None, base)
    np.testing.assert_allclose(rotated_inter.numpy(), rotated_half[..., to_inter].numpy(), atol=1e-12)
    np.testing.assert_allclose(rotated_inter[..., to_half].numpy(), rotated_half.numpy(), atol=1e-12)
    # Scores: q·k is the same whichever layout the model stores (a permutation keeps dot products).
    q, k = x[0], x[1]
    s_half = rope.apply_rope(q, None, base) @ rope.apply_rope(k, None, base).T
    s_inter = rope.apply_rope_interleaved(q[:, to_inter], None, base) @ rope.apply_rope_interleaved(k[:, to_inter], None, base).T
    np.testing.assert_allclose(s_inter.numpy(), s_half.numpy(), atol=1e-10)
    # Without the permutation the two forms disagree: the pairing really is different.
    wrong = rope.apply_rope_interleaved(q, None, base) @ rope.apply_rope_interleaved(k, None, base).T
    assert np.abs(wrong.numpy() - s_half.numpy()).max() > 1e-3


def test_interleaved_form_against_meta_complex_reference():
    """Meta's llama code: freqs_cis = polar(1, outer(t, freqs)); x as complex pairs times freqs_cis."""
    d_head, t, base = 16, 9, 10_000.0
    freqs = 1.0 / (base ** (torch.arange(0, d_head, 2)[: d_head // 2].double() / d_head))
    freqs_cis = torch.polar(torch.ones(t, d_head // 2, dtype=torch.float64), torch.outer(torch.arange(t).double(), freqs))
    x = torch.randn(t, d_head, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    meta = torch.view_as_real(torch.view_as_complex(x.reshape(t, -1, 2)) * freqs_cis).flatten(-2)
    np.testing.assert_allclose(rope.apply_rope_interleaved(x, None, base).numpy(), meta.numpy(), atol=1e-12)


# ---------------------------------------------------------------- invariants


def test_position_zero_is_the_identity_and_norms_are_kept():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 20, 64))
    np.testing.assert_array_equal(rope.apply_rope(x[:, :1], [0], 1e5), x[:, :1])
    y = rope.apply_rope(x, rng.integers(0, 10_000, 20), 1e5)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)
    # Each pair keeps its own length too: it is a rotation plane by plane.
    for pair in (0, 17, 31):
        np.testing.assert_allclose(np.linalg.norm(rope.pair_points(y, pair), axis=-1),
                                   np.linalg.norm(rope.pair_points(x, pair), axis=-1), rtol=1e-12)
    xt = torch.from_numpy(x).float()
    assert rope.apply_rope(xt, None, 1e5).dtype == torch.float32


@pytest.mark.parametrize("m,n,shift", [(0, 3, 5), (10, 2, 1000), (100, 100, 7), (7, 4000, 3000)])
def test_score_depends_only_on_the_offset(m, n, shift):
    q, k = rope.seeded_vector(64, 10), rope.seeded_vector(64, 11)
    a = rope.scores(q[None], k[None], [n], [m], 1e5)[0, 0]
    b = rope.scores(q[None], k[None], [n + shift], [m + shift], 1e5)[0, 0]
    assert a == pytest.approx(b, abs=1e-9)
    np.testing.assert_allclose(rope.score_vs_distance(q, k, [n - m], 1e5), [a], atol=1e-9)
    # ...and it does depend on the offset.
    c = rope.scores(q[None], k[None], [n + 1], [m], 1e5)[0, 0]
    assert abs(a - c) > 1e-6


def test_score_vs_distance_closed_form():
    q, k = rope.seeded_vector(32, 4), rope.seeded_vector(32, 5)
    d = np.arange(0, 500, 7)
    th = rope.frequencies(32, 1e4)
    a, b = q[:16], q[16:]
    c, e = k[:16], k[16:]
    closed = (np.cos(np.outer(d, th)) * (a * c + b * e) + np.sin(np.outer(d, th)) * (a * e - b * c)).sum(-1)
    np.testing.assert_allclose(rope.score_vs_distance(q, k, d, 1e4), closed, atol=1e-9)
    np.testing.assert_allclose(rope.score_vs_distance(q, q, [0], 1e4), [q @ q])
    assert rope.score_vs_distance(q, k, [], 1e4).shape == (0,)


def test_score_by_distance_against_a_loop():
    rng = np.random.default_rng(6)
    q, k = rng.standard_normal((7, 8)), rng.standard_normal((7, 8))
    dist, mean = rope.score_by_distance(q, k)
    for d in range(7):
        expected = np.mean([q[n] @ k[n - d] / np.sqrt(8) for n in range(d, 7)])
        assert mean[d] == pytest.approx(expected)
    np.testing.assert_array_equal(dist, np.arange(7))


def test_cosine_similarity_against_torch():
    rows = np.random.default_rng(7).standard_normal((5, 9))
    t = torch.from_numpy(rows)
    expected = torch.nn.functional.cosine_similarity(t[:, None, :], t[None, :, :], dim=-1).numpy()
    np.testing.assert_allclose(rope.cosine_similarity(rows), expected, atol=1e-12)


# ---------------------------------------------------------------- the shuffled sentence


def test_shuffle_demo_same_set_without_positions_different_with_rope(real):
    ids = real.tokenizer("il cane morde l'uomo")["input_ids"]
    x = real.adapter.embed(real.model).weight[ids].detach().numpy()
    demo = rope.shuffle_demo(x, real.info.d_head, seed=0, base=real.info.rope_theta)
    t = len(ids)
    assert sorted(demo.order) == list(range(t)) and not np.array_equal(demo.order, np.arange(t))
    np.testing.assert_array_equal(demo.order[demo.where], np.arange(t))
    assert demo.change_plain.max() < 1e-12
    np.testing.assert_allclose(*demo.weights_plain, atol=1e-12)
    assert demo.change_rope.mean() > 0.05  # measured ~0.2-0.4: the reading of every token moves
    assert np.abs(demo.weights_rope[0] - demo.weights_rope[1]).max() > 0.01
    np.testing.assert_allclose(demo.weights_rope[0].sum(-1), 1.0)
    again = rope.shuffle_demo(x, real.info.d_head, seed=0, base=real.info.rope_theta)
    np.testing.assert_array_equal(again.change_rope, demo.change_rope)  # same seed, same result


def test_toy_attention_ignores_order_without_positions():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((6, 16))
    wq, wk = rope.toy_projections(16, 8, seed=1)
    p = rng.permutation(6)
    w, out = rope.toy_attention(x, wq, wk)
    w_p, out_p = rope.toy_attention(x[p], wq, wk)
    np.testing.assert_allclose(out_p, out[p], atol=1e-12)
    np.testing.assert_allclose(w_p, w[p][:, p], atol=1e-12)
    # Same positions for both tokens at the same place: RoPE breaks the symmetry.
    _, out_r = rope.toy_attention(x, wq, wk, np.arange(6), 1e4)
    _, out_rp = rope.toy_attention(x[p], wq, wk, np.arange(6), 1e4)
    assert not np.allclose(out_rp, out_r[p], atol=1e-3)
