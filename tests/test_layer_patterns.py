"""Every layer pattern a config allows: local only, global only, mixed, with one RoPE base or one per
layer kind, and Mistral's window on every layer. The same oracles as tests/test_gemma.py (the
model's own attention weights, transformers' rotation, the real cache's bytes) on tiny random
models of each pattern (drivers/hub_standin.py's configs), plus the lessons' lib functions.
"""

import numpy as np
import pytest
import torch

from lib.lessons.attention import capture_head_steps
from lib.lessons.kvcache import measure_cache
from lib.model.capture import run_capture
from drivers.hub_standin import family_configs

PATTERNS = ["tiny-gemma3", "tiny-gemma3-local", "tiny-gemma3-global", "tiny-gemma3-one-base", "tiny-mistral",
            "tiny-qwen3"]
LONG = "Il gatto dorme sul tappeto perché è stanco."  # 43 bytes: ten times the tiny window


@pytest.fixture(scope="module")
def models(byte_tokenizer):
    from transformers import AutoModelForCausalLM

    from lib.model.models import wrap_model

    out = {}
    for name in PATTERNS:
        torch.manual_seed(0)
        cfg = family_configs()[name]
        out[name] = wrap_model(AutoModelForCausalLM.from_config(cfg, attn_implementation="eager"), byte_tokenizer, name)
    return out


def _base(config, kind):
    rope = config.rope_parameters
    return rope[kind]["rope_theta"] if kind in rope else rope["rope_theta"]


def test_bases_and_window_follow_the_layers_that_exist(models):
    g, lo, gl, one, mi = (models[n].info for n in PATTERNS[:5])
    assert (g.rope_theta, g.rope_theta_local, g.sliding_window) == (10000.0, 10.0, 4)
    # All local: the one base in use is the local one; no second base to compare.
    assert (lo.rope_theta, lo.rope_theta_local, lo.sliding_window) == (10.0, None, 4)
    assert lo.layer_types == ("sliding_attention",) * 3
    # All global: no window, no local base.
    assert (gl.rope_theta, gl.rope_theta_local, gl.sliding_window) == (10000.0, None, None)
    assert (one.rope_theta, one.rope_theta_local) == (10000.0, 10000.0)
    # Mistral's window covers every layer, though its config lists no layer types.
    assert (mi.sliding_window, mi.layer_types) == (4, ("sliding_attention",) * 2)


@pytest.mark.parametrize("name", PATTERNS)
def test_attention_equals_the_model_and_the_window_masks(models, name):
    lm = models[name]
    cap = run_capture(lm, LONG)
    ids = torch.tensor([cap.token_ids.tolist()])
    with torch.inference_mode():
        out = lm.model(ids, output_attentions=True)
    t = cap.n_tokens
    i, j = np.arange(t)[:, None], np.arange(t)[None, :]
    for layer in range(cap.n_layers):
        np.testing.assert_allclose(cap.attn_layer(layer), out.attentions[layer][0].numpy(), atol=1e-4)
        w = cap.layer_window(layer)
        kind = lm.info.layer_types[layer] if lm.info.layer_types else "full_attention"
        assert (w is not None) == (kind == "sliding_attention")
        if w:
            assert np.all(cap.attn_layer(layer)[:, j <= i - w] == 0)
        # The first tokens alone (the overview's thumbnails): the top-left corner of the model's own.
        np.testing.assert_allclose(cap.attn_layer(layer, upto=5), out.attentions[layer][0].numpy()[:, :5, :5], atol=1e-4)
        steps = capture_head_steps(cap, layer, 1, scale=cap.scales[layer])  # the attention lesson's formula
        np.testing.assert_allclose(steps.weights, cap.attention(layer, 1), atol=1e-5)


@pytest.mark.parametrize("name", [n for n in PATTERNS if n.startswith("tiny-gemma3")])
def test_each_layer_rotates_with_the_base_of_its_kind(models, name):
    from lib.lessons import rope

    lm = models[name]
    cap = run_capture(lm, LONG)
    pos = np.arange(cap.n_tokens)
    for layer, kind in enumerate(lm.info.layer_types):
        cos, sin = rope.cos_sin(pos, lm.info.d_head, _base(lm.model.config, kind))
        np.testing.assert_allclose(cap.layer_rope(layer)[0], np.asarray(cos), atol=1e-5)
        np.testing.assert_allclose(cap.layer_rope(layer)[1], np.asarray(sin), atol=1e-5)
    # The position lesson's base is the one the model's layers use when they all share one.
    if len(set(lm.info.layer_types)) == 1:
        assert lm.info.rope_theta == _base(lm.model.config, lm.info.layer_types[0])


@pytest.mark.parametrize("name", PATTERNS)
def test_kv_cache_measured_equals_the_formula(models, name):
    lm = models[name]
    n = 3 * (lm.info.sliding_window or 4) + 1
    m = measure_cache(lm, n)
    assert m.equal, (m.measured_bytes, m.formula_bytes, m.window_offset_bytes)
    kinds = [x.kind for x in m.layers]
    assert kinds.count("sliding") == lm.info.layer_types.count("sliding_attention")


def test_a_wide_window_does_not_make_captures_huge(byte_tokenizer):
    """Twice the window, to show its mask, but never more than MAX_WINDOW_TOKENS (Mistral's 4,096)."""
    from transformers import AutoModelForCausalLM, MistralConfig

    from lib.model.capture import DEFAULT_MAX_TOKENS, MAX_WINDOW_TOKENS, max_tokens_for
    from lib.model.models import wrap_model

    for window, expected in ((4, DEFAULT_MAX_TOKENS), (512, 1024), (4096, MAX_WINDOW_TOKENS)):
        cfg = MistralConfig(vocab_size=257, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                            num_attention_heads=4, num_key_value_heads=2, sliding_window=window)
        lm = wrap_model(AutoModelForCausalLM.from_config(cfg), byte_tokenizer, "wide")
        assert lm.info.sliding_window == window and max_tokens_for(lm) == expected
