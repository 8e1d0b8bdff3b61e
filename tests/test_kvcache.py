"""lib/lessons/kvcache: the formula against the bytes of real caches (live model and tiny GQA, sliding-window,
local/global and MLA models), the variants, the printed table, the calculator, timings and inputs."""

from __future__ import annotations

import math
import threading
from types import SimpleNamespace

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM

from lib.model.arithmetic import count_params, kv_cache_bytes, layer_kinds
from lib.lessons.kvcache import (
    VARIANTS,
    Clamped,
    cache_variants,
    calculate,
    check_seed_table,
    clamp,
    measure_cache,
    memory_bandwidth,
    model_weight_bytes,
    time_prefill_decode,
    variant_config,
)
from lib.lessons.reference import MORE_MODELS, REFERENCE_MODELS, SEED_000_KV_TABLE

LLAMA8 = REFERENCE_MODELS["Llama-3 8B"]
SMALL = dict(vocab_size=300, hidden_size=64, intermediate_size=96, num_hidden_layers=6, num_attention_heads=4,
             num_key_value_heads=2, head_dim=16)


def _bare(model_type: str, **kwargs):
    """A tiny random model of a type without an adapter, wrapped just enough for measure_cache."""
    cfg = AutoConfig.for_model(model_type, **kwargs)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").eval()
    return SimpleNamespace(model=model, config=cfg.to_dict(), lock=threading.RLock())


# ------------------------------------------------------------------------------- the real cache


def test_live_model_cache_equals_the_formula(real):
    m = measure_cache(real, 37)
    assert m.equal and m.measured_bytes == m.formula_bytes and m.window_offset_bytes == 0
    assert m.dtype == "float32" and m.dtype_bytes == 4 and m.cache_class == "DynamicCache"
    assert m.per_token == 2 * 30 * 3 * 64 * 4 == 45 * 1024
    assert len(m.layers) == real.info.n_layers
    assert all(x.key_shape == (1, 3, 37, 64) == x.value_shape for x in m.layers)
    # Grouped-query attention: 9 query heads read 3 KV heads, a third of the classic cache.
    mha = kv_cache_bytes(dict(real.config, num_key_value_heads=9), 37, dtype_bytes=4)
    assert mha == 3 * m.measured_bytes


@pytest.mark.parametrize("fixture", ["tiny_llama", "tiny_gpt2"])
def test_tiny_adapter_models_cache_equals_the_formula(fixture, request):
    loaded = request.getfixturevalue(fixture)
    for tokens in (1, 19):
        m = measure_cache(loaded, tokens)
        assert m.equal and m.measured_bytes == kv_cache_bytes(loaded.config, tokens, dtype_bytes=4)


@pytest.mark.parametrize("model_type,kwargs,n_local", [
    ("mistral", dict(SMALL, sliding_window=8), 6),  # every layer local
    ("gemma3_text", dict(SMALL, num_hidden_layers=12, sliding_window=8), 10),  # 5 local : 1 global
    ("qwen2", dict(SMALL, sliding_window=8, use_sliding_window=True, max_window_layers=2), 4),
])
def test_sliding_window_cache_equals_the_formula(model_type, kwargs, n_local):
    loaded = _bare(model_type, **kwargs)
    assert sum(k == "sliding" for k, _ in layer_kinds(loaded.config)) == n_local
    per_layer_token = 2 * 2 * 16 * 4  # K and V, 2 KV heads, Dh 16, fp32
    short = measure_cache(loaded, 5)  # the window is not full yet: every layer holds every token
    assert short.window_offset_bytes == 0 and short.measured_bytes == short.formula_bytes
    assert short.measured_bytes == kv_cache_bytes(dict(loaded.config, layer_types=None, sliding_window=None,
                                                       use_sliding_window=False), 5, dtype_bytes=4)
    long = measure_cache(loaded, 30)
    assert long.equal
    # transformers keeps W - 1 = 7 tokens in a full local layer (the next token's own key is the 8th).
    assert long.window_offset_bytes == n_local * per_layer_token
    held = [x.key_shape[2] for x in long.layers]
    assert held == [7 if k == "sliding" else 30 for k, _ in layer_kinds(loaded.config)]
    assert long.measured_bytes < kv_cache_bytes(dict(loaded.config, layer_types=["full_attention"] * len(held),
                                                     sliding_window=None), 30, dtype_bytes=4)


def test_mla_cache_equals_the_formula():
    """DeepSeek-V3's attention in transformers caches the compressed latent and the RoPE key."""
    loaded = _bare("deepseek_v3", vocab_size=300, hidden_size=64, intermediate_size=96, moe_intermediate_size=32,
                   num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=16,
                   q_lora_rank=24, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=8, n_routed_experts=4,
                   num_experts_per_tok=2, n_shared_experts=1, first_k_dense_replace=1, n_group=1, topk_group=1)
    m = measure_cache(loaded, 11)
    assert m.equal and m.measured_bytes == 2 * (16 + 8) * 11 * 4
    # Classic keys and values for 4 heads would be 2 · 4 · (8 + 8) numbers per layer per token.
    assert m.measured_bytes < 2 * 2 * 4 * 16 * 11 * 4
    assert math.prod(loaded.model.model.layers[0].self_attn.kv_a_proj_with_mqa.weight.shape[:1]) == 16 + 8


