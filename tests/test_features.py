"""lib.model.features: the named features of a model, on tiny random GPT-2, Llama and Gemma 3 configs and
on both built-in models, each checked against the same fact measured another way (the config,
the module's own output, the tokenizer's vocabulary)."""

import pytest
import torch

from lib.course import i18n
from lib.model import features as F


def _embedding_factor(lm) -> float:
    """What the embedding module multiplies a stored row by, measured by running it."""
    embed = lm.adapter.embed(lm.model)
    with torch.inference_mode():
        out = embed(torch.tensor([[5]]))[0, 0]
    return float(out.norm() / embed.weight[5].detach().norm())


def _oracle(lm) -> dict[str, bool]:
    """Features measured without lib.model.features' own reading."""
    cfg = lm.config
    n_kv = cfg.get("num_key_value_heads") or cfg.get("n_head") or cfg["num_attention_heads"]
    n_q = cfg.get("num_attention_heads") or cfg.get("n_head")
    vocab = lm.tokenizer.get_vocab()
    return {
        "single_kv_head": n_kv == 1 and n_q > 1,
        "grouped_kv": 1 < n_kv < n_q,
        "windowed": "sliding_attention" in (cfg.get("layer_types") or []),
        "scaled_embeddings": abs(_embedding_factor(lm) - 1.0) > 1e-4,
        "sentencepiece": "<0x41>" in vocab,  # byte fallback tokens are spelled <0xNN>
        "post_norms": any("post_feedforward" in n for n, _ in lm.adapter.blocks(lm.model)[0].named_children()),
        "learned_positions": lm.adapter.position_embedding(lm.model) is not None,
    }


def _check_against_oracle(lm) -> frozenset[str]:
    have = F.compute(lm)
    for name, expected in _oracle(lm).items():
        assert (name in have) == expected, (lm.info.name, name)
    assert have <= set(F.FEATURES), have - set(F.FEATURES)
    return have


def test_tiny_gpt2(tiny_gpt2):
    have = _check_against_oracle(tiny_gpt2)
    assert {"learned_positions", "biases", "layernorm", "byte_level_bpe"} <= have
    assert not have & {"gated_mlp", "post_norms", "rope", "norm_gain_offset", "builtin", "windowed"}


def test_tiny_llama(tiny_llama):
    have = _check_against_oracle(tiny_llama)
    assert {"rope", "grouped_kv", "gated_mlp", "swiglu", "byte_level_bpe"} <= have
    assert not have & {"geglu", "post_norms", "biases", "norm_gain_offset", "scaled_embeddings", "single_kv_head"}


def test_tiny_gemma(tiny_gemma):
    have = _check_against_oracle(tiny_gemma)
    assert {"post_norms", "single_kv_head", "windowed", "two_rope_bases", "scaled_embeddings", "gated_mlp",
            "geglu", "norm_gain_offset", "qk_norm"} <= have
    assert not have & {"swiglu", "biases", "layernorm", "grouped_kv"}


def test_norm_gain_offset_matches_the_module(tiny_gemma, tiny_llama):
    """Gemma's RMSNorm applies 1 + w: zeroing w gives a gain of exactly 1; Llama's applies w itself."""
    norm = tiny_gemma.adapter.final_norm(tiny_gemma.model)
    saved = norm.weight.detach().clone()
    try:
        with torch.no_grad():
            norm.weight.zero_()
        assert F._gain_offset(norm)
    finally:
        with torch.no_grad():
            norm.weight.copy_(saved)
    assert not F._gain_offset(tiny_llama.adapter.final_norm(tiny_llama.model))


def test_builtin_smollm2(real):
    have = _check_against_oracle(real)
    assert {"builtin", "grouped_kv", "swiglu", "byte_level_bpe", "rope", "tied_embeddings"} <= have
    assert not have & {"post_norms", "windowed", "sentencepiece", "uniform_row_lengths", "norm_gain_offset"}


def test_builtin_gemma(real_gemma):
    have = _check_against_oracle(real_gemma)
    assert {"builtin", "single_kv_head", "post_norms", "windowed", "two_rope_bases", "scaled_embeddings",
            "sentencepiece", "geglu", "norm_gain_offset", "qk_norm", "uniform_row_lengths"} <= have
    mean, std = F.row_spread(real_gemma)
    assert std / mean < F.UNIFORM_CV


def test_features_are_cached_per_model(tiny_llama):
    assert F.features(tiny_llama) is F.features(tiny_llama)


@pytest.mark.parametrize("conds,have,expected", [
    ("windowed", {"windowed"}, True), ("windowed", set(), False), ("!windowed", set(), True),
    ("windowed,!post_norms", {"windowed"}, True), ("windowed,!post_norms", {"windowed", "post_norms"}, False),
])
def test_satisfied(conds, have, expected):
    assert F.satisfied(conds, have) is expected


def test_variant_picks_the_first_matching_section():
    text = ("<!-- section: a -->\nplain\n<!-- section: a[single_kv_head] -->\nmqa\n"
            "<!-- section: a[grouped_kv] -->\ngqa\n<!-- section: b -->\nother\n")
    sections = i18n.parse_sections(text)
    assert i18n.variant(sections, "a", {"single_kv_head", "windowed"}) == "mqa"
    assert i18n.variant(sections, "a", {"grouped_kv"}) == "gqa"
    assert i18n.variant(sections, "a", set()) == "plain"
    assert i18n.variant(sections, "a", None) == "plain"
    assert i18n.variant_keys(sections, "a") == ["a", "a[single_kv_head]", "a[grouped_kv]"]


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_every_variant_names_known_features(lang):
    """A typo in a variant's feature list would silently never match."""
    keys = list(i18n.ui(lang)) + [k for lid in i18n.lesson_ids(lang) for k in i18n.lesson(lang, lid)]
    for key in keys:
        base, needs = i18n.split_variant(key)
        if needs is not None:
            assert F.known(needs), key
