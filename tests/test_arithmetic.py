"""count_params against the model transformers builds from the same config (oracle)."""

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM

from lib.arithmetic import count_params

SMALL = dict(vocab_size=1000, hidden_size=64, intermediate_size=160, num_hidden_layers=3,
             num_attention_heads=8, num_key_value_heads=2, head_dim=16)

CASES = [
    ("llama", dict(SMALL)),
    ("llama", dict(SMALL, tie_word_embeddings=True, attention_bias=True, mlp_bias=True)),
    ("llama", dict(SMALL, head_dim=32)),  # head_dim * heads != hidden_size
    ("mistral", dict(SMALL)),
    ("qwen2", dict(SMALL)),
    ("qwen3", dict(SMALL)),
    ("gemma3_text", dict(SMALL)),
    ("gpt2", dict(vocab_size=1000, n_embd=64, n_layer=3, n_head=4, n_positions=256)),
    ("gpt2", dict(vocab_size=1000, n_embd=64, n_layer=3, n_head=4, n_positions=256, n_inner=100)),
]


@pytest.mark.parametrize("model_type,kwargs", CASES)
def test_count_params_equals_transformers(model_type, kwargs):
    cfg = AutoConfig.for_model(model_type, **kwargs)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(cfg)
    assert count_params(cfg.to_dict()) == sum(p.numel() for p in model.parameters())


def test_smollm2_textbook_value():
    cfg = dict(model_type="llama", vocab_size=49152, hidden_size=576, intermediate_size=1536,
               num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3, head_dim=64,
               tie_word_embeddings=True)
    assert count_params(cfg) == 134_515_008


def test_unsupported_type_raises():
    with pytest.raises(ValueError):
        count_params({"model_type": "bert", "vocab_size": 10})


def test_param_breakdown_adds_up():
    from lib.arithmetic import param_breakdown
    from lib.reference import REFERENCE_MODELS

    for cfg in REFERENCE_MODELS.values():
        parts = param_breakdown(cfg)
        assert sum(parts.values()) == count_params(cfg)
        assert all(v >= 0 for v in parts.values())
    gpt2 = param_breakdown(REFERENCE_MODELS["GPT-2 small"])
    assert gpt2["embeddings"] == 50257 * 768 and gpt2["positions"] == 1024 * 768 and gpt2["lm_head"] == 0


def test_kv_cache_textbook_values():
    from lib.arithmetic import kv_cache_bytes
    from lib.reference import REFERENCE_MODELS

    llama8 = REFERENCE_MODELS["Llama-3 8B"]
    assert kv_cache_bytes(llama8, 1) == 128 * 1024  # 2 · 32 layers · 8 KV heads · 128 · 2 bytes
    assert kv_cache_bytes(llama8, 8192) == 2**30
    assert kv_cache_bytes(llama8, 8192, batch=100) == 100 * 2**30
    assert kv_cache_bytes(llama8, 10, dtype_bytes=4) == 2 * kv_cache_bytes(llama8, 10)


def test_reference_figures_quoted_in_the_lesson_are_the_computed_ones():
    """The lesson text quotes KV-cache sizes; they must be what the app computes (both languages)."""
    from lib import i18n
    from lib.arithmetic import kv_cache_bytes
    from lib.reference import REFERENCE_MODELS, numbers

    for lang, sep in (("en", "."), ("it", ",")):
        text = i18n.lesson(lang, "numbers")["reference"]
        for name, cfg in REFERENCE_MODELS.items():
            gqa = kv_cache_bytes(cfg, 8192) / 1e9
            assert f"{gqa:.2f}".replace(".", sep) in text, (lang, name)
            n = numbers(cfg)
            if n["n_kv_heads"] < n["n_heads"]:
                mha = kv_cache_bytes(dict(cfg, num_key_value_heads=n["n_heads"]), 8192) / 1e9
                assert (f"{mha:.2f}".replace(".", sep) in text) or (f"{mha:.1f}".replace(".", sep) in text), (lang, name)