def test_model_weight_bytes(real):
    assert model_weight_bytes(real) == count_params(real.config) * 4 == 134_515_008 * 4


# ------------------------------------------------------------------------------- variants and table


def test_variants_of_the_8b_at_100k():
    rows = {v.kind: v for v in cache_variants(LLAMA8, 100_000)}
    assert tuple(rows) == VARIANTS
    gb = {k: round(v.bytes / 1e9, 1) for k, v in rows.items()}
    assert gb == {"mha": 52.4, "mqa": 1.6, "gqa": 13.1, "mla": 3.7, "sliding": 2.2, "hybrid": 3.3}
    assert rows["gqa"].saving == 4 and rows["mqa"].saving == 32
    assert rows["sliding"].full_layers == 5 and rows["hybrid"].full_layers == 8
    assert rows["gqa"].bytes == kv_cache_bytes(LLAMA8, 100_000)
    # Short contexts: a window changes nothing until it fills.
    short = {v.kind: v for v in cache_variants(LLAMA8, 1000)}
    assert short["sliding"].bytes == short["gqa"].bytes
    with pytest.raises(ValueError):
        variant_config(LLAMA8, "sparse")


def test_seed_000_table_rechecked_with_its_own_formula():
    rows = {r.name: r for r in check_seed_table(SEED_000_KV_TABLE, {"GPT-2 small": 12, "Llama-3 8B": 8,
                                                                      "Llama-3 70B": 8})}
    assert rows["Llama-3 8B"].all_heads == 4 * 2**30 and rows["Llama-3 8B"].kv_heads == 2**30
    assert not rows["Llama-3 8B"].agrees
    assert rows["Llama-3 70B"].all_heads == 20 * 2**30 and rows["Llama-3 70B"].agrees
    assert round(rows["Claude-style @ 100K"].all_heads / 1e9) == 157 and not rows["Claude-style @ 100K"].agrees
    assert round(rows["Claude-style @ 100K"].ratio, 1) == 2.1
    assert not rows["GPT-2 small"].agrees  # 0.30 GB, not 0.1
    # The 70B row scales linearly: 4 × the context, 4 × the cache.
    assert kv_cache_bytes(dict(LLAMA8, num_hidden_layers=80, num_attention_heads=64, num_key_value_heads=64,
                               hidden_size=8192), 32768) == 80 * 2**30


# ------------------------------------------------------------------------------- calculator and inputs


def test_calculator_adds_weights_and_every_users_cache():
    n = count_params(LLAMA8)
    c = calculate(LLAMA8, n, 8192, 10, 2, 2.0, 80e9)
    assert c.total == c.weights + 10 * c.cache_per_user and c.cache_per_user == 2**30
    assert c.users_fit == 59 and c.fits and c.cache_per_token == 128 * 1024
    # users_fit is the largest batch that fits.
    assert calculate(LLAMA8, n, 8192, c.users_fit, 2, 2.0, 80e9).fits
    assert not calculate(LLAMA8, n, 8192, c.users_fit + 1, 2, 2.0, 80e9).fits
    linear = variant_config(LLAMA8, "hybrid")
    assert calculate(linear, n, 8192, 1, 2, 2.0, 8e9).users_fit == 0  # the weights alone do not fit


@pytest.mark.parametrize("value,expect,changed", [(5, 5, False), (0, 1, True), (-3, 1, True), (1e12, 100, True),
                                                  (None, 1, True), ("abc", 1, True), (float("nan"), 1, True),
                                                  (float("inf"), 100, True), (7.6, 7, True)])
def test_clamp(value, expect, changed):
    c = clamp(value, 1, 100)
    assert c.value == expect and c.changed == changed
    assert c.given is value


def test_clamp_keeps_floats():
    assert clamp(0.25, 0.01, 1.0, integer=False) == Clamped(0.25, 0.25, False)
    assert clamp(3, 0.01, 1.0, integer=False) == Clamped(1.0, 3, True)


# ------------------------------------------------------------------------------- time


def test_prefill_and_decode_timing_on_a_tiny_model(tiny_llama):
    rows = time_prefill_decode(tiny_llama, [4, 500], new_tokens=3)
    assert [r.prompt_tokens for r in rows] == [4, 128 - 3]  # cut to the model's context
    assert all(r.prefill_s > 0 and r.decode_s > 0 for r in rows)


def test_timing_uses_the_clock_it_is_given(tiny_llama):
    ticks = iter(range(100))
    rows = time_prefill_decode(tiny_llama, [4], new_tokens=2, clock=lambda: float(next(ticks)))
    assert rows[0].prefill_s == 1.0 and rows[0].decode_s == 0.5  # one tick per pass, two decode steps


