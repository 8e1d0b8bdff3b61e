"""Check-yourself quizzes: one small form per question, the explanation after answering.

The first answer to each question is what counts (lib.course.quiz.record); a learner may try again to
learn, and sees the explanation every time.

An answer reruns only what it changes: the question's own section, the lesson's score and the
sidebar's progress (keyed fragments, named in one `st.rerun` from the Check button's callback),
never the lesson page around them. A lesson page costs tens to hundreds of milliseconds of the
server's CPU to run; a question's section, a few.
"""

from __future__ import annotations

import streamlit as st

from lib.course.quiz import Question, grade, lesson_score, load_bank, record
from ui.classroom import reports
from ui.learner.persist import PROGRESS_SECTION
from ui.shell import styles
from ui.shell.core import lang, num, t


def ask(q: Question, key: str, on_check=None, args: tuple = ()):
    """Draw one question inside a form; return (submitted, response) where response may be None.
    `on_check(*args)`, if given, is the Check button's callback (it runs before the script)."""
    with st.form(key=f"{key}.form", border=True):
        st.markdown(q.prompt)
        if q.kind == "choice":
            response = st.radio(t("quiz.choose"), options=range(len(q.options)), index=None,
                                format_func=lambda i: q.options[i], key=f"{key}.answer", label_visibility="collapsed")
        else:
            label = t("quiz.number") + (f" ({q.unit})" if q.unit else "")
            with st.container(key=f"{styles.DECIMAL_KEY}.{key}"):  # a phone offers its number keyboard
                response = st.text_input(label, key=f"{key}.answer")
        submitted = st.form_submit_button(t("quiz.check"), on_click=on_check, args=args)
    return submitted, response


def _grade(q: Question, response):
    """(the grade, None), or (None, the label of what is wrong with the response)."""
    if response is None or (isinstance(response, str) and not response.strip()):
        return None, "quiz.no_answer"
    try:
        return grade(q, response), None
    except ValueError:
        return None, "quiz.not_a_number"


def verdict(q: Question, response, key: str):
    """Grade a response, remember the verdict under `key`, and return it (None if unreadable)."""
    g, problem = _grade(q, response)
    if g is None:
        st.warning(t(problem))
        return None
    st.session_state[f"{key}.grade"] = g
    return g


def show(key: str) -> None:
    g = st.session_state.get(f"{key}.grade")
    if g is None:
        return
    # The verdict is said in words and marked by a symbol, not by the box's green or red alone.
    if g.correct:
        st.success(t("quiz.right") + " " + g.explanation, icon="✅")
    else:
        st.error(t("quiz.wrong", expected=g.expected) + " " + g.explanation, icon="❌")


def _check(q: Question, key: str, lesson_id: str) -> None:
    """The Check button's callback: grade, record the first answer, and rerun only the sections
    that show it (the question, the lesson's score, the sidebar's progress)."""
    ss = st.session_state
    g, problem = _grade(q, ss.get(f"{key}.answer"))
    if g is None:
        ss[f"{key}.problem"] = problem
    else:
        ss[f"{key}.grade"] = g
        if q.id not in ss.get("quiz.results", {}).get(lesson_id, {}):  # the first answer: the class hears it
            reports.queue_answer(lesson_id, q, ss.get(f"{key}.answer"), g.correct)
        ss["quiz.results"] = record(ss.get("quiz.results", {}), lesson_id, q.id, g.correct)
    st.rerun([_section(key), _section(f"quiz.{lesson_id}.score"), PROGRESS_SECTION])


def _section(key: str) -> str:
    """The fragment key of a quiz section (fragment keys and widget keys are kept apart)."""
    return f"section:{key}"


def _question(q: Question, key: str, lesson_id: str) -> None:
    ask(q, key, on_check=_check, args=(q, key, lesson_id))
    problem = st.session_state.pop(f"{key}.problem", None)
    if problem:
        st.warning(t(problem))
    show(key)


def _score(lesson_id: str) -> None:
    bank = load_bank(lang(), lesson_id)
    s = lesson_score(st.session_state.get("quiz.results", {}), lesson_id, bank)
    st.metric(t("quiz.score"), t("quiz.count", answered=num(s.answered), total=num(s.total), correct=num(s.correct)),
              help=t("quiz.score_help", answered=num(s.answered)))


def render_quiz(lesson_id: str) -> None:
    """The lesson's check-yourself section, with its score."""
    bank = load_bank(lang(), lesson_id)
    st.header(t("quiz.title"))
    st.caption(t("quiz.first_counts"))
    for q in bank:
        key = f"quiz.{lesson_id}.{q.id}"
        st.fragment(key=_section(key))(_question)(q, key, lesson_id)
    st.fragment(key=_section(f"quiz.{lesson_id}.score"))(_score)(lesson_id)
