"""Two real architectures side by side: SmolLM2-135M (Llama) and Gemma 3 270M (gemma3_text).

Every figure is read from the two loaded models; the learner's text goes through both tokenizers
and both models."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import streamlit as st

from ui.lessons.compare import figures
from ui.lessons.compare import sections as view
from ui.shell import core, styles
from ui.shell.core import t

st.title(t("compare.title"))
st.markdown(t("compare.intro"))

models = view.builtin_models()
archs = [view.measured(name) for name in models]

st.header(t("compare.numbers.header"))
st.markdown(t("compare.numbers.text"))
left, right = st.columns([3, 2])
df = view.table(archs)
styles.table(df, "compare.table", where=left)
fig_labels = {"embedding": t("compare.fig.embedding"), "rest": t("compare.fig.rest"), "params": t("compare.fig.params"),
              "title": t("compare.fig.title")}
right.plotly_chart(figures.params_figure(archs, [core.short_name(a.name) for a in archs], fig_labels),
                   key="compare.params_chart")
right.markdown(t("compare.numbers.after"))

st.header(t("compare.tok.header"))
st.markdown(t("compare.tok.text"))
text = core.text()
if text.strip():
    view.tokenization_side_by_side(models, text)
    st.header(t("compare.next.header"))
    st.markdown(t("compare.next.text"))
    view.next_token_side_by_side(models, text)
else:
    st.info(t("text.empty"))
