"""The guided path: the lessons in the order a learner meets them, then the final quiz.

Only lessons that exist are listed (no placeholder pages).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ui.core import t


@dataclass(frozen=True)
class Lesson:
    id: str
    path: str
    icon: str


LESSONS: tuple[Lesson, ...] = (
    Lesson("numbers", "pages/01_numbers.py", "🔢"),
    Lesson("tokenization", "pages/02_tokenization.py", "🧩"),
    Lesson("embeddings", "pages/03_embeddings.py", "🧭"),
    Lesson("position", "pages/04_position.py", "🌀"),
    Lesson("attention", "pages/05_attention.py", "👀"),
    Lesson("block", "pages/06_block.py", "🧱"),
    Lesson("sampling", "pages/07_sampling.py", "🎲"),
    Lesson("kvcache", "pages/08_kvcache.py", "🧮"),
)
FINAL = Lesson("final", "pages/99_final_quiz.py", "🎓")
# Not a lesson (no quiz): the built-in models side by side, listed after the lessons.
COMPARE = Lesson("compare", "pages/10_compare.py", "⚖️")


def navigation():
    """st.navigation over the lessons, the models side by side and the final quiz, titles in the current
    language.

    One flat list, no sections: Streamlit 1.67 draws sections as `div`s inside the navigation's `ul`,
    which screen readers cannot read as a list (axe's `list` and `listitem` rules); flat, every page
    is an `li`. The order says the path: the lessons, then the comparison, then the final quiz."""
    lessons = [st.Page(x.path, title=t(f"lesson.{x.id}.title"), icon=x.icon, url_path=x.id, default=i == 0)
               for i, x in enumerate(LESSONS)]
    final = st.Page(FINAL.path, title=t("final.title"), icon=FINAL.icon, url_path=FINAL.id)
    compare = st.Page(COMPARE.path, title=t("compare.title"), icon=COMPARE.icon, url_path=COMPARE.id)
    return st.navigation([*lessons, compare, final], expanded=True)


def next_step(lesson_id: str) -> Lesson:
    ids = [x.id for x in LESSONS]
    i = ids.index(lesson_id)
    return LESSONS[i + 1] if i + 1 < len(LESSONS) else FINAL


def footer(lesson_id: str) -> None:
    """The end of every lesson: a link to the next step of the path."""
    st.divider()
    nxt = next_step(lesson_id)
    title = t("final.title") if nxt is FINAL else t(f"lesson.{nxt.id}.title")
    st.page_link(nxt.path, label=t("nav.next", title=title), icon=nxt.icon)
