"""Gemma 3 (gemma3_text): the adapter, the capture contract and its oracles.

Most tests run on a tiny random Gemma 3 (tests/conftest.py: window 4, two RoPE bases, MQA) so that
a text longer than the window takes milliseconds; a few check the real Gemma 3 270M once.
"""

import numpy as np
import pytest
import torch

from lib.model.capture import hook_count, max_tokens_for, run_capture

LONG = "Il gatto dorme sul tappeto perché è stanco."  # 43 bytes: ten times the tiny window


def _model_forward(lm, cap):
    ids = torch.tensor([cap.token_ids.tolist()])
    with torch.inference_mode():
        return lm.model(ids, output_attentions=True, output_hidden_states=True)


def test_info_reads_gemma_config(tiny_gemma):
    i, c = tiny_gemma.info, tiny_gemma.model.config
    assert i.family == "gemma3" and i.activation == "geglu"
    assert (i.n_heads, i.n_kv_heads, i.d_head, i.d_model) == (
        c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.hidden_size)
    assert i.n_heads * i.d_head != i.d_model
    assert i.rope_theta == c.rope_parameters["full_attention"]["rope_theta"]
    assert i.rope_theta_local == c.rope_parameters["sliding_attention"]["rope_theta"]
    assert i.sliding_window == c.sliding_window and i.layer_types == tuple(c.layer_types)
    assert i.n_params == i.n_params_formula


def test_contract_fields_and_shapes(tiny_gemma):
    i = tiny_gemma.info
    cap = run_capture(tiny_gemma, LONG)
    T, L, H, Hkv, D, Dh, F, V = cap.n_tokens, i.n_layers, i.n_heads, i.n_kv_heads, i.d_model, i.d_head, i.d_mlp, i.vocab_size
    assert T == len(LONG.encode()) > i.sliding_window
    expected = {"q_pre": (L, H, T, Dh), "k_pre": (L, Hkv, T, Dh), "q": (L, H, T, Dh), "k": (L, Hkv, T, Dh),
                "v": (L, Hkv, T, Dh), "attn": (L, H, T, T), "resid": (L + 1, T, D), "mlp": (L, T, F),
                "logits": (T, V)}
    for name, shape in expected.items():
        arr = getattr(cap, name)
        assert arr.shape == shape and arr.dtype == np.float32 and not arr.flags.writeable, name
    assert cap.local == tuple(t == "sliding_attention" for t in i.layer_types)
    assert cap.window == i.sliding_window
    assert [cap.layer_window(x) for x in range(L)] == [i.sliding_window if t == "sliding_attention" else None
                                                       for t in i.layer_types]


def test_attention_logits_and_residual_equal_the_model(tiny_gemma):
    cap = run_capture(tiny_gemma, LONG)
    out = _model_forward(tiny_gemma, cap)
    np.testing.assert_allclose(cap.logits, out.logits[0].numpy(), atol=1e-4, rtol=0)
    for layer in range(cap.n_layers):
        np.testing.assert_allclose(cap.attn[layer], out.attentions[layer][0].numpy(), atol=1e-4)
        np.testing.assert_allclose(cap.resid[layer], out.hidden_states[layer][0].numpy(), atol=1e-4)
    assert hook_count(tiny_gemma.model) == 0


def test_recomputed_by_hand_from_post_rope_q_and_k(tiny_gemma):
    """softmax(q·kᵀ·scale + causal mask + window mask on local layers), in float64, from the
    capture's rotated q and k: equal to the model's own weights to 1e-4."""
    cap = run_capture(tiny_gemma, LONG)
    out = _model_forward(tiny_gemma, cap)
    t = cap.n_tokens
    i, j = np.arange(t)[:, None], np.arange(t)[None, :]
    for layer in range(cap.n_layers):
        w = cap.layer_window(layer)
        banned = (j > i) | ((j <= i - w) if w else np.zeros((t, t), bool))
        for head in range(cap.n_heads):
            s = cap.query(layer, head).astype(np.float64) @ cap.key(layer, head).astype(np.float64).T
            s = np.where(banned, -np.inf, s * cap.scales[layer])
            e = np.exp(s - s.max(-1, keepdims=True))
            np.testing.assert_allclose(e / e.sum(-1, keepdims=True), out.attentions[layer][0, head].numpy(),
                                       atol=1e-4)
        if w:  # a local layer: no weight on keys beyond the window
            assert np.all(cap.attn_layer(layer)[:, banned] == 0)
        else:  # a global layer reads the first token from the last one
            assert np.all(cap.attn_layer(layer)[:, -1, 0] > 0)


