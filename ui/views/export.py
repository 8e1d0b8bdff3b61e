"""Figures and data out: every plotly figure saves as PNG or SVG from its own mode bar (plotly.js
as bundled by Streamlit draws both in the browser, offline), the capture of the learner's text
downloads as CSV or NPZ, and the final quiz as a printable report.

`install_modebar()` gives every `plotly_chart` call, present and future, the same mode bar
config (image format chosen in the sidebar, a file name from the chart's key), the language's
number format (ui.views.figures.localized) and an accessible name (`chart_name`: what the chart shows,
read by a screen reader) without touching the call sites: a call's own `config` still wins key by
key, its own `alt` wins over the name.
"""

from __future__ import annotations

import datetime as dt
import functools

import streamlit as st
from plotly.basedatatypes import BaseFigure
from streamlit.delta_generator import DeltaGenerator

from lib.course import i18n
from lib.course.quiz import Question, grade
from lib.learner import export as ex
from lib.model.capture import DEFAULT_MAX_TOKENS
from ui.shell.cache import get_capture
from ui.shell.core import lang, model, model_name, num, t, text
from ui.shell.downloads import built_when_clicked
from ui.views.figures import Spec, accessible_name, localized, title_text

FORMATS = ("png", "svg")
FORMAT_KEY = "app.image_format"


def modebar_config(key: str | None) -> dict:
    """Plotly's config for one chart: the camera button saves in the chosen format, at 2× for PNG."""
    fmt = st.session_state.get(FORMAT_KEY) or "png"
    name = (key or "figure").replace(".", "-")
    return {"displaylogo": False, "toImageButtonOptions": {"format": fmt if fmt in FORMATS else "png",
                                                           "filename": name, "scale": 2}}


def chart_name(spec: dict, key: str | None) -> str:
    """A chart's accessible name: its description in the language's labels (`chart.<key>`, or
    `chart.<key without its last _part>` for charts drawn in a loop; `{title}` in it is the chart's
    title) or else its title, then its axes."""
    about = None
    for k in (key, (key or "").rpartition("_")[0]):
        if k and i18n.has_label(lang(), f"chart.{k}"):
            about = t(f"chart.{k}", title=title_text(spec))
            break
    return accessible_name(spec, about, t("chart.axes")) or t("chart.unnamed")


def install_modebar() -> None:
    """Wrap plotly_chart once per process (idempotent): DeltaGenerator's method and st's own."""
    if getattr(DeltaGenerator.plotly_chart, "_itt_modebar", False):
        return
    original = DeltaGenerator.plotly_chart

    @functools.wraps(original)
    def plotly_chart(self, figure_or_data, *args, config=None, alt=None, **kwargs):
        if isinstance(figure_or_data, BaseFigure):  # the language's number format (Streamlit reads to_dict once anyway)
            figure_or_data = Spec(localized(figure_or_data.to_dict(), t("plot.separators")))
        # Every chart is named for a screen reader (Streamlit sets `alt` as the chart's accessible name).
        spec = figure_or_data.to_dict() if hasattr(figure_or_data, "to_dict") else dict(figure_or_data or {})
        return original(self, figure_or_data, *args, config=modebar_config(kwargs.get("key")) | (config or {}),
                        alt=alt or chart_name(spec, kwargs.get("key")), **kwargs)

    plotly_chart._itt_modebar = True
    DeltaGenerator.plotly_chart = plotly_chart
    st.plotly_chart = functools.partial(plotly_chart, st._main)


def _capture_file(kind: str):
    """Deferred download: built only when the learner clicks."""
    ss = st.session_state
    layer, head, k = int(ss.get("app.export.layer", 0)), int(ss.get("app.export.head", 0)), int(ss.get("app.export.k", 5))

    name, words, lm = model_name(), text(), model()  # read now: the callable runs outside the script

    def build() -> bytes | str:
        cap = get_capture(name, words, DEFAULT_MAX_TOKENS)
        d = ex.capture_data(cap, layer, head, k, lambda i: lm.tokenizer.decode([i]))
        return ex.to_csv(d) if kind == "csv" else ex.to_npz(d)

    return build


