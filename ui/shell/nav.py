"""The guided path: the lessons in the order a learner meets them, then the final quiz.

Only lessons that exist are listed (no placeholder pages). Other addresses a teacher may write
on the board lead to the same pages: lesson 1 by its name (`/numbers`, as the default page it lives
at `/`), and every page by its Italian name (`/attenzione`, `/blocco`...). They are hidden pages of
the navigation that app.py turns into the real one at once (`follow_alias`), query kept.
"""

from __future__ import annotations

import copy
import logging
import threading
from dataclasses import dataclass

import streamlit as st

from ui.shell.core import lang, page_hash, t

log = logging.getLogger(__name__)


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
# The course's words with a short definition each, for learners, after the path.
GLOSSARY = Lesson("glossary", "pages/97_glossary.py", "📖")
# For whoever brings the course to a class: links, times, machines, a quiz fixed for the class.
TEACHERS = Lesson("teachers", "pages/98_teachers.py", "🧑‍🏫")


# Address -> page id. Lesson 1's own id is here because the default page answers only at `/`.
ALIASES: dict[str, str] = {
    "numbers": "numbers", "numeri": "numbers", "tokenizzazione": "tokenization", "embedding": "embeddings",
    "posizione": "position", "posizioni": "position", "attenzione": "attention", "blocco": "block",
    "campionamento": "sampling", "cache": "kvcache", "cachekv": "kvcache", "cache-kv": "kvcache",
    "confronto": "compare", "finale": "final", "quiz": "final", "quiz-finale": "final",
    "docenti": "teachers", "insegnanti": "teachers", "per-chi-insegna": "teachers",
    "glossario": "glossary",
}
_HOME = "home"  # the default page's own path: never in an address (it answers at `/`), so `/numbers` is free


def navigation():
    """st.navigation over the lessons, the models side by side, the final quiz, the glossary and the
    teachers' page, titles in the current language.

    One flat list, no sections: Streamlit 1.67 draws sections as `div`s inside the navigation's `ul`,
    which screen readers cannot read as a list (axe's `list` and `listitem` rules); flat, every page
    is an `li`. The order says the path: the lessons, then the comparison, the final quiz, the
    glossary, and the teachers' page. Other addresses of a page (ALIASES) are hidden pages that app.py follows."""
    _quiet_page_not_found()
    return st.navigation([copy.copy(p) for p in _pages(lang())], expanded=True)


_built: dict[str, tuple] = {}  # language -> the pages, built once per process
_built_lock = threading.Lock()


def _pages(language: str) -> tuple:
    """The navigation's pages in `language`, built once per process (33 st.Page validations were
    4 % of a lesson's first run); each run navigates copies, since st.navigation marks the page it
    runs on the object."""
    with _built_lock:
        built = _built.get(language)
    if built is not None:
        return built
    lessons = [st.Page(x.path, title=t(f"lesson.{x.id}.title"), icon=x.icon, url_path=_HOME if i == 0 else x.id,
                       default=i == 0)
               for i, x in enumerate(LESSONS)]
    final = st.Page(FINAL.path, title=t("final.title"), icon=FINAL.icon, url_path=FINAL.id)
    compare = st.Page(COMPARE.path, title=t("compare.title"), icon=COMPARE.icon, url_path=COMPARE.id)
    words = st.Page(GLOSSARY.path, title=t("glossary.title"), icon=GLOSSARY.icon, url_path=GLOSSARY.id)
    teachers = st.Page(TEACHERS.path, title=t("teachers.title"), icon=TEACHERS.icon, url_path=TEACHERS.id)
    by_id = {x.id: p for x, p in zip(LESSONS, lessons)} | {FINAL.id: final, COMPARE.id: compare,
                                                            GLOSSARY.id: words, TEACHERS.id: teachers}
    aliases = []
    for path, target in ALIASES.items():
        alias = st.Page(_follow, title=by_id[target].title, url_path=path, visibility="hidden")
        alias.itt_target = by_id[target]
        aliases.append(alias)
    built = (*lessons, compare, final, words, teachers, *aliases)
    with _built_lock:
        return _built.setdefault(language, built)


NOT_FOUND_KEY = "app.page_not_found"


def _quiet_page_not_found() -> None:
    """An address that names no page opens the first lesson with a notice in the course's language
    (`not_found_notice`), instead of Streamlit's English "Page not found" modal: st.navigation's
    call that sends the modal is replaced, once per process, by one that notes the miss."""
    from streamlit.commands import navigation as st_navigation

    if getattr(st_navigation.send_page_not_found, "_itt_quiet", False):
        return

    def note_page_not_found(ctx) -> None:
        st.session_state[NOT_FOUND_KEY] = True

    note_page_not_found._itt_quiet = True
    st_navigation.send_page_not_found = note_page_not_found


def not_found_notice(page) -> None:
    """The notice for an address that named no page, on the page opened instead (`page`, this run's)
    until the learner goes to another: a second run of the same page (the progress the browser
    kept, coming back) keeps it."""
    ss = st.session_state
    if ss.get(NOT_FOUND_KEY) is True:  # just noted by this run's navigation
        ss[NOT_FOUND_KEY] = page.url_path
    elif NOT_FOUND_KEY in ss and ss[NOT_FOUND_KEY] != page.url_path:
        del ss[NOT_FOUND_KEY]
    if NOT_FOUND_KEY in ss:
        st.info(t("nav.not_found"), icon="🧭")


def _follow() -> None:
    """The body of an alias page, never run: app.py follows the alias first (follow_alias)."""


def follow_alias(page) -> None:
    """If `page` is another address of a page, switch to that page now, with the same query."""
    target = getattr(page, "itt_target", None)
    if target is not None:
        st.switch_page(target, query_params=st.query_params.to_dict())


SHOWN = "app.page_shown"  # (its page hash, its st.Page): the page the session's last full run drew


def note_shown(page) -> None:
    """In a full run, after st.navigation: `page` is the page this run draws (see `back_to_shown`)."""
    st.session_state[SHOWN] = (page_hash(), page)


def back_to_shown() -> None:
    """At the top of a section the browser reruns on its own (the progress store's ask, a
    follower): if this run names another page than the one the session's last full run drew,
    switch to the page drawn.

    Streamlit's frontend names the page it shows in every rerun it asks for until a new page's run
    starts. An ask the browser decided on just before a lesson's click, and sent just after it
    (traced under load: 18 ms after), reaches the server once the lesson's run has started;
    Streamlit then runs the section under the old page, after the lesson's run, and the browser,
    told of a run of another page, empties the lesson's main area for good (docs/architecture.md,
    "A lesson switched to at once"). Streamlit drops the ask's value with the change of page; the
    lesson's full run draws the page again, and the store with a new count, which the browser asks
    for again, naming the lesson's page."""
    shown = st.session_state.get(SHOWN)
    if shown is not None and page_hash() != shown[0]:
        log.info("a section's run named another page than the one shown; back to %s", shown[1].url_path or "/")
        st.switch_page(shown[1])


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
