"""The final quiz: questions drawn from every lesson's bank, a score, and a review of mistakes."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import random

import streamlit as st

from lib.course.quiz import draw_final, grade, load_bank, mistakes, question_key
from ui.classroom import reports
from ui.learner import quiz_widget, share
from ui.shell import core, nav
from ui.shell.core import num, t
from ui.views import export

PER_LESSON = 3  # 24 questions over eight lessons: a final quiz, not an exam


def new_quiz(seed: int | None = None) -> None:
    for key in [k for k in st.session_state if str(k).startswith("final.")]:
        del st.session_state[key]
    st.session_state["final.seed"] = random.randrange(1_000_000) if seed is None else seed


banks = {x.id: load_bank(core.lang(), x.id) for x in nav.LESSONS}
class_seed = st.session_state.get(share.CLASS_SEED_KEY)  # a teacher's link: one quiz for the whole class
if class_seed is not None and st.session_state.get("final.seed") != class_seed:
    new_quiz(class_seed)
seed = st.session_state.setdefault("final.seed", random.randrange(1_000_000))
questions = draw_final(banks, PER_LESSON, seed)
answers: dict = st.session_state.setdefault("final.answers", {})

st.title(t("final.title"))
bad = st.session_state.pop("app.class_seed_bad", None)
if bad is not None:
    st.warning(t("final.bad_seed", value=bad))
if class_seed is not None:
    st.info(t("final.class", seed=class_seed, n=num(len(questions))))
st.markdown(t("final.intro", n=num(len(questions)), lessons=num(len(banks))))
for q in questions:
    key = f"final.{question_key(q)}"
    st.caption(t(f"lesson.{q.lesson}.title"))
    submitted, response = quiz_widget.ask(q, key)
    if submitted:
        g = quiz_widget.verdict(q, response, key)
        if g is not None:
            answers.setdefault(question_key(q), g.correct)  # the first answer counts
    quiz_widget.show(key)

correct = sum(answers.values())
st.divider()
st.metric(t("final.score"), t("quiz.count", answered=num(len(answers)), total=num(len(questions)), correct=num(correct)),
          help=t("quiz.score_help", answered=num(len(answers))))
if len(answers) == len(questions):
    reports.report_final(correct, len(questions))  # to the class, if the learner joined one
    wrong = mistakes(answers, questions)
    st.success(t("final.done", correct=num(correct), total=num(len(questions))))
    if wrong:
        st.subheader(t("final.review"))
        for q in wrong:
            expected = grade(q, q.answer if q.kind == "numeric" else int(q.answer)).expected
            with st.expander(q.prompt):
                st.markdown(t("final.expected", expected=expected))
                st.markdown(q.explanation)
    else:
        st.balloons()
else:
    st.info(t("final.remaining", n=num(len(questions) - len(answers))))
export.final_report(questions, answers)  # a printable report to hand in
if class_seed is None:  # the class's quiz is not drawn again
    st.button(t("final.new"), key="final_new_quiz", on_click=new_quiz)