def test_each_layer_type_rotates_with_its_own_base(tiny_gemma):
    from transformers.models.gemma3.modeling_gemma3 import apply_rotary_pos_emb

    cap = run_capture(tiny_gemma, LONG)
    rot = tiny_gemma.model.model.rotary_emb
    pos = torch.arange(cap.n_tokens)[None]
    for layer, kind in enumerate(tiny_gemma.info.layer_types):
        cos, sin = rot(torch.zeros(1, dtype=torch.float32), pos, kind)
        q, k = apply_rotary_pos_emb(torch.from_numpy(np.array(cap.q_pre[layer]))[None],
                                    torch.from_numpy(np.array(cap.k_pre[layer]))[None], cos, sin)
        np.testing.assert_allclose(cap.q_layer(layer), q[0].numpy(), atol=1e-5)
        np.testing.assert_allclose(cap.k_layer(layer), k[0].numpy(), atol=1e-5)
    # The two bases really differ: the local layers' angles are not the global layers'.
    assert not np.allclose(cap.rope_local[0], cap.rope[0])


def test_q_and_k_are_captured_after_their_norms(tiny_gemma):
    """What the capture calls q_pre is q_norm(q_proj(x)) per head: RMS-normalized, times the gain."""
    cap = run_capture(tiny_gemma, LONG)
    attn = tiny_gemma.model.model.layers[0].self_attn
    x = torch.from_numpy(np.array(cap.resid[0]))
    x = tiny_gemma.model.model.layers[0].input_layernorm(x)
    with torch.inference_mode():
        q = attn.q_proj(x).view(cap.n_tokens, cap.n_heads, -1).transpose(0, 1)  # [H, T, Dh]
        expect = attn.q_norm(q)
    np.testing.assert_allclose(cap.q_pre[0], expect.numpy(), atol=1e-5)


