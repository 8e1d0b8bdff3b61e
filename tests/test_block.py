"""lib/lessons/block.py: textbook cases, invariants, and oracles from the model's own modules."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lib.lessons import block as blk
from lib.lessons.reference import REFERENCE_MODELS
from lib.model.arithmetic import dims, param_breakdown
from lib.model.capture import run_capture

TEXT = "The capital of France is Paris, and the capital of Italy is"


@pytest.fixture(scope="module")
def real_cap(real):
    return run_capture(real, TEXT)


@pytest.fixture(scope="module", params=["tiny_llama", "tiny_gpt2"])
def tiny(request):
    lm = request.getfixturevalue(request.param)
    return lm, run_capture(lm, "Hello, world! Ciao.")


# --------------------------------------------------------------------------- norms


def test_rms_and_layer_norm_textbook():
    rms = math.sqrt(12.5)
    np.testing.assert_allclose(blk.rms_norm(np.array([3.0, 4.0]), np.ones(2), 0.0), [3 / rms, 4 / rms])
    np.testing.assert_allclose(blk.layer_norm(np.array([3.0, 4.0]), np.ones(2), None, 0.0), [-1.0, 1.0])
    np.testing.assert_allclose(blk.layer_norm(np.array([3.0, 4.0]), np.array([2.0, 2.0]), np.array([1.0, 0.0]), 0.0),
                               [-1.0, 2.0])
    steps = blk.norm_steps(np.array([3.0, 4.0]), blk.NormParams("rmsnorm", np.ones(2), None, 0.0))
    assert steps.rms == pytest.approx(math.sqrt(12.5)) and steps.mean == 3.5 and steps.std == pytest.approx(0.5)
    np.testing.assert_allclose(steps.out, steps.rms_out)


def test_rms_division_gives_length_sqrt_d():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 576)) * rng.uniform(0.01, 100, size=(5, 1))
    out = blk.rms_norm(x, np.ones(576), 0.0)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), math.sqrt(576))
    # LayerNorm is unchanged by a shift of all components, RMSNorm is not.
    g = np.ones(576)
    np.testing.assert_allclose(blk.layer_norm(x + 7.0, g, None, 1e-6), blk.layer_norm(x, g, None, 1e-6), atol=1e-9)
    assert np.abs(blk.rms_norm(x + 7.0, np.ones(576), 0.0) - out).max() > 0.1


def test_our_rmsnorm_equals_the_models_modules(real, real_cap):
    for layer, which in [(0, "attn"), (7, "mlp"), (29, "attn"), (29, "final")]:
        module = blk.block_norm(real, layer, which)
        params = blk.norm_params(module, real.info.norm)
        assert params.kind == "rmsnorm" and params.bias is None and params.eps == module.variance_epsilon
        x = real_cap.resid[layer if which != "final" else -1]
        theirs = blk.module_output(real, module, x)
        np.testing.assert_allclose(blk.apply_norm(params, x), theirs, rtol=1e-5, atol=1e-5)
        steps = blk.norm_steps(x[3], params)
        np.testing.assert_allclose(steps.out, theirs[3], rtol=1e-5, atol=1e-5)
        # Length sqrt(d), shortened only by eps (noticeable on the small embedding vectors of layer 0).
        ms = float(np.mean(x[3].astype(np.float64) ** 2))
        expected = math.sqrt(real.info.d_model) * math.sqrt(ms / (ms + params.eps))
        assert np.linalg.norm(steps.scaled) == pytest.approx(expected, rel=1e-9)
        assert expected == pytest.approx(math.sqrt(real.info.d_model), rel=1e-2)


def test_gpt2_layernorm_equals_ln_f(tiny_gpt2):
    import copy

    ln_f = blk.block_norm(tiny_gpt2, 0, "final")
    assert ln_f is tiny_gpt2.model.transformer.ln_f
    x = np.random.default_rng(2).normal(size=(6, tiny_gpt2.info.d_model)).astype(np.float32) * 5 + 3
    params = blk.norm_params(ln_f, tiny_gpt2.info.norm)
    assert params.kind == "layernorm" and params.eps == ln_f.eps and params.bias is not None
    np.testing.assert_allclose(blk.apply_norm(params, x), blk.module_output(tiny_gpt2, ln_f, x), rtol=1e-5, atol=1e-5)
    # A copy with a random gain and shift, so the oracle checks g and b too (the shared model is untouched).
    other = copy.deepcopy(ln_f)
    torch.manual_seed(1)
    with torch.no_grad():
        other.weight.copy_(torch.randn_like(other.weight))
        other.bias.copy_(torch.randn_like(other.bias))
    params = blk.norm_params(other, "layernorm")
    with torch.no_grad():
        theirs = other(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(blk.apply_norm(params, x), theirs, rtol=1e-5, atol=1e-5)
    steps = blk.norm_steps(x[0], params)
    np.testing.assert_allclose(steps.out, theirs[0], rtol=1e-5, atol=1e-5)
    assert steps.layer_out is not steps.rms_out and np.abs(steps.rms_out - steps.layer_out).max() > 0.1


# --------------------------------------------------------------------------- the block, in order


@pytest.mark.parametrize("fixture,norm_name,mlp_name", [("real", "model.layers.{l}.input_layernorm", "model.layers.{l}.mlp"),
                                                       ("tiny_gpt2", "transformer.h.{l}.ln_1", "transformer.h.{l}.mlp")])
def test_block_steps_name_the_models_modules(fixture, norm_name, mlp_name, request):
    lm = request.getfixturevalue(fixture)
    steps = blk.block_steps(lm, 7)
    assert [s.kind for s in steps] == ["embed", "norm", "attention", "add", "norm", "mlp", "add", "final_norm", "unembed"]
    modules = dict(lm.model.named_modules())
    assert steps[1].module == norm_name and steps[5].module == mlp_name
    attn_norm, mlp_norm = lm.adapter.norms(lm.adapter.blocks(lm.model)[1])
    assert modules[steps[1].module.format(l=1)] is attn_norm and modules[steps[4].module.format(l=1)] is mlp_norm
    assert modules[steps[2].module.format(l=1)] is lm.adapter.attention(lm.adapter.blocks(lm.model)[1])
    assert modules[steps[-1].module] is lm.adapter.unembed(lm.model)
    info = lm.info
    assert steps[0].shape_out == (7, info.d_model) and steps[-1].shape_out == (7, info.vocab_size)
    inner = dict(steps[2].inner)
    assert inner["q"] == (info.n_heads, 7, info.d_head) and inner["k"] == (info.n_kv_heads, 7, info.d_head)
    assert dict(steps[5].inner)["act"] == (7, info.d_mlp)
    assert ("gate" in dict(steps[5].inner)) == (info.activation == "swiglu")


def test_block_rejects_a_missing_layer(tiny_llama):
    with pytest.raises(IndexError):
        blk.block(tiny_llama, tiny_llama.info.n_layers)


# --------------------------------------------------------------------------- residual stream


def test_residual_norms_textbook():
    np.testing.assert_allclose(blk.residual_norms(np.ones((2, 3, 4))), np.full((2, 3), 2.0))


def _model_mlp(lm, layer, x):
    """The block's own norm and whole MLP module (both families call it `mlp`), end to end."""
    b = lm.adapter.blocks(lm.model)[layer]
    _, norm = lm.adapter.norms(b)
    with torch.inference_mode():
        return b.mlp(norm(torch.from_numpy(np.array(x, dtype=np.float32)))).numpy()


