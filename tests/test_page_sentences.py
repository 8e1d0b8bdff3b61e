"""Sentences the pages show, checked against the loaded model: each figure a sentence states is the
one the model's config, weights or GGUF give, rendered with the model whose text it is.

The pages are read from the walks of tests/renders.py (one AppTest session per language and model,
shared with the other files that only read what a page shows).
"""

from __future__ import annotations

import collections
import importlib
import re

import numpy as np
import pytest

from lib.course import i18n
from lib.course.quiz import format_number, load_bank
from lib.lessons import rope
from lib.lessons.bertviz_view import SIZE_TOKENS, weights_bytes
from lib.model.models import DEFAULT_MODEL, EMBEDDED_MODELS, GEMMA_MODEL
from tests.renders import TEXT, walk

MODELS = (DEFAULT_MODEL, GEMMA_MODEL)
BOTH = [(lang, model) for lang in i18n.LANGS for model in MODELS]


def _info(model: str):
    from ui.shell.cache import get_model

    return get_model(model).info


def _page(lang: str, model: str, page: str):
    render = walk(lang, model, TEXT[lang])[page]
    assert not render.exception, render.exception
    return render


@pytest.mark.parametrize("lang, model", BOTH)
def test_gemma_3_windows_are_told_by_size(lang, model):
    """Gemma 3 1B has a window of 512 like the 270M; only 4B, 12B and 27B use 1024."""
    prose = _page(lang, model, "pages/08_kvcache.py").prose
    assert not re.search(r"1B (to|a) 27B|da 1B a 27B", prose)
    line = next(x for x in prose.splitlines() if "27B" in x and "512" in x)
    assert "1B" in line and "512" in line and "4B" in line, line
    explanation = {q.id: q for q in load_bank(lang, "kvcache")}["window_growth"].explanation
    assert "1B" in explanation and "4B" in explanation


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_rotation_gives_both_rope_bases_of_a_model_with_two(lang):
    info = _info(GEMMA_MODEL)
    assert info.rope_theta_local and info.rope_theta_local != info.rope_theta
    prose = _page(lang, GEMMA_MODEL, "pages/04_position.py").prose
    rotation = prose[: prose.index("\n", prose.index(f"{format_number(info.context_length, lang)} "))]
    for base in (info.rope_theta, info.rope_theta_local):
        period = 2 * np.pi / rope.frequencies(info.d_head, base)[-1]
        assert format_number(base, lang) in rotation
        assert format_number(round(period), lang) in rotation, (base, round(period))
        share = format_number(round(100 * info.context_length / period, 1), lang)
        assert f"{share} %" in rotation, share


@pytest.mark.parametrize("lang, model", BOTH)
def test_bertviz_size_is_this_models(lang, model):
    info = _info(model)
    prose = _page(lang, model, "pages/05_attention.py").prose
    mb = format_number(round(weights_bytes(info.n_layers, info.n_heads, SIZE_TOKENS) / 1e6), lang)
    assert f"{mb} MB" in prose and "decine di megabyte" not in prose and "tens of megabytes" not in prose


def test_bertviz_size_estimate_is_the_real_pages_weight():
    """The estimate of a whole model view against the page bertviz really builds (3 layers)."""
    from lib.lessons.bertviz_view import model_view_html

    layers, heads, t = 3, 4, SIZE_TOKENS
    rows = np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None]
    view = model_view_html(np.broadcast_to(rows, (layers, heads, t, t)).astype(np.float32), [f"t{i}" for i in range(t)])
    assert 0.85 < weights_bytes(layers, heads, t) / view.n_bytes <= 1


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_attention_cost_prints_the_formula_it_shows(lang):
    """4·n²·d·L is what the text says the products cost, with the window told apart."""
    from lib.lessons.attention import attention_flops

    info = _info(GEMMA_MODEL)
    prose = _page(lang, GEMMA_MODEL, "pages/05_attention.py").prose
    line = next(x for x in prose.splitlines() if re.search(r"\d (million|milioni)", x))
    n = int(re.search(r"(\d+) (tokens|token)", line).group(1))
    width = info.n_heads * info.d_head
    full = format_number(round(attention_flops(n, width, info.n_layers) / 1e6, 1), lang)
    assert f"= {full} " in line, (full, line)
    assert format_number(info.sliding_window, lang) in line


