"""How a lesson's quiz speaks (AppTest): the right answer quoted after a wrong one, the answers
given counted apart from the right ones, and a word that only the first answer counts."""

from __future__ import annotations

import pytest

from lib.course import i18n
from lib.course.quiz import load_bank
from tests.apptest import start


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_a_wrong_answer_quotes_the_right_one_and_is_counted_as_answered(lang):
    labels = i18n.ui(lang)
    at = start(lang)
    assert labels["quiz.first_counts"] in [c.value for c in at.caption]
    choice = next(q for q in load_bank(lang, "numbers") if q.kind == "choice")
    wrong = (int(choice.answer) + 1) % len(choice.options)
    at.radio(key=f"quiz.numbers.{choice.id}.answer").set_value(wrong)
    at.button(key=f"FormSubmitter:quiz.numbers.{choice.id}.form-{labels['quiz.check']}").click()
    at.run()
    assert not at.exception, at.exception
    right = choice.options[int(choice.answer)]
    quoted = i18n.fill(labels["quiz.wrong"], expected=right)
    assert any(e.value.startswith(quoted) for e in at.error), [e.value for e in at.error]
    total = len(load_bank(lang, "numbers"))
    count = i18n.fill(labels["quiz.count"], answered="1", total=str(total), correct="0")
    assert count in [m.value for m in at.metric]
    sidebar = [line for c in at.sidebar.caption for line in c.value.split("  \n")]
    assert any(line.endswith(count) for line in sidebar), sidebar