def test_split_is_proved_by_the_models_own_mlp(tiny):
    lm, cap = tiny
    c = blk.contributions(lm, cap)
    L, T, D = c.attn_out.shape
    assert (L, T, D) == (lm.info.n_layers, cap.n_tokens, lm.info.d_model)
    for layer in range(L):
        # If the attention part were wrong, the model's MLP on resid + attention would not produce the rest.
        mid = cap.resid[layer] + c.attn_out[layer]
        np.testing.assert_allclose(_model_mlp(lm, layer, mid), c.mlp_out[layer], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c.attn_out + c.mlp_out, cap.resid[1:] - cap.resid[:-1], atol=1e-5)
    np.testing.assert_allclose(c.resid_norm, np.linalg.norm(cap.resid, axis=-1), rtol=1e-5)
    assert c.attn_norm.shape == c.mlp_norm.shape == c.delta_norm.shape == (L, T)


def test_split_on_the_real_model(real, real_cap):
    c = blk.contributions(real, real_cap)
    for layer in (0, 14, 29):
        mid = real_cap.resid[layer] + c.attn_out[layer]
        got = _model_mlp(real, layer, mid)
        scale = np.abs(c.mlp_out[layer]).max()
        assert np.abs(got - c.mlp_out[layer]).max() <= 1e-4 * max(scale, 1.0)