def test_mask_step_tells_the_window_on_a_windowed_model():
    for lang in i18n.LANGS:
        assert "{window}" in i18n.label_for(lang, "attention.step.mask_shape", {"windowed"})


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_kv_table_shows_each_configuration_once(lang):
    """With one KV head the grouped row is the multi-query one: one row, marked as the model's own,
    not two rows with the same numbers and opposite trade-offs."""
    info = _info(GEMMA_MODEL)
    shown = _page(lang, GEMMA_MODEL, "pages/05_attention.py").shown
    rows = [x for x in shown.splitlines() if re.match(r"^\d+\s+Gemma", x)]
    assert len(rows) == len({info.n_heads, 1, info.n_kv_heads}) == 2, rows
    own = i18n.ui(lang)["attention.kv.own"].replace("{variant}", "").strip()
    assert sum(own in x for x in rows) == 1, rows


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_embeddings_intro_says_a_scaled_row_is_multiplied(lang):
    prose = _page(lang, GEMMA_MODEL, "pages/03_embeddings.py").prose
    intro = prose.split("\n\n")[1] if "\n\n" in prose else prose
    assert "Nothing is computed" not in prose and "Non si calcola niente" not in prose, intro
    plain = _page(lang, DEFAULT_MODEL, "pages/03_embeddings.py").prose
    assert "Nothing is computed" in plain or "Non si calcola niente" in plain


@pytest.fixture(scope="module")
def gemma_gguf_types(tmp_path_factory) -> dict[str, set[str]]:
    """Each block matrix of the built-in Gemma's GGUF -> its storage types (llama.cpp's names)."""
    from gguf import GGUFReader

    spec = EMBEDDED_MODELS[GEMMA_MODEL]
    folder = tmp_path_factory.mktemp("gguf")
    path = importlib.import_module(spec.package).assemble(folder / spec.gguf_file, overwrite=True)
    kinds = collections.defaultdict(set)
    for tensor in GGUFReader(path).tensors:
        if tensor.name.startswith("blk.") and tensor.name.endswith(".weight") and "norm" not in tensor.name:
            kinds[tensor.name.split(".")[2]].add(tensor.tensor_type.name)
    return dict(kinds)


# llama.cpp's matrix names -> the course's words for them in each language
MATRIX_WORDS = {"attn_q": ("query", "query"), "attn_k": ("key", "chiavi"), "attn_v": ("value", "valori"),
                "attn_output": ("attention output", "d'uscita dell'attenzione"), "ffn_gate": ("gate", "gate"),
                "ffn_up": ("up", "up"), "ffn_down": ("down", "down")}


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_gguf_mix_names_every_matrix_with_its_types(lang, gemma_gguf_types):
    prose = _page(lang, GEMMA_MODEL, "pages/01_numbers.py").prose
    section = next(x for x in prose.splitlines() if "Q4_K_M" in x and "Q8_0" in x)
    assert set(gemma_gguf_types) == set(MATRIX_WORDS)
    for kind, types in gemma_gguf_types.items():
        word = MATRIX_WORDS[kind][lang == "it"]
        assert re.search(rf"\b{re.escape(word)}\b", section), (kind, word)
        assert all(t in section for t in types), (kind, types)


def test_glossary_layer_is_not_identical():
    for lang in i18n.LANGS:
        layer = i18n.lesson(lang, "glossary")["layer"]
        assert "identical" not in layer and "uguali" not in layer
        assert "weights" in layer or "pesi" in layer


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_every_cache_format_is_defined_where_it_is_offered(lang):
    """The calculator offers bf16 before the lesson defines it, and fp8: each format offered has a
    help that defines it, and the page sends that help with its control (a Streamlit widget's help,
    or the labels of the lesson's browser view)."""
    import json

    from lib.model.arithmetic import CACHE_DTYPES, WEIGHT_DTYPES
    from tests.apptest import start

    labels = i18n.ui(lang)
    for key, formats in (("kvcache.cache_dtype_help", CACHE_DTYPES), ("kvcache.weight_dtype_help", WEIGHT_DTYPES)):
        assert all(re.search(rf"\b{name}\b", labels[key]) for name in formats), key
    at = start(lang, "pages/08_kvcache.py")
    sent = [w.proto.help for w in at.get("button_group")]
    sent += [json.dumps(json.loads(c.proto.json), ensure_ascii=False) for c in at.get("bidi_component") if c.proto.json]
    for key in ("kvcache.cache_dtype_help", "kvcache.weight_dtype_help"):
        text = labels[key]
        assert any(text in x or json.dumps(text, ensure_ascii=False)[1:-1] in x for x in sent), key
