"""Streamlit AppTest for every page, in both languages, including bad input.

AppTest runs the real app script in-process (the model is loaded once per test session through
st.cache_resource). Paths resolve against this file.
"""

import pytest

from lib.course import i18n
from lib.course.quiz import load_bank
from lib.model.models import DEFAULT_MODEL
from tests.apptest import chart_keys, check_answer, page_text, start
from tests.renders import TEXT, walk

PAGES = ["pages/01_numbers.py", "pages/99_final_quiz.py"]


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_in_both_languages(lang, page):
    """Read from the session that visits every page (tests/renders.py), shared with
    tests/test_model_truth.py: each page is rendered once for both files."""
    render = walk(lang, DEFAULT_MODEL, TEXT[lang])[page]
    assert not render.exception, render.exception
    labels = i18n.ui(lang)
    title = labels["lesson.numbers.title"] if "numbers" in page else labels["final.title"]
    assert title in render.titles


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_first_lesson_shows_the_live_model(lang):
    at = start(lang)
    labels = i18n.ui(lang)
    text = page_text(at)
    # The lesson's own sections, filled with the live numbers, in this language.
    assert i18n.lesson(lang, "numbers")["intro"].splitlines()[0][:40] in text
    assert "576" in text and "{n_layers}" not in text
    assert labels["numbers.params_equal"].split("{n}")[0].strip() in text
    tables = [x.value for x in at.table]  # HTML tables: headers never cut short (ui.shell.styles.table)
    live = tables[0]
    assert "9 × 64 = 576 ✓" in live.iloc[:, 1].tolist()
    ref = tables[1]
    assert len(ref) == 4  # three reference models and the live one
    assert len(chart_keys(at)) >= 2
    assert len(at.get("iframe")) == 1  # the bertviz view
    assert at.slider(key="numbers.layer").value == 15


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_quiz_numeric_and_choice_answers_are_graded(lang):
    at = start(lang)
    bank = load_bank(lang, "numbers")
    numeric = next(q for q in bank if q.kind == "numeric")
    choice = next(q for q in bank if q.kind == "choice")
    at.text_input(key=f"quiz.numbers.{numeric.id}.answer").set_value(str(numeric.answer))
    check_answer(at, "numbers", numeric.id, lang)
    assert any(numeric.explanation[:30] in s.value for s in at.success)
    at.run()  # the whole page again
    assert any(numeric.explanation[:30] in s.value for s in at.success)  # the verdict stays
    at.radio(key=f"quiz.numbers.{choice.id}.answer").set_value((int(choice.answer) + 1) % len(choice.options))
    check_answer(at, "numbers", choice.id, lang)
    at.run()
    assert any(choice.explanation[:30] in e.value for e in at.error)
    assert at.session_state["quiz.results"]["numbers"] == {numeric.id: True, choice.id: False}
    # Garbage in a numeric answer: a message, not a traceback, and nothing recorded.
    other = [q for q in bank if q.kind == "numeric"][1]
    at.text_input(key=f"quiz.numbers.{other.id}.answer").set_value("a lot 🤷")
    check_answer(at, "numbers", other.id, lang)
    assert not at.exception
    assert any(x.value == i18n.ui(lang)["quiz.not_a_number"] for x in at.warning)
    assert other.id not in at.session_state["quiz.results"]["numbers"]


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("text,expect", [("", "text.empty"), ("   \n ", "text.empty"),
                                         ("🐱🚀🇮🇹 😀", None), ("parola " * 7200, "text.truncated")])
def test_bad_text_gets_a_message_not_a_traceback(lang, text, expect):
    at = start(lang, text=text)
    labels = i18n.ui(lang)
    if expect == "text.empty":
        assert any(x.value == labels["text.empty"] for x in at.info)
        assert len(at.get("iframe")) == 0
    elif expect == "text.truncated":
        assert any(labels["text.truncated"].split("{")[0] in x.value for x in at.warning)
        assert len(at.get("iframe")) == 1
    else:
        assert len(at.get("iframe")) == 1


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("model_id,code", [("https://evil.example/model", "invalid_id"), ("", "invalid_id"),
                                           ("nobody-xyz/not-a-model", None)])
def test_bad_model_id_keeps_the_current_model(lang, model_id, code, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no network here: the hub path must fail cleanly
    at = start(lang)
    at.text_input(key="app.model_request").set_value(model_id)
    at.button(key="app.load").click()
    at.run()
    assert not at.exception
    assert len(at.error) == 1
    if code:
        assert at.error[0].value == i18n.fill(i18n.ui(lang)[f"model.error.{code}"], name=model_id)
    assert at.session_state["app.model"].startswith("embedded:")
    assert "576" in page_text(at)  # the lesson still runs on the built-in model


@pytest.mark.parametrize("lang", ["it"])  # one full walk (24 reruns); both languages render above
def test_final_quiz_scores_and_reviews_mistakes(lang):
    at = start(lang, page="pages/99_final_quiz.py")
    labels = i18n.ui(lang)
    keys = [b.key for b in at.button if b.key and b.key.startswith("FormSubmitter:final.")]
    assert len(keys) >= 6
    lessons = {k.removeprefix("FormSubmitter:final.").split(":")[0] for k in keys}
    from ui.shell.nav import LESSONS

    assert lessons == {x.id for x in LESSONS}  # every lesson of the path contributes
    n_numeric = 0
    for key in keys:
        base = key.removeprefix("FormSubmitter:").rsplit(".form-", 1)[0]
        widget = at.get("radio") and next((r for r in at.radio if r.key == f"{base}.answer"), None)
        if widget is not None:
            widget.set_value(0)
        else:
            at.text_input(key=f"{base}.answer").set_value("-1")  # never right: every answer is positive
            n_numeric += 1
        at.button(key=key).click()
        at.run()
        assert not at.exception
    assert any(s.value == i18n.fill(labels["final.done"], correct=str(sum(at.session_state["final.answers"].values())),
                                     total=str(len(keys))) for s in at.success)
    assert len(at.session_state["final.answers"]) == len(keys)
    # Every numeric answer was wrong, so the review lists at least those, each with its explanation.
    assert len(at.expander) >= n_numeric > 0


@pytest.mark.parametrize("fixture,expect_row", [("tiny_gpt2", "arch.learned"), ("tiny_llama", "arch.rope")])
def test_lesson_runs_on_other_architectures(fixture, expect_row, request, monkeypatch):
    """A Hugging Face id loads through lib.model.models._load_hub; here it hands back a tiny model."""
    from lib.model import models

    tiny = request.getfixturevalue(fixture)
    name = f"tests/{fixture.replace('_', '-')}"
    monkeypatch.setattr(models, "_load_hub", lambda n, progress: tiny if n == name else None)
    at = start("en")
    at.text_input(key="app.model_request").set_value(name)
    at.button(key="app.load").click()
    at.run()
    assert not at.exception, at.exception
    assert len(at.error) == 0
    assert at.session_state["app.model"] == name
    live = at.table[0].value
    values = live.iloc[:, 1].tolist()
    assert i18n.ui("en")[expect_row] in values
    assert f"{tiny.info.n_heads} × {tiny.info.d_head} = {tiny.info.d_model} ✓" in values
    assert len(at.get("iframe")) == 1
    # Back to the built-in model with one click.
    at.button(key="app.embedded").click()
    at.run()
    assert at.session_state["app.model"].startswith("embedded:") and not at.exception