def test_mlp_branches_rebuild_the_captured_activation(tiny, real, real_cap):
    for lm, cap in (tiny, (real, real_cap)):
        c = blk.contributions(lm, cap)
        layer = lm.info.n_layers - 1
        br = blk.mlp_branches(lm, cap, layer, c.attn_out[layer])
        assert br.max_diff_capture <= 1e-4 * max(1.0, float(np.abs(cap.mlp[layer]).max()))
        np.testing.assert_allclose(br.out, c.mlp_out[layer], rtol=1e-3, atol=1e-4 * max(1.0, np.abs(br.out).max()))
        if lm.info.activation == "swiglu":
            silu = torch.nn.functional.silu(torch.from_numpy(br.gate)).numpy()
            np.testing.assert_allclose(br.act, silu, atol=1e-6)
            np.testing.assert_allclose(br.product, br.act * br.up, rtol=1e-6, atol=1e-6)
        else:
            assert br.gate is None
            np.testing.assert_allclose(br.product, br.act)


# --------------------------------------------------------------------------- non-linearity


def test_linear_collapse_textbook():
    relu = lambda h: np.maximum(h, 0)  # noqa: E731
    c = blk.linear_collapse(np.array([[1.0], [-1.0]]), np.array([[2.0]]), np.zeros(1), np.array([[3.0]]), np.zeros(1), relu)
    np.testing.assert_allclose(c.two_steps, [[6.0], [-6.0]])
    np.testing.assert_allclose(c.one_step, [[6.0], [-6.0]])
    np.testing.assert_allclose(c.with_act, [[6.0], [0.0]])
    assert c.max_diff == 0 and c.act_diff == 6.0 and c.params_two == 2 and c.params_one == 1


def test_linear_collapse_random_with_biases():
    rng = np.random.default_rng(42)
    x, a1, b1 = rng.normal(size=(5, 8)), rng.normal(size=(8, 32)), rng.normal(size=32)
    a2, b2 = rng.normal(size=(32, 8)), rng.normal(size=8)
    c = blk.linear_collapse(x, a1, b1, a2, b2, np.tanh)
    assert c.max_diff < 1e-12 * c.scale
    assert c.act_diff > 0.1 * c.scale
    assert c.params_two == 8 * 32 + 32 + 32 * 8 + 8 and c.params_one == 64 + 8


