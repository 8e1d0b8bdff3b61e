"""count_params against the model transformers builds from the same config (oracle)."""

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM

from lib.model.arithmetic import count_params

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
    from lib.lessons.reference import REFERENCE_MODELS
    from lib.model.arithmetic import param_breakdown

    for cfg in REFERENCE_MODELS.values():
        parts = param_breakdown(cfg)
        assert sum(parts.values()) == count_params(cfg)
        assert all(v >= 0 for v in parts.values())
    gpt2 = param_breakdown(REFERENCE_MODELS["GPT-2 small"])
    assert gpt2["embeddings"] == 50257 * 768 and gpt2["positions"] == 1024 * 768 and gpt2["lm_head"] == 0


def test_kv_cache_textbook_values():
    from lib.lessons.reference import REFERENCE_MODELS
    from lib.model.arithmetic import kv_cache_bytes

    llama8 = REFERENCE_MODELS["Llama-3 8B"]
    assert kv_cache_bytes(llama8, 1) == 128 * 1024  # 2 · 32 layers · 8 KV heads · 128 · 2 bytes
    assert kv_cache_bytes(llama8, 8192) == 2**30
    assert kv_cache_bytes(llama8, 8192, batch=100) == 100 * 2**30
    assert kv_cache_bytes(llama8, 10, dtype_bytes=4) == 2 * kv_cache_bytes(llama8, 10)


def test_reference_figures_quoted_in_the_lesson_are_the_computed_ones():
    """The lesson text quotes KV-cache sizes; they must be what the app computes (both languages)."""
    from lib.course import i18n
    from lib.lessons.reference import REFERENCE_MODELS, numbers
    from lib.model.arithmetic import kv_cache_bytes

    for lang, sep in (("en", "."), ("it", ",")):
        text = i18n.lesson(lang, "numbers")["reference"]
        for name, cfg in REFERENCE_MODELS.items():
            gqa = kv_cache_bytes(cfg, 8192) / 1e9
            assert f"{gqa:.2f}".replace(".", sep) in text, (lang, name)
            n = numbers(cfg)
            if n["n_kv_heads"] < n["n_heads"]:
                mha = kv_cache_bytes(dict(cfg, num_key_value_heads=n["n_heads"]), 8192) / 1e9
                assert (f"{mha:.2f}".replace(".", sep) in text) or (f"{mha:.1f}".replace(".", sep) in text), (lang, name)


# ---------------------------------------------------------------------------------------------
# The KV-cache lesson's extension: MLA and MoE counts, layer kinds, cache, FLOPs, memory, speed.

from transformers.cache_utils import get_layer_types_and_kwargs  # noqa: E402

from lib.lessons.reference import MORE_MODELS, PUBLISHED_PARAMS, REFERENCE_MODELS  # noqa: E402
from lib.model import arithmetic as A  # noqa: E402

LLAMA8 = REFERENCE_MODELS["Llama-3 8B"]
TINY_DEEPSEEK = dict(vocab_size=300, hidden_size=64, intermediate_size=96, moe_intermediate_size=32,
                     num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=16,
                     q_lora_rank=24, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=8, n_routed_experts=4,
                     num_experts_per_tok=2, n_shared_experts=1, first_k_dense_replace=1, n_group=1, topk_group=1)


@pytest.mark.parametrize("kwargs", [TINY_DEEPSEEK, dict(TINY_DEEPSEEK, q_lora_rank=None, n_shared_experts=2)])
def test_deepseek_v3_count_equals_transformers(kwargs):
    cfg = AutoConfig.for_model("deepseek_v3", **kwargs)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(cfg)
    assert A.count_params(cfg.to_dict()) == sum(p.numel() for p in model.parameters())
    parts = A.param_breakdown(cfg.to_dict())
    assert sum(parts.values()) == A.count_params(cfg.to_dict()) and min(parts.values()) >= 0
    # Active parameters: everything but the experts a token does not visit.
    experts = {n: p.numel() for n, p in model.named_parameters() if ".mlp.experts." in n}
    unused = sum(experts.values()) * (1 - kwargs["num_experts_per_tok"] / kwargs["n_routed_experts"])
    assert A.active_params(cfg.to_dict()) == A.count_params(cfg.to_dict()) - unused


@pytest.mark.parametrize("name", sorted(PUBLISHED_PARAMS))
def test_counts_match_the_model_cards(name):
    cfg = {**REFERENCE_MODELS, **MORE_MODELS}[name]
    total, active = PUBLISHED_PARAMS[name]
    assert A.count_params(cfg) == pytest.approx(total, rel=0.02)
    assert A.active_params(cfg) == pytest.approx(active, rel=0.02)


