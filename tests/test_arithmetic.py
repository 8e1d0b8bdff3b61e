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
