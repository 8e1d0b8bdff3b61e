"""AppTest with the built-in Gemma 3 270M selected: every page renders without an exception, the
sidebar offers both built-in models by name, and switching keeps the learner's text and answers.

The real Gemma is loaded once (tests/conftest.py's set-up installs it; ui.shell.cache keeps it).
"""

import pytest

from lib.course import i18n
from lib.model.models import DEFAULT_MODEL, EMBEDDED_MODELS, GEMMA_MODEL
from tests.apptest import chart_keys, find_chart, page_text, start
from tests.renders import PAGES, TEXT, walk


def _with_gemma(lang: str, text: str | None = None):
    at = start(lang, text=text)
    at.radio(key="app.builtin").set_value(GEMMA_MODEL)
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["app.model"] == GEMMA_MODEL
    return at


def test_sidebar_offers_every_built_in_model_by_name():
    at = start("en")
    radio = at.radio(key="app.builtin")
    assert list(radio.options) == [m.label for m in EMBEDDED_MODELS.values()]
    assert radio.value == DEFAULT_MODEL  # SmolLM2 stays the default


def test_switching_keeps_text_and_answers():
    at = start("it", text="Il mio testo, da non perdere.")
    answers = {"numbers": {"q1": True}}
    at.session_state["quiz.results"] = answers
    at.radio(key="app.builtin").set_value(GEMMA_MODEL)
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["app.model"] == GEMMA_MODEL
    assert at.text_area(key="app.text").value == "Il mio testo, da non perdere."
    assert at.session_state["quiz.results"] == answers
    at.radio(key="app.builtin").set_value(DEFAULT_MODEL)
    at.run()
    assert at.session_state["app.model"] == DEFAULT_MODEL
    assert at.text_area(key="app.text").value == "Il mio testo, da non perdere."
    assert at.session_state["quiz.results"] == answers


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_with_gemma(page):
    """Read from the session that visits every page with Gemma (tests/renders.py), which
    tests/test_model_truth.py reads too: each page is rendered once for both files."""
    render = walk("en", GEMMA_MODEL, TEXT["en"])[page]
    assert not render.exception, render.exception
    assert render.titles, page


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_compare_page_reads_both_models(lang):
    from ui.shell.cache import get_model

    at = start(lang, "pages/10_compare.py")
    assert not at.exception, at.exception
    table = at.table[0].value
    smol, gemma = get_model(DEFAULT_MODEL).info, get_model(GEMMA_MODEL).info
    for info in (smol, gemma):
        col = [c for c in table.columns if c != table.columns[0]]
        assert any(f"{info.n_heads} × {info.d_head}" in " ".join(map(str, table[c])) for c in col)
    text = page_text(at)
    assert i18n.ui(lang)["compare.title"] in [x.value for x in at.title]
    assert len(chart_keys(at)) >= 3  # parameters, and one next-token chart per model
    assert "{" not in text


def test_attention_shows_the_window_on_a_long_text():
    """Past the window, the local layer's last token reads exactly the window; the global one all."""
    from ui.shell.cache import get_model

    info = get_model(GEMMA_MODEL).info
    at = _with_gemma("en")
    at.switch_page("pages/05_attention.py")
    at.run()
    at.button(key="differs.lengthen").click()  # the learner's text repeated past the window
    at.run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    read = [m.value for m in at.metric if m.label == i18n.ui("en")["differs.attention.read"]]
    assert read[0] == f"{info.sliding_window:,}" and int(read[1].replace(",", "")) > info.sliding_window, metrics
    assert "Checked on your text" in page_text(at)


def test_kvcache_hybrid_measured_equals_formula():
    at = _with_gemma("it")
    at.switch_page("pages/08_kvcache.py")
    at.run()
    at.toggle(key="differs.kvcache_run").set_value(True)
    at.run()
    assert not at.exception, at.exception
    assert any(s.value.startswith("Uguali byte per byte") for s in at.success), [s.value for s in at.success]


def test_compare_writes_tokens_as_the_lessons_do():
    """The tokenizations and the next-token bars use the lessons' labels: an accented letter split in
    two bytes shows as <C3><A8>, a newline as ↵, and never the replacement character."""
    at = start("it", page="pages/10_compare.py", text="Il gatto si è seduto.\nPoi")
    codes = [c.value for c in at.code]
    assert codes and not any("\ufffd" in c for c in codes)
    assert any("<C3>" in c and "<A8>" in c for c in codes)  # SmolLM2's byte-level pieces of «è»
    for j in range(len(codes)):
        fig = find_chart(at, f"compare.next_{j}")
        assert fig is not None
        labels = fig["data"][0]["y"]
        assert all(label and "\ufffd" not in label and "\n" not in label for label in labels), labels
