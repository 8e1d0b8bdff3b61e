"""Every lesson page, rendered with each built-in model in both languages, says only true things
about the model that is loaded: no raw label key and no unfilled placeholder on the page, no plural
agreeing with the number 1, the prose's KV bytes per token equal to the page's own metric, a share
link that opens the same built-in model again.

Each page is rendered once per (language, model), in one session per pair (the models are loaded
once for the whole test run by ui.shell.cache); the checks below read those renders, which
tests/renders.py keeps for the other page files too.
"""

from __future__ import annotations

import re
import urllib.parse

import pytest
from streamlit.testing.v1 import AppTest

from lib.course import i18n
from lib.model.adapters import ADAPTERS
from lib.model.models import DEFAULT_MODEL, EMBEDDED_MODELS, GEMMA_MODEL
from tests.apptest import TIMEOUT
from tests.renders import PAGES, TEXT, Render, walk

BUILT_IN = [DEFAULT_MODEL, GEMMA_MODEL]


@pytest.fixture(scope="module")
def renders() -> dict[tuple[str, str, str], Render]:
    """(lang, model, page) -> what the page shows; one session per (lang, model), shared with the
    other page files through tests/renders.py."""
    out = {}
    for lang in i18n.LANGS:
        for model in BUILT_IN:
            for page, render in walk(lang, model, TEXT[lang]).items():
                assert not render.exception, (lang, model, page, render.exception)
                out[(lang, model, page)] = render
    return out


CASES = [(lang, model, page) for lang in i18n.LANGS for model in BUILT_IN for page in PAGES]
IDS = [f"{lang}-{EMBEDDED_MODELS[m].slug.split('-')[0]}-{p.split('/')[1][:-3]}" for lang, m, p in CASES]


def _namespaces(lang: str) -> set[str]:
    return {k.split(".")[0] for k in i18n.ui(lang) if "." in k}


def _module_names(model: str) -> set[str]:
    """The loaded model's module paths ("model.norm"), which tables show on purpose."""
    from ui.shell.cache import get_model

    return {name for name, _ in get_model(model).model.named_modules()}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_no_raw_label_key_is_shown(renders, case):
    """Neither a label the page asked for and no file defines, nor anything shaped like a label key."""
    lang, model, _ = case
    assert not renders[case].missing, f"labels missing from assets/ui: {renders[case].missing}"
    keys = re.compile(r"(?<![\w./`{-])(?:%s)\.[a-z0-9_]+(?:\.[a-z0-9_]+)*(?![\w(/`.{])"
                      % "|".join(sorted(_namespaces(lang))))
    found = sorted(set(keys.findall(renders[case].shown)) - _module_names(model))
    assert not found, f"label keys shown instead of their text: {found}"


# Braces that are meant to be shown: plotly's own %{x} in hover templates, and the generic layer
# index of a module path in the block's path table and diagram ("model.layers.{l}.mlp", "({l} = layer)").
_MEANT = re.compile(r"%\{[^}]*\}|\.\{l\}\.|\(\{l\} = ")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_no_unfilled_placeholder_is_shown(renders, case):
    found = sorted(i18n.placeholders(_MEANT.sub(".", renders[case].shown)))
    assert not found, f"placeholders left unfilled: {found}"


# Plural words that must never follow the number 1 (at most one word in between: "1 KV heads").
_PLURALS = {
    "en": r"heads|groups|layers|questions|parameters|answers|keys|values|tokens|pairs|dimensions|bytes",
    "it": r"teste|gruppi|strati|domande|parametri|risposte|chiavi|valori|coppie|dimensioni|parole",
}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_no_plural_agrees_with_one(renders, case):
    lang = case[0]
    pattern = re.compile(r"(?<![\d.,\w])1 (?:[\w/]+ )?(?:%s)\b" % _PLURALS[lang])
    found = sorted(set(pattern.findall(renders[case].shown)))
    assert not found, f"plural after the number 1: {found}"


def _number(text: str, lang: str) -> float:
    """The first number of a text written the way `lang` writes numbers (1.024,5 or 1,024.5)."""
    match = re.search(r"\d[\d.,]*", text)
    assert match, text
    raw = match.group(0).rstrip(".,")
    raw = raw.replace(".", "").replace(",", ".") if lang == "it" else raw.replace(",", "")
    return float(raw)


_PER_TOKEN = re.compile(r"(\d[\d.,]*) KiB per token")


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("model", BUILT_IN, ids=lambda m: EMBEDDED_MODELS[m].slug.split("-")[0])
def test_kv_bytes_per_token_in_the_prose_equal_the_metric(renders, lang, model):
    """Every "KiB per token" the lesson fills in from the loaded model equals the measured metric;
    figures typed in the lesson file (Llama-3 8B, DeepSeek-V3) are about other models."""
    r = renders[(lang, model, "pages/08_kvcache.py")]
    per_token = i18n.label(lang, "kvcache.measure.per_token").split("{")[0]  # "Per token (float32)"
    metric = _number(next(v for k, v in r.metrics.items() if k.startswith(per_token)), lang)
    typed = {_number(m, lang) for text in i18n.lesson(lang, "kvcache").values() for m in _PER_TOKEN.findall(text)}
    stated = [_number(m, lang) for m in _PER_TOKEN.findall(r.prose)]
    filled = [x for x in stated if x not in typed]
    assert filled and all(x == metric for x in filled), (stated, typed, metric)


@pytest.mark.parametrize("model", BUILT_IN, ids=lambda m: EMBEDDED_MODELS[m].slug.split("-")[0])
def test_a_share_link_opens_the_same_built_in_model(model):
    """The link the share dialog builds for a built-in model, opened in a new session, loads it."""
    from lib.learner import share_link as sl

    query, _ = sl.build("en", None if model == DEFAULT_MODEL else model, "Hi", {}, {})
    assert urllib.parse.parse_qs(urllib.parse.urlencode(query))  # a real query string
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["app.model"] == model
    assert not at.warning, [w.value for w in at.warning]


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_every_adapter_value_has_a_label(lang):
    """Activation, norm and positional kind of every adapter are shown through an arch.* label."""
    labels = i18n.ui(lang)
    for a in ADAPTERS:
        for value in (a.activation, a.norm, a.positional):
            assert f"arch.{value}" in labels, (a.family, value)


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("model", BUILT_IN, ids=lambda m: EMBEDDED_MODELS[m].slug.split("-")[0])
def test_a_model_with_terms_of_use_offers_them_offline(renders, lang, model):
    """The sidebar offers the terms file shipped in the model's package exactly when there is one."""
    from lib.model.models import terms_path

    label = i18n.fill(i18n.label(lang, "sidebar.terms"), name=EMBEDDED_MODELS[model].label)
    for page in PAGES:
        shown = label in renders[(lang, model, page)].downloads
        assert shown == (terms_path(model) is not None), (page, renders[(lang, model, page)].downloads)
    if model == GEMMA_MODEL:
        assert terms_path(model) is not None and terms_path(model).stat().st_size > 0