def test_hooks_removed_when_the_forward_raises(tiny_gemma, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(tiny_gemma.model.model.layers[1].mlp, "forward", boom)
    with pytest.raises(RuntimeError):
        run_capture(tiny_gemma, LONG)
    assert hook_count(tiny_gemma.model) == 0


def test_capture_length_is_twice_the_window(tiny_gemma, tiny_llama):
    from lib.model.capture import DEFAULT_MAX_TOKENS

    assert max_tokens_for(tiny_llama) == DEFAULT_MAX_TOKENS
    assert max_tokens_for(tiny_gemma) == max(DEFAULT_MAX_TOKENS, 2 * tiny_gemma.info.sliding_window)


# -- the real Gemma 3 270M (loaded once per session) ---------------------------------------------


def test_real_gemma_numbers_from_its_config(real_gemma):
    i, c = real_gemma.info, real_gemma.model.config
    assert i.model_type == "gemma3_text" and i.family == "gemma3"
    assert i.n_kv_heads == c.num_key_value_heads == 1 and i.n_heads * i.d_head != i.d_model
    assert i.n_params == i.n_params_formula
    assert sum(t == "sliding_attention" for t in i.layer_types) > sum(t == "full_attention" for t in i.layer_types)
    assert max_tokens_for(real_gemma) == 2 * c.sliding_window


def test_real_gemma_capture_oracles(real_gemma):
    cap = run_capture(real_gemma, "Il gatto dorme sul tappeto.")
    out = _model_forward(real_gemma, cap)
    np.testing.assert_allclose(cap.logits_at(cap.n_tokens - 1), out.logits[0, -1].numpy(), atol=1e-4, rtol=0)
    for layer in range(cap.n_layers):
        np.testing.assert_allclose(cap.attn_layer(layer), out.attentions[layer][0].numpy(), atol=1e-4)
    assert hook_count(real_gemma.model) == 0


# -- lessons' lib functions on Gemma ------------------------------------------------------------


def test_loss_by_chunks_equals_the_whole_table(tiny_gemma, tiny_llama):
    from lib.lessons.loss import capture_loss, text_loss

    for lm in (tiny_gemma, tiny_llama):
        cap = run_capture(lm, LONG)
        whole, parts = text_loss(cap.logits, cap.token_ids), capture_loss(cap, chunk=5)
        np.testing.assert_allclose(parts.surprise, whole.surprise, atol=1e-9)
        np.testing.assert_array_equal(parts.rank, whole.rank)
        np.testing.assert_array_equal(parts.top, whole.top)


def test_norm_params_read_gemma_gain_as_applied(tiny_gemma):
    """Gemma's RMSNorm multiplies by (1 + w): our numpy norm with the read gain equals the module."""
    from lib.lessons.block import apply_norm, norm_params

    block = tiny_gemma.model.model.layers[0]
    x = np.random.default_rng(0).standard_normal((3, tiny_gemma.info.d_model)).astype(np.float32)
    for module in (block.input_layernorm, block.pre_feedforward_layernorm, tiny_gemma.model.model.norm):
        p = norm_params(module, "rmsnorm")
        with torch.inference_mode():
            expect = module(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(apply_norm(p, x), expect, atol=1e-5)


def test_attention_contribution_includes_the_post_norm(tiny_gemma):
    """What Gemma's attention writes on the residual stream is post_attention_layernorm(o_proj(...))."""
    from lib.lessons.block import contributions

    cap = run_capture(tiny_gemma, LONG)
    seen = {}
    blocks = tiny_gemma.model.model.layers
    handles = [b.post_attention_layernorm.register_forward_hook(
        lambda m, a, out, i=i: seen.__setitem__(i, out[0].numpy().copy())) for i, b in enumerate(blocks)]
    try:
        _model_forward(tiny_gemma, cap)
    finally:
        for h in handles:
            h.remove()
    c = contributions(tiny_gemma, cap)
    for i in range(cap.n_layers):
        np.testing.assert_allclose(c.attn_out[i], seen[i], atol=1e-4)


def test_hybrid_cache_measured_equals_the_formula(tiny_gemma):
    """Local layers keep the window, global ones every token: the real cache equals the formula."""
    from lib.lessons.kvcache import measure_cache

    n = 3 * tiny_gemma.info.sliding_window + 1
    m = measure_cache(tiny_gemma, n)
    assert m.equal, (m.measured_bytes, m.formula_bytes, m.window_offset_bytes)
    held = [x.key_shape[2] for x in m.layers]
    w = tiny_gemma.info.sliding_window
    # transformers' dynamic sliding layer keeps W - 1 tokens between steps (lib.lessons.kvcache explains the offset).
    assert held == [w - 1 if t == "sliding_attention" else n for t in tiny_gemma.info.layer_types]


def test_formula_steps_use_the_layer_window(tiny_gemma):
    """The attention lesson's step-by-step formula hides keys beyond a local layer's window too."""
    from lib.lessons.attention import capture_head_steps

    cap = run_capture(tiny_gemma, LONG)
    for layer in range(cap.n_layers):
        steps = capture_head_steps(cap, layer, 1, scale=cap.scales[layer])
        np.testing.assert_allclose(steps.weights, cap.attention(layer, 1), atol=1e-5)


# -- built-in models ------------------------------------------------------------------------------


def test_embedded_models_name_both_and_gemma_terms_ship_with_it():
    from lib.model.models import DEFAULT_MODEL, EMBEDDED_MODELS, GEMMA_MODEL, is_embedded, terms_path

    assert list(EMBEDDED_MODELS)[0] == DEFAULT_MODEL and GEMMA_MODEL in EMBEDDED_MODELS
    assert "gemma" in GEMMA_MODEL and all(m.description for m in EMBEDDED_MODELS.values())
    assert is_embedded(GEMMA_MODEL) and not is_embedded("google/gemma-3-270m")
    terms = terms_path(GEMMA_MODEL)
    assert terms is not None and "Gemma" in terms.read_text(encoding="utf-8", errors="replace")


def test_every_built_in_model_stays_resident_beside_one_hub_model(monkeypatch, tiny_llama, tiny_gemma, tiny_gpt2):
    import ui.shell.cache as cache
    from lib.model.models import DEFAULT_MODEL, GEMMA_MODEL
    from lib.serving.budget_cache import ByteBudgetCache

    monkeypatch.setattr(cache, "_models", {})
    monkeypatch.setattr(cache, "CACHE", ByteBudgetCache(10**9, lambda c: c.nbytes))
    fake = {DEFAULT_MODEL: tiny_llama, GEMMA_MODEL: tiny_gemma, "hub/a": tiny_gpt2, "hub/b": tiny_gpt2}
    monkeypatch.setattr(cache, "load_model", lambda name, settings=None: fake[name])
    for name in (DEFAULT_MODEL, "hub/a", GEMMA_MODEL, "hub/b"):
        cache.get_model(name)
    assert sorted(cache.resident_models()) == sorted([DEFAULT_MODEL, GEMMA_MODEL, "hub/b"])


def test_compare_reads_figures_from_the_models(tiny_gemma, tiny_llama):
    from lib.lessons.compare import architecture

    g, ll = architecture(tiny_gemma), architecture(tiny_llama)
    c = tiny_gemma.model.config
    assert (g.local_layers, g.global_layers) == (c.layer_types.count("sliding_attention"),
                                                 c.layer_types.count("full_attention"))
    assert g.norms_per_block == 4 and g.qk_norm and g.gated_mlp and g.activation == "GELUTanh"
    assert ll.norms_per_block == 2 and not ll.qk_norm and ll.activation == "SiLUActivation"
    assert g.embed_scale == pytest.approx(c.hidden_size ** 0.5, rel=1e-3) and ll.embed_scale == 1.0
    assert g.rope_base_local == c.rope_parameters["sliding_attention"]["rope_theta"]
    assert g.heads_width == c.num_attention_heads * c.head_dim != c.hidden_size
    assert g.embedding_params == c.vocab_size * c.hidden_size


def test_gemma_quiz_answers_are_computed_by_the_lib(real_gemma):
    """The Gemma questions' answers equal what the lessons' own functions compute on the real model."""
    import math

    from lib.course.quiz import grade, load_bank
    from lib.lessons.embeddings import embed_scale
    from lib.model import arithmetic as A

    cfg, info = real_gemma.config, real_gemma.info
    banks = {lesson: {q.id: q for q in load_bank("en", lesson)} for lesson in ("kvcache", "numbers", "embeddings")}
    per_token = banks["kvcache"]["gemma_bytes_per_token"]
    assert per_token.answer == A.kv_cache_bytes(cfg, 1, dtype_bytes=4)
    window = banks["kvcache"]["gemma_window_cache"]
    assert window.answer == A.kv_cache_bytes(cfg, 8192, dtype_bytes=2) / 1e6
    every_global = dict(cfg, layer_types=["full_attention"] * info.n_layers)
    assert A.kv_cache_bytes(every_global, 8192, dtype_bytes=2) / 1e6 == pytest.approx(151, abs=0.5)  # the explanation's 151 MB
    share = banks["numbers"]["gemma_embedding_share"]
    computed = 100 * real_gemma.adapter.embed(real_gemma.model).weight.numel() / info.n_params
    assert grade(share, f"{computed}").correct and abs(share.answer - computed) < 0.01
    scale = banks["embeddings"]["gemma_scale"]
    assert grade(scale, f"{embed_scale(real_gemma)}").correct and embed_scale(real_gemma) == pytest.approx(math.sqrt(640))
