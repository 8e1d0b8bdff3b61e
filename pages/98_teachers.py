"""For teachers: lesson links to copy (at the address the class will use), suggested times, the
machines a class needs, a checklist before the class, and a final quiz fixed for the whole class."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import pandas as pd
import streamlit as st

from lib.classroom import teaching as T
from lib.course.quiz import load_bank
from ui.classroom import teacher
from ui.shell import core, lesson, nav
from ui.shell.core import num, t

FINAL_SEED_MAX = 999_999
text = lesson.sections("teachers")
language = core.lang()
paths = {x.id for x in (*nav.LESSONS, nav.FINAL, nav.COMPARE, nav.GLOSSARY, nav.TEACHERS)} | set(nav.ALIASES)
root = T.app_root(st.context.url or "", paths)

st.title(t("teachers.title"))
teacher.render(root)  # a live class: its code, QR code and dashboard
lesson.show(text, "intro")

st.header(t("teachers.links.header"))
if T.is_local(root):
    st.warning(t("teachers.local", root=root))
lesson.show(text, "links", root=root)
rows, links = [], []
shown = T.shown_words(language)  # the words each page shows with the default model
for i, x in enumerate(nav.LESSONS):
    words = shown["words"][x.id]
    questions = len(load_bank(language, x.id))
    minutes = T.lesson_minutes(words, questions)
    link = T.class_link(root, "" if i == 0 else x.id, language)
    title = t(f"lesson.{x.id}.title")
    rows.append((f"{x.icon} {title}", minutes, words, questions, link))
    links.append(f"{i + 1}. {title} ({num(minutes)} min): {link}")
for x, title, questions, live in ((nav.COMPARE, t("compare.title"), 0, T.MINUTES_LIVE),
                                  (nav.FINAL, t("final.title"), shown["final_questions"], 0)):
    words = shown["words"][x.id]
    rows.append((f"{x.icon} {title}", T.lesson_minutes(words, questions, live), words, questions,
                 T.class_link(root, x.id, language)))
st.code("\n".join(links), language=None, wrap_lines=True)

st.header(t("teachers.durations.header"))
lesson.show(text, "durations", wpm=num(T.WORDS_PER_MINUTE), live=num(T.MINUTES_LIVE),
            final_n=num(shown["final_questions"]))
cols = [t(f"teachers.col.{k}") for k in ("lesson", "minutes", "words", "questions", "link")]
st.dataframe(pd.DataFrame(rows, columns=cols), hide_index=True, key="teachers.durations",
             column_config={cols[4]: st.column_config.LinkColumn(cols[4])})
st.caption(t("teachers.total", minutes=num(sum(r[1] for r in rows)), n=num(len(nav.LESSONS)),
             final_n=num(shown["final_questions"])))

st.header(t("teachers.sizing.header"))
run, both = T.CLASS_RUN, T.BOTH_MODELS_RUN
lesson.show(text, "sizing", when=run.when, learners=num(run.learners), cores=num(run.cores), replicas=num(run.replicas),
            peak=num(run.peak_gb), per_replica=num(T.gb_per_replica(run), 1), script=run.script, doc=run.doc,
            gb_gemma=num(both.peak_gb), both_when=both.when, both_script=both.script, both_doc=both.doc)
sizes = [T.sizing(n) for n in (5, 10, 20, 30, 60)]
st.table(pd.DataFrame([(num(s.learners), num(s.cores), num(s.replicas), num(s.memory_gb), num(s.memory_gb_gemma))
                       for s in sizes],
                      columns=[t(f"teachers.sizing.{k}") for k in ("learners", "cores", "replicas", "memory",
                                                                   "memory_gemma")]).set_index(t("teachers.sizing.learners")))

st.header(t("teachers.checklist.header"))
lesson.show(text, "checklist")

st.header(t("teachers.final.header"))
lesson.show(text, "final")
st.session_state.setdefault("teachers.seed", 1)
seed = st.number_input(t("teachers.final.seed"), 1, FINAL_SEED_MAX, step=1, key="teachers.seed",
                       help=t("teachers.final.seed_help"))
st.code(T.class_link(root, nav.FINAL.id, language, seed=int(seed)), language=None, wrap_lines=True)
