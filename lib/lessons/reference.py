"""Reference models for comparison tables, as Hugging Face config dicts.

Only published architecture numbers are here; everything derived from them (parameters, KV
cache) is computed by `lib.model.arithmetic`, so a table can never disagree with its formula.
Deliberately left out: models whose configs we cannot check against their published cards.

`REFERENCE_MODELS` is lesson 1's table; `MORE_MODELS` adds the architectures the KV-cache lesson
needs (a sliding window, local/global layers, latent attention, a mixture of experts). Their
numbers are the `config.json` values of the published checkpoints (mistralai/Mistral-7B-v0.1,
google/gemma-3-4b-it and gemma-3-27b-it text configs, Qwen/Qwen2.5-7B, deepseek-ai/DeepSeek-V3);
the tests check the parameter counts computed from them against the sizes on the model cards
(`PUBLISHED_PARAMS`). `SEED_000_KV_TABLE` is a table of KV-cache sizes as a source text prints it,
kept so the lesson can recompute it from its own formula.
"""

from __future__ import annotations

from typing import Any

from lib.model.arithmetic import dims

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

MORE_MODELS: dict[str, dict[str, Any]] = {
    # Every layer attends to the last 4,096 tokens only (v0.1; later versions dropped the window).
    "Mistral 7B": dict(model_type="mistral", vocab_size=32000, hidden_size=4096, intermediate_size=14336,
                       num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                       sliding_window=4096, max_position_embeddings=32768, tie_word_embeddings=False),
    # Five local layers (window 1,024) for every global one; the language model only.
    "Gemma 3 4B": dict(model_type="gemma3_text", vocab_size=262208, hidden_size=2560, intermediate_size=10240,
                       num_hidden_layers=34, num_attention_heads=8, num_key_value_heads=4, head_dim=256,
                       sliding_window=1024, sliding_window_pattern=6, max_position_embeddings=131072,
                       tie_word_embeddings=True),
    "Gemma 3 27B": dict(model_type="gemma3_text", vocab_size=262208, hidden_size=5376, intermediate_size=21504,
                        num_hidden_layers=62, num_attention_heads=32, num_key_value_heads=16, head_dim=128,
                        sliding_window=1024, sliding_window_pattern=6, max_position_embeddings=131072,
                        tie_word_embeddings=True),
    # Its config.json names a window but switches it off (use_sliding_window: false).
    "Qwen2.5 7B": dict(model_type="qwen2", vocab_size=152064, hidden_size=3584, intermediate_size=18944,
                       num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4,
                       sliding_window=131072, use_sliding_window=False, max_window_layers=28,
                       max_position_embeddings=131072, tie_word_embeddings=False),
    # Multi-head latent attention and 256 routed experts (8 active) plus one shared, after 3 dense layers.
    "DeepSeek-V3": dict(model_type="deepseek_v3", vocab_size=129280, hidden_size=7168, intermediate_size=18432,
                        moe_intermediate_size=2048, num_hidden_layers=61, num_attention_heads=128,
                        num_key_value_heads=128, kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64,
                        qk_nope_head_dim=128, v_head_dim=128, head_dim=64, n_routed_experts=256,
                        num_experts_per_tok=8, n_shared_experts=1, first_k_dense_replace=3,
                        max_position_embeddings=163840, tie_word_embeddings=False),
}

# (total, active) parameters as the model cards state them, rounded as they round them.
PUBLISHED_PARAMS: dict[str, tuple[float, float]] = {
    "Llama-3 8B": (8.0e9, 8.0e9), "Llama-3 70B": (70e9, 70e9), "GPT-2 small": (124e6, 124e6),
    "Mistral 7B": (7.3e9, 7.3e9), "Qwen2.5 7B": (7.61e9, 7.61e9), "Gemma 3 27B": (27e9, 27e9),
    "DeepSeek-V3": (671e9, 37e9),
}

# Seed 000's table, "KV Cache @ 8K" computed with 2 × L × H × n × d_head × 2 bytes, as printed:
# (layers, heads, d_head, d_model, tokens, the size it states in GB). Its 8B row and its
# "Claude-style" row do not follow from its own formula; lesson 8 shows by how much.
SEED_000_KV_TABLE: dict[str, tuple[int, int, int, int, int, float]] = {
    "GPT-2 small": (12, 12, 64, 768, 8192, 0.1),
    "Llama-3 8B": (32, 32, 128, 4096, 8192, 2.0),
    "Llama-3 70B": (80, 64, 128, 8192, 8192, 20.0),
    "Claude-style @ 100K": (48, 64, 128, 8192, 100_000, 75.0),
}


def numbers(config: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of a config dict, with GPT-2's names mapped to Llama's.

    Example: numbers(REFERENCE_MODELS["Llama-3 8B"])["d_head"] -> 128
    """
    d = dims(config)
    return dict(n_layers=d.L, n_heads=d.H, n_kv_heads=d.Hkv, d_head=d.Dh, d_model=d.D,
                context=config.get("max_position_embeddings", config.get("n_positions")))