def test_dims_names_the_missing_or_impossible_field():
    with pytest.raises(A.ConfigError) as e:
        A.dims({"hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 10})
    assert e.value.field == "num_attention_heads" and e.value.problem == "missing"
    with pytest.raises(A.ConfigError) as e:
        A.dims(dict(LLAMA8, num_hidden_layers=0))
    assert e.value.field == "num_hidden_layers" and e.value.problem == "invalid"
    with pytest.raises(A.ConfigError):
        A.kv_cache_bytes(dict(LLAMA8, num_key_value_heads="eight"), 10)
    # A multimodal config.json keeps the language model in text_config.
    assert A.dims({"model_type": "gemma3", "text_config": MORE_MODELS["Gemma 3 4B"]}).Dh == 256


# transformers' own reading of a config's layer structure is the oracle for ours.
LAYER_CASES = [
    ("llama", dict(SMALL)),
    ("mistral", dict(SMALL, sliding_window=8)),
    ("mistral", dict(SMALL, sliding_window=None)),
    ("gemma3_text", dict(SMALL, num_hidden_layers=12, sliding_window=8)),  # default pattern 6
    ("gemma3_text", dict(SMALL, num_hidden_layers=7, sliding_window=8, sliding_window_pattern=2)),
    ("qwen2", dict(SMALL, sliding_window=8, use_sliding_window=True, max_window_layers=1)),
    ("qwen2", dict(SMALL, sliding_window=131072, use_sliding_window=False)),
    ("qwen2", dict(SMALL, sliding_window=131072)),  # the flag defaults to off
    ("qwen3_next", dict(SMALL, num_hidden_layers=8)),  # linear attention in 3 layers of 4
    ("qwen3_next", dict(SMALL, num_hidden_layers=6, full_attention_interval=3)),
]


@pytest.mark.parametrize("model_type,kwargs", LAYER_CASES)
def test_layer_kinds_read_configs_as_transformers_does(model_type, kwargs):
    raw = dict(kwargs, model_type=model_type)  # what a config.json on the Hub may hold
    cfg = AutoConfig.for_model(model_type, **kwargs)
    types, layer_kwargs = get_layer_types_and_kwargs(cfg)
    expect = [("sliding", kw["sliding_window"]) if t == "sliding_attention"
              else ("linear", None) if t == "linear_attention" else ("full", None)
              for t, kw in zip(types, layer_kwargs)]
    assert A.layer_kinds(raw) == expect
    assert A.layer_kinds(cfg.to_dict()) == expect


def test_kv_cache_honours_windows_mla_and_linear_layers():
    window = dict(LLAMA8, sliding_window=1024, sliding_window_pattern=6)
    kinds = [k for k, _ in A.layer_kinds(window)]
    assert kinds.count("full") == 5 and kinds.count("sliding") == 27
    # Until the window fills, a local layer costs what a full one does; after, it stops growing.
    assert A.kv_cache_bytes(window, 1000) == A.kv_cache_bytes(LLAMA8, 1000)
    assert A.kv_cache_bytes(window, 5000) - A.kv_cache_bytes(window, 4000) == 1000 * 5 * 2 * 8 * 128 * 2
    ds = MORE_MODELS["DeepSeek-V3"]
    assert A.kv_cache_bytes(ds, 1) == 61 * (512 + 64) * 2
    assert A.kv_cache_bytes(ds, 7, batch=3, dtype_bytes=1) == 21 * 61 * 576
    mistral = MORE_MODELS["Mistral 7B"]
    assert A.kv_cache_bytes(mistral, 10**6) == A.kv_cache_bytes(mistral, 4096)
    assert A.kv_bytes_per_token(mistral) == 0 and A.kv_bytes_per_token(mistral, context=4096) == 128 * 1024
    with pytest.raises(ValueError):
        A.kv_cache_bytes(LLAMA8, -1)


def test_seed_001_figures_from_its_configuration():
    """Every figure of seed 001 (d 4096, 32 layers, 32 heads, 8 KV heads, d_head 128, d_ff 14336, V 128,256)."""
    from lib.lessons.kvcache import variant_config

    n = A.count_params(LLAMA8)
    assert round(A.params_per_layer(LLAMA8) / 1e6, 1) == 218.1
    assert round(n / 1e9, 2) == 8.03
    assert round(A.rule_of_thumb_params(LLAMA8) / 1e9, 1) == 6.4
    parts = A.param_breakdown(LLAMA8)
    assert round(100 * parts["mlp"] / 32 / A.params_per_layer(LLAMA8)) == 81 and round(100 * parts["mlp"] / n) == 70
    assert A.kv_bytes_per_token(LLAMA8) == 128 * 1024
    assert round(A.kv_cache_bytes(LLAMA8, 100_000) / 1e9) == 13
    assert round(A.kv_cache_bytes(variant_config(LLAMA8, "mha"), 100_000) / 1e9) == 52
    mla = variant_config(LLAMA8, "mla")
    assert A.kv_bytes_per_token(mla) == 36 * 1024 and round(A.kv_cache_bytes(mla, 100_000) / 1e9, 1) == 3.7
    assert A.kv_bytes_per_token(MORE_MODELS["DeepSeek-V3"]) == 576 * 61 * 2
    assert round(A.kv_bytes_per_token(MORE_MODELS["DeepSeek-V3"]) / 1e3) == 70
    local = variant_config(LLAMA8, "sliding")
    assert round(A.kv_cache_bytes(local, 100_000) / 1e9, 1) == 2.2
    hybrid = variant_config(LLAMA8, "hybrid")
    assert A.kv_bytes_per_token(hybrid) == 32 * 1024 and round(A.kv_cache_bytes(hybrid, 100_000) / 1e9, 1) == 3.3
    assert round(A.forward_flops_per_token(LLAMA8) / 1e9) == 16
    assert round(A.forward_flops_per_token(LLAMA8, context=100_000) / 1e9) == 68
    assert round(A.attention_flops(LLAMA8, 2048) / 1e12, 1) == 2.2
    assert round(A.attention_flops(LLAMA8, 2048, causal=True) / 1e12, 1) == 1.1
    assert A.training_flops(8e9, 15e12) == pytest.approx(7.2e23)
    assert round(A.training_days(7.2e23, 1000, 400e12, 0.4)) == 52
    weights = A.weight_bytes(n, "bf16")
    assert round(weights / 1e9) == 16
    step = A.decode_step(weights, 0, 1, 3e12)
    assert round(step.tokens_per_s, -1) == 190 and round(step.seconds * 1e3, 1) == 5.4
    users = A.decode_step(weights, A.kv_cache_bytes(LLAMA8, 100_000), 64, 3e12)
    assert round(users.cache_bytes / 1e9, -1) == 840 and round(100 * users.cache_share) == 98
    assert A.training_memory(n)["total"] / 1e9 == pytest.approx(128, rel=0.01)
    assert A.training_memory(8e9, "muon")["total"] == 96e9
    assert A.training_memory(8e9, gpus=8)["total"] == 16e9
    moe = A.dense_vs_moe(400e9, 25e9)
    assert moe.flops_per_token == 50e9 and moe.memory_bytes == 800e9 and round(100 * moe.active_share) == 6
    # The logits alone: 2 · 4096 · 128,256 ≈ 1.05 GFLOP against ≈ 14 for the 32 layers.
    assert round(2 * parts["lm_head"] / 1e9, 2) == 1.05
    assert round(2 * (parts["attention"] + parts["mlp"]) / 1e9) == 14


def test_attention_term_counts_what_each_layer_attends_to():
    # Causal pairs are exactly n(n+1)/2; the FLOPs per token grow linearly with the context.
    assert A.attention_flops(LLAMA8, 3, causal=True) == A.attention_flops(LLAMA8, 1) * 6
    f = [A.forward_flops_per_token(LLAMA8, context=c) for c in (0, 1000, 2000)]
    assert f[2] - f[1] == f[1] - f[0] == 4 * 32 * 1000 * 4096
    local = dict(LLAMA8, sliding_window=1024)  # every layer local: the cost stops at the window
    assert A.forward_flops_per_token(local, 10**6) == A.forward_flops_per_token(local, 1024)


def test_memory_and_speed_invariants():
    assert A.bytes_per_param("int4") == 4.5 / 8 == A.bytes_per_param("", bits=4, group=32, scale_bits=16)
    assert [A.weight_bytes(1e9, d) for d in ("fp32", "bf16", "fp8")] == [4e9, 2e9, 1e9]
    with pytest.raises(ValueError):
        A.bytes_per_param("fp12")
    stages = [A.training_memory(1e9, gpus=4, zero_stage=s)["total"] for s in range(4)]
    assert stages == sorted(stages, reverse=True) and stages[0] == 16e9 and stages[3] == 4e9
    # Batching: the weights are read once per step, so the total rate grows, each user's shrinks.
    one, many = A.decode_step(16e9, 1e9, 1, 1e12), A.decode_step(16e9, 1e9, 16, 1e12)
    assert many.tokens_per_s > one.tokens_per_s and many.per_user < one.per_user
    # With a compute ceiling a big batch stops being memory-bound.
    big = A.decode_step(16e9, 0, 10_000, 1e12, flops_per_token=16e9, peak_flops=1e15)
    assert not big.memory_bound and big.seconds == big.compute_seconds
    assert A.users_that_fit(80e9, 16e9, 1.07e9) == 59 and A.users_that_fit(10e9, 16e9, 1e9) == 0
    assert A.users_that_fit(80e9, 16e9, 0) is None
