"""The teachers' page and the class's final quiz (AppTest)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from lib.course import i18n
from tests.apptest import TIMEOUT, page_text, start


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_the_teachers_page_lists_every_lesson_with_its_link_and_time(lang):
    from ui.shell import nav

    at = start(lang, "pages/98_teachers.py")
    assert not at.exception, at.exception
    labels = i18n.ui(lang)
    assert labels["teachers.title"] in [x.value for x in at.title]
    links = at.code[0].value.splitlines()
    assert len(links) == len(nav.LESSONS)
    assert all(f"lang={lang}" in line and " min)" in line for line in links)
    assert "/attention?" in links[4] and "/final?" in at.code[-1].value and "seed=1" in at.code[-1].value
    assert len(at.table) == 1  # the sizing table
    assert "ITT_HUB_MODELS=off" in page_text(at)


def _class_quiz(seed: str, lang: str = "it") -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page("pages/99_final_quiz.py")
    at.query_params["seed"] = seed
    at.run()
    assert not at.exception, at.exception
    return at


def _questions(at: AppTest) -> list[str]:
    return [b.key.rsplit(".form-", 1)[0] for b in at.button if b.key and b.key.startswith("FormSubmitter:final.")]


def test_a_class_link_gives_everyone_the_same_quiz_with_no_reroll():
    one, two = _class_quiz("4242"), _class_quiz("4242")
    assert len(_questions(one)) == 24 and _questions(one) == _questions(two)
    assert one.session_state["final.seed"] == 4242
    assert "final_new_quiz" not in [b.key for b in one.button]
    assert i18n.fill(i18n.ui("it")["final.class"], seed="4242", n="24") in [x.value for x in one.info]
    other = _class_quiz("77")
    assert _questions(other) != _questions(one)
    assert _questions(_class_quiz("4242", "en")) == _questions(one)  # the same questions in English


def test_a_bad_class_seed_keeps_the_learners_own_quiz_with_a_notice():
    at = _class_quiz("drop table")
    assert "final_new_quiz" in [b.key for b in at.button]
    assert any(w.value.startswith(i18n.ui("it")["final.bad_seed"].split("«")[0]) for w in at.warning)
