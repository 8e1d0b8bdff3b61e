"""The glossary: the course's words for learners, each with a short definition and the lesson
where it is taught, in the language of the course, with a search box."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import streamlit as st

from lib.course import learner_glossary as glossary
from ui.shell import lesson, nav
from ui.shell.core import num, t

text = lesson.sections("glossary")
lessons = {f"lesson_{x.id}": t(f"lesson.{x.id}.title") for x in nav.LESSONS}

st.title(t("glossary.title"))
lesson.show(text, "intro")
every = glossary.entries(text)
query = st.text_input(t("glossary.search"), key="glossary.search", help=t("glossary.search_help"))
found = glossary.search(every, query or "")
if not found:
    st.info(t("glossary.none", query=query.strip()))
else:
    if (query or "").strip():
        st.caption(t("glossary.count", n=num(len(found)), total=num(len(every))))
    for entry in found:
        with st.container(key=f"glossary.term.{entry.id}"):
            lesson.show(text, entry.id, **lessons)
