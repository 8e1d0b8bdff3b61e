"""The capture: contract of fields and shapes, oracles against the model, hooks and threads."""

import threading

import numpy as np
import pytest
import torch

from lib.model.capture import EmptyTextError, hook_count, run_capture

TEXT = "Il gatto dorme sul tappeto perché è stanco 🐱."


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def recompute_attention(cap, layer, head):
    """softmax(q kᵀ / √Dh + causal mask), with the GQA key head the query head reads."""
    q, k = cap.query(layer, head).astype(np.float64), cap.key(layer, head).astype(np.float64)
    t = cap.n_tokens
    mask = np.triu(np.full((t, t), -np.inf), 1)  # token i may not read tokens after it
    return _softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask)


@pytest.mark.parametrize("fixture", ["tiny_llama", "tiny_gpt2"])
def test_contract_fields_and_shapes(fixture, request):
    lm = request.getfixturevalue(fixture)
    i = lm.info
    cap = run_capture(lm, "Hello, world!")
    T, L, H, Hkv, D, Dh, F, V = cap.n_tokens, i.n_layers, i.n_heads, i.n_kv_heads, i.d_model, i.d_head, i.d_mlp, i.vocab_size
    assert T == 13  # one byte per token with the tiny byte tokenizer
    expected = {"token_ids": (T,), "offsets": (T, 2), "embeddings": (T, D), "q_pre": (L, H, T, Dh),
                "k_pre": (L, Hkv, T, Dh), "q": (L, H, T, Dh), "k": (L, Hkv, T, Dh), "v": (L, Hkv, T, Dh),
                "attn": (L, H, T, T), "resid": (L + 1, T, D), "mlp": (L, T, F), "logits": (T, V)}
    for name, shape in expected.items():
        arr = getattr(cap, name)
        assert arr.shape == shape, name
        assert not arr.flags.writeable, name
        if name not in ("token_ids", "offsets"):
            assert arr.dtype == np.float32, name
    assert len(cap.tokens) == T and not cap.truncated
    np.testing.assert_allclose(cap.attn.sum(-1), 1.0, atol=1e-5)
    with pytest.raises(Exception):
        cap.q = None  # frozen


@pytest.mark.parametrize("fixture", ["tiny_llama", "tiny_gpt2", "real"])
def test_attention_recomputed_from_q_k_and_model_oracles(fixture, request):
    lm = request.getfixturevalue(fixture)
    cap = run_capture(lm, TEXT)
    ids = torch.tensor([cap.token_ids.tolist()])
    with torch.inference_mode():
        out = lm.model(ids, output_attentions=True)
    np.testing.assert_allclose(cap.logits, out.logits[0].numpy(), atol=1e-4, rtol=0)
    for layer in range(cap.n_layers):
        np.testing.assert_allclose(cap.attn[layer], out.attentions[layer][0].numpy(), atol=1e-6)
        for head in range(cap.n_heads):
            np.testing.assert_allclose(recompute_attention(cap, layer, head), cap.attention(layer, head), atol=1e-4)


def test_rope_changes_q_and_k_but_not_their_norms(tiny_llama, tiny_gpt2):
    cap = run_capture(tiny_llama, TEXT)
    # Position 0 is not rotated; later positions are, and a rotation keeps the length.
    np.testing.assert_allclose(cap.q[:, :, 0], cap.q_pre[:, :, 0], atol=1e-6)
    assert not np.allclose(cap.q[:, :, 1:], cap.q_pre[:, :, 1:], atol=1e-3)
    np.testing.assert_allclose(np.linalg.norm(cap.k, axis=-1), np.linalg.norm(cap.k_pre, axis=-1), rtol=1e-5)
    g = run_capture(tiny_gpt2, TEXT)
    np.testing.assert_array_equal(g.q, g.q_pre)  # GPT-2: no rotation