def test_memory_bandwidth():
    ticks = iter([0.0, 0.5, 1.0, 1.25])
    bw = memory_bandwidth(8 * 2**20, repeats=2, clock=lambda: next(ticks))
    assert bw.best_s == 0.25 and bw.bytes_per_s == 2 * 8 * 2**20 / 0.25
    assert memory_bandwidth(2**20, repeats=1).bytes_per_s > 0


def test_the_learners_text_is_repeated_and_the_bytes_do_not_care(tiny_llama):
    from lib.lessons.kvcache import _ids, text_ids

    assert _ids(100, 5, 0, [7, 8]).tolist() == [[7, 8, 7, 8, 7]]
    assert text_ids(tiny_llama, "  \n", 10) == [] and len(text_ids(tiny_llama, "ciao " * 1000, 10)) == 10
    ids = text_ids(tiny_llama, "Ciao! 🐱", 50)
    assert len(ids) == len("Ciao! 🐱".encode())  # the byte-level test tokenizer: one id per byte
    a, b = measure_cache(tiny_llama, 33, token_ids=ids), measure_cache(tiny_llama, 33, seed=5)
    assert a.measured_bytes == b.measured_bytes == a.formula_bytes


# ------------------------------------------------------------------------------- text and quiz agree with lib


@pytest.mark.parametrize("lang,sep", [("en", "."), ("it", ",")])
def test_figures_quoted_in_the_lesson_are_the_computed_ones(lang, sep):
    from lib.course import i18n
    from lib.model import arithmetic as A

    text = "\n".join(i18n.lesson(lang, "kvcache").values())

    def has(x: float, digits: int, unit: str = "") -> None:
        figure = f"{x:.{digits}f}".replace(".", sep) + unit
        assert figure in text, (lang, figure)

    rows = {r.name: r for r in check_seed_table(SEED_000_KV_TABLE, {"GPT-2 small": 12, "Llama-3 8B": 8,
                                                                      "Llama-3 70B": 8})}
    has(rows["GPT-2 small"].all_heads / 1e9, 2, " GB")
    has(rows["Llama-3 8B"].all_heads / 1e9, 2, " GB")
    has(rows["Llama-3 8B"].kv_heads / 1e9, 2, " GB")
    has(rows["Llama-3 70B"].kv_heads / 1e9, 2, " GB")
    has(rows["Claude-style @ 100K"].all_heads / 1e9, 0, " GB")
    n = count_params(LLAMA8)
    has(A.params_per_layer(LLAMA8) / 1e6, 1)
    has(n / 1e9, 2)
    has(A.rule_of_thumb_params(LLAMA8) / 1e9, 1)
    has(A.training_days(A.training_flops(8e9, 15e12), 1000, 400e12, 0.4), 0, " ")
    step = A.decode_step(16e9, 0, 1, 3e12)  # the text's round 16 GB of weights
    has(step.seconds * 1e3, 1, " ms")
    assert f"{round(step.tokens_per_s, -1):.0f} " in text
    users = A.decode_step(A.weight_bytes(n), kv_cache_bytes(LLAMA8, 100_000), 64, 3e12)
    has(round(users.cache_bytes / 1e9, -1), 0, " GB")
    has(100 * users.cache_share, 0, "%")
    has(A.kv_bytes_per_token(LLAMA8) / 1024, 0, " KiB")
    has(A.kv_bytes_per_token(MORE_MODELS["DeepSeek-V3"]) / 1024, 0, " KiB")  # one unit per token: KiB
    has(A.training_memory(8e9)["total"] / 1e9, 0, " GB")
    has(A.training_memory(8e9, "muon")["total"] / 1e9, 0, " GB")


def test_numeric_quiz_answers_are_the_computed_ones():
    from lib.course.quiz import load_bank
    from lib.model import arithmetic as A

    bank = {q.id: q for q in load_bank("en", "kvcache")}
    seventy = dict(LLAMA8, num_hidden_layers=80, num_attention_heads=64, num_key_value_heads=64, hidden_size=8192)
    assert bank["per_token_8b"].answer == A.kv_bytes_per_token(LLAMA8) / 1024
    assert bank["seventy_at_32k"].answer == pytest.approx(
        20 * kv_cache_bytes(seventy, 32768) / kv_cache_bytes(seventy, 8192))
    assert bank["overstated_by"].answer == kv_cache_bytes(seventy, 1) / kv_cache_bytes(REFERENCE_MODELS["Llama-3 70B"], 1)
    assert bank["live_bytes_per_token"].answer == A.kv_bytes_per_token(
        dict(num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3, head_dim=64, hidden_size=576,
             vocab_size=49152), dtype_bytes=4)
    q = bank["bandwidth_ceiling"]
    assert abs(A.decode_step(16e9, 0, 1, 3e12).tokens_per_s - q.answer) <= q.rel_tolerance * q.answer
    q = bank["training_days"]
    assert abs(A.training_days(7.2e23, 1000, 400e12, 0.4) - q.answer) <= q.rel_tolerance * q.answer
    assert bank["adam_bytes"].answer == A.training_memory(1.0)["total"]
