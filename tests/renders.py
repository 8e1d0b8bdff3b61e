"""Every lesson page rendered once per test session for each (language, model, text), shared by the
AppTest files that only read what a page shows (tests/test_model_truth.py, tests/test_pages.py,
tests/test_pages_gemma.py, tests/test_page_chart_names.py).

A walk is one AppTest session: the app opens in the language with the text, switches to the built-in
model, then visits every page in turn; each visit is kept as a `Render` (plain strings, nothing that
reads the live session), so any test may read it in any order. The first test that asks for a walk
pays for it; later ones read it. Tests that click, type or check widget state start their own session.

Usage: `render = walk("en", GEMMA_MODEL, TEXT["en"])["pages/05_attention.py"]`
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from streamlit.testing.v1 import AppTest

from lib.course import i18n
from lib.model.models import DEFAULT_MODEL
from tests.apptest import chart_names, page_text, start

PAGES = ["pages/01_numbers.py", "pages/02_tokenization.py", "pages/03_embeddings.py", "pages/04_position.py",
         "pages/05_attention.py", "pages/06_block.py", "pages/07_sampling.py", "pages/08_kvcache.py",
         "pages/10_compare.py", "pages/99_final_quiz.py"]
TEXT = {"en": "The cat sat on the mat because it was tired.", "it": "Il gatto dormiva sul tappeto perché era stanco."}


@dataclass(frozen=True)
class Render:
    exception: tuple[str, ...]  # the page's exceptions (message and traceback), empty when it ran cleanly
    titles: tuple[str, ...]
    prose: str  # markdown, headings, captions, messages
    shown: str  # prose plus tables, metrics, widget labels and chart texts
    metrics: dict[str, str]
    missing: tuple[str, ...]  # label keys the page asked for that no assets/ui file defines
    downloads: tuple[str, ...]  # the labels of the download buttons (sidebar included)
    chart_names: dict[str, str]  # every chart's accessible name, by key (tests.apptest.chart_names)


def _chart_strings(spec: dict) -> list[str]:
    """The human-readable strings of a plotly figure (titles, names, axis labels, hover text)."""
    out: list[str] = []

    def walk(x, key=""):
        if isinstance(x, dict):
            for k, v in x.items():
                if k not in ("bdata", "z", "x", "y", "customdata"):
                    walk(v, k)
        elif isinstance(x, list):
            for v in x[:400]:
                walk(v, key)
        elif isinstance(x, str) and key in ("text", "name", "title", "hovertemplate", "ticktext"):
            out.append(x)

    walk(spec)
    return out


def _render(at: AppTest, missing: list[str]) -> Render:
    prose = page_text(at)
    parts = [prose]
    for df in at.dataframe:
        parts.append(df.value.to_string())
    for table in at.table:
        parts.append(table.value.to_string())
    metrics = {str(m.label): str(m.value) for m in at.metric}
    parts += [f"{k} {v}" for k, v in metrics.items()]
    for kind in ("radio", "selectbox", "slider", "select_slider", "toggle", "button", "expander", "tabs"):
        for w in at.get(kind):
            parts.append(str(getattr(w, "label", "")))
    for c in at.get("plotly_chart"):
        parts += _chart_strings(json.loads(c.proto.spec))
    for c in at.get("bidi_component"):
        if c.proto.component_name == "itt_live_chart":
            parts += _chart_strings(json.loads(json.loads(c.proto.json)["spec"]))
    downloads = tuple(str(w.proto.label) for w in at.get("download_button"))
    exception = tuple(f"{e.proto.type}: {e.proto.message}\n" + "\n".join(e.stack_trace) for e in at.exception)
    return Render(exception, tuple(str(t.value) for t in at.title), prose, "\n".join(parts), metrics,
                  tuple(sorted(set(missing))), downloads, chart_names(at))


_WALKS: dict[tuple[str, str, str], dict[str, Render]] = {}


def walk(lang: str, model: str, text: str) -> dict[str, Render]:
    """page -> what it shows, in `lang` with `model` loaded and `text` in the box; one session, once.

    While the walk runs, every label a page asks for is checked against the language's labels
    (`Render.missing`): a page asking for a label no file defines would show its raw key.
    """
    key = (lang, model, text)
    if key in _WALKS:
        return _WALKS[key]
    out: dict[str, Render] = {}
    missing: list[str] = []
    label, label_for = i18n.label, getattr(i18n, "label_for", None)

    def record(lang, key, *rest):
        shown = (label_for if rest else label)(lang, key, *rest)
        if key not in i18n.ui(lang):
            missing.append(key)
        return shown

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(i18n, "label", record)
        if label_for is not None:
            mp.setattr(i18n, "label_for", lambda lang, key, have: record(lang, key, have))
        at = start(lang, text=text)
        if model != DEFAULT_MODEL:
            at.radio(key="app.builtin").set_value(model)
            at.run()
            assert not at.exception, at.exception
        assert at.session_state["app.model"] == model
        for page in PAGES:
            missing.clear()
            at.switch_page(page)
            at.run()
            out[page] = _render(at, missing)
    _WALKS[key] = out
    return out