def test_affine_map_reads_linear_and_conv1d(tiny_llama, tiny_gpt2):
    up = tiny_llama.model.model.layers[0].mlp.up_proj  # nn.Linear: weight [out, in]
    a, b = blk.affine_map(tiny_llama, up, tiny_llama.info.d_model)
    np.testing.assert_allclose(a, up.weight.detach().numpy().T, atol=1e-6)
    assert not b.any()
    c_fc = tiny_gpt2.model.transformer.h[0].mlp.c_fc  # GPT-2 Conv1D: weight [in, out], with a bias
    a, b = blk.affine_map(tiny_gpt2, c_fc, tiny_gpt2.info.d_model)
    np.testing.assert_allclose(a, c_fc.weight.detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(b, c_fc.bias.detach().numpy(), atol=1e-6)


def test_mlp_collapse_on_the_live_model(real, real_cap):
    c = blk.contributions(real, real_cap)
    br = blk.mlp_branches(real, real_cap, 5, c.attn_out[5])
    col = blk.mlp_collapse(real, 5, br.normed)
    d, f = real.info.d_model, real.info.d_mlp
    assert col.max_diff < 1e-9 * col.scale  # float64: rounding only
    assert col.act_diff > 0.05 * col.scale  # the model's SiLU breaks it
    assert col.params_two == 2 * d * f and col.params_one == d * d


def test_activation_curves_match_their_formulas():
    c = blk.activation_curves(-4, 4, 81)
    x = c["x"]
    assert len(x) == 81 and x[0] == -4 and x[-1] == 4
    phi = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(c["relu"], np.maximum(x, 0))
    np.testing.assert_allclose(c["gelu"], x * phi, atol=1e-12)
    np.testing.assert_allclose(c["silu"], x / (1 + np.exp(-x)), atol=1e-12)
    tanh = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(c["gelu_tanh"], tanh, atol=1e-12)
    assert np.abs(c["gelu"] - c["gelu_tanh"]).max() < 1e-3  # close cousins, not equal


def test_which_activation_recognises_the_models(real, tiny_gpt2):
    assert blk.which_activation(torch.nn.SiLU()) == "silu"
    assert blk.which_activation(torch.nn.ReLU()) == "relu"
    assert blk.which_activation(real.adapter.mlp_branches(real.adapter.blocks(real.model)[0])[2]) == "silu"
    gpt2_act = tiny_gpt2.adapter.mlp_branches(tiny_gpt2.adapter.blocks(tiny_gpt2.model)[0])[2]
    assert tiny_gpt2.model.config.activation_function == "gelu_new"
    assert blk.which_activation(gpt2_act) == "gelu_tanh"


def test_top_neurons_textbook_and_subset():
    m = np.array([[0.0, -5.0, 1.0], [2.0, 0.0, 0.0]])
    assert blk.top_neurons(m, 2) == [blk.Neuron(1, -5.0, 0), blk.Neuron(0, 2.0, 1)]
    assert blk.top_neurons(m, 1, positions=np.array([1])) == [blk.Neuron(0, 2.0, 1)]
    assert blk.top_neurons(m, 3, positions=np.array([], dtype=int)) == []


def test_top_neurons_on_the_capture(real_cap):
    mlp = real_cap.mlp[12]
    top = blk.top_neurons(mlp, 10)
    peaks = np.abs(mlp).max(axis=0)
    assert [n.index for n in top] == list(np.argsort(-peaks, kind="stable")[:10])
    for n in top:
        assert mlp[n.position, n.index] == pytest.approx(n.value) and abs(n.value) == pytest.approx(peaks[n.index])


# --------------------------------------------------------------------------- MLP width


def test_dff_arithmetic_of_seed_001():
    a = blk.dff_arithmetic(4096)
    assert a.eight_thirds == pytest.approx(10922.667, abs=1e-3)
    assert a.scaled == pytest.approx(14199.467, abs=1e-3)
    assert a.rounded == 14336 and a.classic == 16384
    with pytest.raises(ValueError):
        blk.dff_arithmetic(0)


def test_dff_shares_agree_with_the_parameter_count():
    cfg = REFERENCE_MODELS["Llama-3 8B"]
    d = dims(cfg)
    attn = blk.attention_params(d.D, d.H, d.Hkv, d.Dh)
    parts = param_breakdown(cfg)
    assert attn * d.L == parts["attention"]
    a = blk.dff_arithmetic(d.D, d.F, attn)
    assert a.mlp_share(d.F) == pytest.approx(parts["mlp"] / (parts["mlp"] + parts["attention"]))
    assert round(100 * a.mlp_share(d.F)) == 81  # seed 001: "81% of the layer"
    # "two thirds at 8/3·d" holds for attention of 4d² (no GQA), not for this model's GQA attention.
    assert blk.DffArithmetic(**{**a.__dict__, "attn_params": 4 * d.D ** 2}).mlp_share(a.eight_thirds) == pytest.approx(2 / 3)
    assert a.mlp_share(a.eight_thirds) > 0.75


@pytest.mark.parametrize("d,actual,gated,verdict", [
    (4096, 14336, True, "recipe"), (576, 1536, True, "eight_thirds"), (4096, 11008, True, "eight_thirds"),
    (768, 3072, False, "classic"), (768, 3072, True, "recipe"),  # 8/3·768·1.3 = 2662.4 rounds up to 3072 too
    (100, 7, True, "other"), (100, 7, False, "other")])
def test_dff_verdicts(d, actual, gated, verdict):
    assert blk.dff_verdict(blk.dff_arithmetic(d, actual), gated) == verdict


def test_live_models_width(real, tiny_gpt2):
    info = real.info
    assert blk.dff_verdict(blk.dff_arithmetic(info.d_model, info.d_mlp)) == "eight_thirds"
    assert blk.dff_arithmetic(info.d_model).eight_thirds == info.d_mlp
    g = tiny_gpt2.info
    gated = tiny_gpt2.adapter.mlp_branches(tiny_gpt2.adapter.blocks(tiny_gpt2.model)[0])[0] is not None
    assert not gated and blk.dff_verdict(blk.dff_arithmetic(g.d_model, g.d_mlp), gated) == "classic"


def test_block_steps_put_the_post_norms_where_they_run(tiny_gemma):
    """Sandwich norms: each sub-layer's output is normalised before it is added (Gemma 3)."""
    steps = blk.block_steps(tiny_gemma, 5)
    assert [s.kind for s in steps] == ["embed", "norm", "attention", "norm", "add", "norm", "mlp", "norm", "add",
                                       "final_norm", "unembed"]
    block = tiny_gemma.adapter.blocks(tiny_gemma.model)[1]
    modules = dict(tiny_gemma.model.named_modules())
    post_attn, post_mlp = tiny_gemma.adapter.post_norms(block)
    assert modules[steps[3].module.format(l=1)] is post_attn and modules[steps[7].module.format(l=1)] is post_mlp
    assert steps[3].module.endswith("post_attention_layernorm") and steps[5].module.endswith("pre_feedforward_layernorm")