def test_residual_stream_and_mlp_match_the_model(real):
    cap = run_capture(real, TEXT)
    ids = torch.tensor([cap.token_ids.tolist()])
    with torch.inference_mode():
        out = real.model(ids, output_hidden_states=True)
    hs = out.hidden_states
    for i in range(cap.n_layers):  # hidden_states[i] is the input of block i
        np.testing.assert_allclose(cap.resid[i], hs[i][0].numpy(), atol=1e-4)
    # transformers' last hidden state is after the final norm; ours is before it.
    final = real.model.model.norm(torch.from_numpy(cap.resid[-1].copy()))
    np.testing.assert_allclose(final.detach().numpy(), hs[-1][0].numpy(), atol=1e-4)
    np.testing.assert_allclose(cap.embeddings, real.model.model.embed_tokens.weight[ids[0]].detach().numpy())
    # Rebuild block 0 from captured pieces: attention output (weights @ v, heads concatenated,
    # o_proj) added to the residual, then the SwiGLU input silu(gate(x)) * up(x) of the normed sum.
    block = real.model.model.layers[0]
    heads = [cap.attention(0, h) @ cap.value(0, h) for h in range(cap.n_heads)]
    with torch.inference_mode():
        attn_out = block.self_attn.o_proj(torch.from_numpy(np.concatenate(heads, axis=-1)))
        mid = torch.from_numpy(cap.resid[0].copy()) + attn_out
        x = block.post_attention_layernorm(mid)
        mlp_in = block.mlp.act_fn(block.mlp.gate_proj(x)) * block.mlp.up_proj(x)
        after = mid + block.mlp.down_proj(mlp_in)
    np.testing.assert_allclose(cap.mlp[0], mlp_in.numpy(), atol=1e-4)
    np.testing.assert_allclose(cap.resid[1], after.numpy(), atol=1e-4)


def test_gpt2_embeddings_include_positions(tiny_gpt2):
    cap = run_capture(tiny_gpt2, "abc")
    t = tiny_gpt2.model.transformer
    ids = torch.tensor(cap.token_ids.tolist())
    expected = (t.wte(ids) + t.wpe(torch.arange(3))).detach().numpy()
    np.testing.assert_allclose(cap.embeddings, expected, atol=1e-6)


def test_no_hooks_left_after_a_run_and_after_a_failure(tiny_llama, monkeypatch):
    model = tiny_llama.model

    def all_hooks():
        return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())

    run_capture(tiny_llama, "abc")  # transformers installs its own, inactive, recording hooks once
    before = all_hooks()
    run_capture(tiny_llama, "abcd")
    assert hook_count(model) == 0 and all_hooks() == before

    def boom(*a, **k):
        raise RuntimeError("forward failed")

    monkeypatch.setattr(tiny_llama.model.model.layers[1].mlp, "forward", boom)
    with pytest.raises(RuntimeError):
        run_capture(tiny_llama, "abc")
    assert hook_count(model) == 0
    assert all_hooks() == before
    assert not tiny_llama.lock._is_owned()


def test_two_threads_get_their_own_results(real):
    texts = ["Il cane morde l'uomo.", "The quick brown fox jumps over the lazy dog again and again."]
    alone = [run_capture(real, t) for t in texts]
    results = [None] * 8
    barrier = threading.Barrier(8)

    def work(i):
        barrier.wait()
        results[i] = run_capture(real, texts[i % 2])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for i, cap in enumerate(results):
        ref = alone[i % 2]
        assert cap.text == ref.text and cap.n_tokens == ref.n_tokens
        np.testing.assert_allclose(cap.attn, ref.attn, atol=1e-6)
        np.testing.assert_allclose(cap.resid, ref.resid, atol=1e-5)
    assert hook_count(real.model) == 0


def test_long_text_is_cut_and_says_so(tiny_llama):
    text = "ab " * 20_000  # 60,000 characters
    cap = run_capture(tiny_llama, text, max_tokens=64)
    assert cap.truncated and cap.n_tokens == 64 and cap.n_tokens_total == 60_000
    assert cap.offsets[-1, 1] <= len(text)


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_text_raises_a_clear_error(tiny_llama, text):
    with pytest.raises(EmptyTextError):
        run_capture(tiny_llama, text)


def test_real_tokens_are_readable(real):
    cap = run_capture(real, "Ciao 🐱 perché")
    assert all("\ufffd" not in t for t in cap.tokens)
    assert cap.tokens[0] == "C" or cap.tokens[0].startswith("C")
    assert any("<F0>" in t for t in cap.tokens)  # the emoji is split across tokens, shown as bytes
    assert cap.offsets.shape == (cap.n_tokens, 2)