def sidebar_controls() -> None:
    """Sidebar: the figures' image format, and the capture of the learner's text to download."""
    info = model().info
    with st.sidebar.expander(t("export.title"), expanded=False):
        st.segmented_control(t("export.format"), FORMATS, default="png", key=FORMAT_KEY,
                             format_func=str.upper, help=t("export.format_help"))
        if not text().strip():
            st.caption(t("text.empty"))
            return
        ss = st.session_state
        ss.setdefault("app.export.layer", min(int(ss.get("attention.layer", info.n_layers // 2)), info.n_layers - 1))
        ss.setdefault("app.export.head", min(int(ss.get("attention.head", 0)), info.n_heads - 1))
        ss["app.export.layer"] = min(max(int(ss["app.export.layer"]), 0), info.n_layers - 1)
        ss["app.export.head"] = min(max(int(ss["app.export.head"]), 0), info.n_heads - 1)
        c1, c2, c3 = st.columns(3)
        c1.number_input(t("export.layer"), 0, info.n_layers - 1, step=1, key="app.export.layer")
        c2.number_input(t("export.head"), 0, info.n_heads - 1, step=1, key="app.export.head")
        c3.number_input(t("export.k"), 1, 50, 5, step=1, key="app.export.k")
        st.caption(t("export.what"))
        c1, c2 = st.columns(2)
        c1.download_button("CSV", data=built_when_clicked(_capture_file("csv"), "text/csv", "capture.csv"),
                           file_name="capture.csv", mime="text/csv", key="app.export.csv", on_click="ignore",
                           width="stretch")
        c2.download_button("NPZ", data=built_when_clicked(_capture_file("npz"), "application/octet-stream",
                                                          "capture.npz"),
                           file_name="capture.npz", mime="application/octet-stream", key="app.export.npz",
                           on_click="ignore", width="stretch")


def render() -> None:
    """After the page (one call from app.py)."""
    sidebar_controls()


def _answer_text(q: Question, response) -> str:
    if response is None or response == "":
        return ""
    if q.kind == "choice":
        return q.options[response] if isinstance(response, int) and 0 <= response < len(q.options) else ""
    return str(response)


def final_report(questions: list[Question], answers: dict) -> None:
    """The final quiz as a printable HTML report to hand in (one call from the final quiz page)."""
    from lib.course.quiz import question_key

    rows = []
    for q in questions:
        key = question_key(q)
        expected = grade(q, q.answer if q.kind == "numeric" else int(q.answer)).expected
        rows.append(ex.ReportRow(t(f"lesson.{q.lesson}.title"), q.prompt,
                                 _answer_text(q, st.session_state.get(f"final.{key}.answer")),
                                 answers.get(key), expected))
    labels = {k: t(f"report.{k}") for k in ("title", "name", "date", "score", "lesson", "question", "answer",
                                             "result", "expected", "right", "wrong", "unanswered")}
    correct = sum(bool(v) for v in answers.values())
    st.session_state.setdefault("app.report_name", st.session_state.get("app.learner", ""))
    name = st.text_input(t("report.name_input"), key="app.report_name", max_chars=80,
                         placeholder=t("report.name_placeholder"))
    page = ex.quiz_report(labels, rows, f"{num(correct)}/{num(len(questions))}",
                          dt.datetime.now().strftime("%Y-%m-%d %H:%M"), lang(), name=name)
    slug = ex.file_slug(name)
    st.download_button(t("report.download"), data=page.encode("utf-8"),
                       file_name=f"final-quiz-report-{slug}.html" if slug else "final-quiz-report.html",
                       mime="text/html", key="app.final_report", on_click="ignore", help=t("report.help"))
