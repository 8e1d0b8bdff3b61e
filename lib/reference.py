"""Reference models for comparison tables, as Hugging Face config dicts.

Only published architecture numbers are here; everything derived from them (parameters, KV
cache) is computed by `lib.arithmetic`, so a table can never disagree with its formula.
Deliberately left out: models whose configs we cannot check against their published cards.
"""

from __future__ import annotations

from typing import Any

from lib.arithmetic import dims

REFERENCE_MODELS: dict[str, dict[str, Any]] = {
    "GPT-2 small": dict(model_type="gpt2", vocab_size=50257, n_embd=768, n_layer=12, n_head=12,
                        n_positions=1024),
    "Llama-3 8B": dict(model_type="llama", vocab_size=128256, hidden_size=4096, intermediate_size=14336,
                       num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                       max_position_embeddings=8192, tie_word_embeddings=False),
    "Llama-3 70B": dict(model_type="llama", vocab_size=128256, hidden_size=8192, intermediate_size=28672,
                        num_hidden_layers=80, num_attention_heads=64, num_key_value_heads=8,
                        max_position_embeddings=8192, tie_word_embeddings=False),
}


def numbers(config: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of a config dict, with GPT-2's names mapped to Llama's.

    Example: numbers(REFERENCE_MODELS["Llama-3 8B"])["d_head"] -> 128
    """
    d = dims(config)
    return dict(n_layers=d.L, n_heads=d.H, n_kv_heads=d.Hkv, d_head=d.Dh, d_model=d.D,
                context=config.get("max_position_embeddings", config.get("n_positions")))
