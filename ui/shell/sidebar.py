"""The shared sidebar: language, the learner's text, the model, and progress over the course."""

from __future__ import annotations

import json

import streamlit as st

from lib.course import i18n
from lib.course.quiz import course_progress, load_bank
from lib.learner.progress_code import MAX_KEPT_TEXT
from lib.model.capture import DEFAULT_MAX_TOKENS
from lib.model.models import DEFAULT_MODEL, EMBEDDED_MODELS, is_embedded, terms_path
from ui.shell import nav, page_lang
from ui.shell.core import MAX_CHARS, display_name, lang, model_name, num, set_lang, t


def _request_typed() -> None:
    st.session_state["app.model_pending"] = st.session_state.get("app.model_request", "")


def _request_embedded() -> None:
    st.session_state["app.model_pending"] = st.session_state.get("app.builtin", DEFAULT_MODEL)


def _request_builtin() -> None:
    st.session_state["app.model_pending"] = st.session_state.get("app.builtin", DEFAULT_MODEL)


def chrome_css() -> str:
    """Streamlit's own English hints, hidden or said in the course's language: "Press Ctrl+Enter to
    apply" under text boxes (a caption says it instead, and a phone has no Ctrl), the uploader's
    "200MB per file • JSON, TXT" and its button's word."""
    choose = json.dumps(t("progress.choose_file"), ensure_ascii=False)
    return ("<style>[data-testid='InputInstructions'],[data-testid='stFileUploaderDropzoneInstructions']"
            "{display:none}[data-testid='stFileUploaderDropzone'] button{font-size:0;visibility:hidden}"
            f"[data-testid='stFileUploaderDropzone'] button::after{{content:{choose};font-size:0.875rem;"
            "visibility:visible}</style>")


def render() -> None:
    """Language switch, the learner's text and the model picker (before the page runs)."""
    current = lang()
    with st.sidebar:
        st.html(chrome_css())
        choice = st.segmented_control(t("sidebar.language"), options=list(i18n.LANGS),
                                      format_func=lambda x: {"it": "🇮🇹 Italiano", "en": "🇬🇧 English"}[x],
                                      default=current, key="app.lang_switch")
        if choice and choice != current:
            set_lang(choice)
            st.query_params["lang"] = choice
            st.rerun()
        if st.query_params.get("lang") != current:
            st.query_params["lang"] = current
        page_lang.render(current)  # <html lang> follows the course's language

        # The box's value is also its default: a browser that draws the box from a run it did not
        # finish (a lesson switched to at once) shows its default and sends it back; with an empty
        # default the learner's text was lost (docs/architecture.md, "The text box's default").
        st.text_area(t("sidebar.text"), value=st.session_state.get("app.text", t("text.example")),
                     key="app.text", max_chars=MAX_CHARS, height=110,
                     help=t("sidebar.text_help", n=num(DEFAULT_MAX_TOKENS)))
        st.caption(t("sidebar.text_apply"))
        if len(st.session_state.get("app.text", "")) > MAX_KEPT_TEXT:
            st.caption(t("sidebar.text_not_kept", n=num(MAX_KEPT_TEXT)))

        # The built-in models by name; the choice follows the model in use when that is built in.
        if is_embedded(model_name()):
            st.session_state["app.builtin"] = model_name()
        # The model picker and the hub box: useful later, not on a first visit.
        with st.expander(t("sidebar.advanced"), expanded=False):
            st.radio(t("sidebar.builtin"), options=list(EMBEDDED_MODELS), key="app.builtin",
                     format_func=lambda n: EMBEDDED_MODELS[n].label, on_change=_request_builtin,
                     help=t("sidebar.builtin_help"))
            terms = terms_path(model_name()) if is_embedded(model_name()) else None
            if terms is not None:  # the model's terms of use, as shipped in its package: no network needed
                st.download_button(t("sidebar.terms", name=EMBEDDED_MODELS[model_name()].label),
                                   data=_read(str(terms)), file_name=terms.name, mime="text/html", key="app.terms",
                                   width="stretch", on_click="ignore", help=t("sidebar.terms_help"))
            st.caption(t("sidebar.model", name=display_name(model_name())))
            st.text_input(t("sidebar.model_id"), key="app.model_request",
                                    placeholder="gpt2, HuggingFaceTB/SmolLM2-135M-Instruct",
                                    help=t("sidebar.model_help"))
            cols = st.columns(2)
            cols[0].button(t("sidebar.load"), key="app.load", on_click=_request_typed)
            cols[1].button(t("sidebar.embedded"), key="app.embedded", on_click=_request_embedded,
                           disabled=is_embedded(model_name()))


@st.cache_resource(max_entries=2, show_spinner=False)
def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def progress() -> None:
    """Quiz scores per lesson and over the course; drawn after the page, so it counts its answers
    (in the sidebar's progress section: ui.learner.persist.progress_section)."""
    current = lang()
    st.subheader(t("sidebar.progress"))
    if st.session_state.get("app.learner"):
        st.caption(t("sidebar.learner", name=st.session_state["app.learner"]))
    results = st.session_state.get("quiz.results", {})
    banks = {x.id: load_bank(current, x.id) for x in nav.LESSONS}
    per_lesson, overall = course_progress(results, banks)
    # One caption, a line per lesson: each element drawn costs the server a message on every answer.
    lines = []
    for x in nav.LESSONS:
        s = per_lesson[x.id]
        count = t("quiz.count", answered=num(s.answered), total=num(s.total), correct=num(s.correct))
        lines.append(f"{x.icon} {t(f'lesson.{x.id}.title')}: {count}")
    st.caption("  \n".join(lines))
    st.progress(overall.answered / overall.total if overall.total else 0.0,
                text=t("sidebar.overall", correct=num(overall.correct), total=num(overall.total)))
