"""Lesson 3: embeddings, rows of a table; cosine similarity, neighbours, and vectors in context."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import streamlit as st

from lib.lessons import embeddings as emb
from ui.learner import quiz_widget
from ui.lessons.embeddings import figures
from ui.lessons.embeddings import sections as view
from ui.shell import core, lesson, nav
from ui.shell.core import num, t
from ui.views.live_chart import live_chart

text = lesson.sections("embeddings")
lm = core.model()
info = lm.info
name = core.model_name()
idx = view.index(name)
n_vocab, d_model = idx.shape
learned = info.positional == "learned"

st.title(t("lesson.embeddings.title"))
lesson.show(text, "intro")

st.header(t("embeddings.table.header"))
lesson.show(text, "table", model_name=core.display_name(info.name), vocab=num(n_vocab), d_model=num(d_model),
            shape=f"{n_vocab}, {d_model}", n_numbers=num(n_vocab * d_model),
            megabytes=num(n_vocab * d_model * 4 / 1e6, 1))
cols = st.columns(3)
cols[0].metric(t("embeddings.table.rows"), num(n_vocab))
cols[1].metric(t("embeddings.table.cols"), num(d_model))
cols[2].metric(t("embeddings.table.shape"), f"[{n_vocab}, {d_model}]")
st.caption(t("embeddings.table.which_learned" if learned else "embeddings.table.which_rope",
              scale=num(emb.embed_scale(lm), 4)))
cap = core.capture()


if cap is not None:  # the rows, a browser view: its dimensions slider is answered there
    view.table_rows(idx, cap, core.learned_positions(name), info.n_layers)

st.header(t("embeddings.cosine.header"))
lesson.show(text, "cosine")
raw = st.text_input(t("embeddings.words.label"), value=t("embeddings.words.default"), key="embeddings.words",
                    max_chars=2000, help=t("embeddings.words.help"))
pieces = view.words(lm.tokenizer, raw)
if pieces:
    st.dataframe(view.pieces_table(pieces), hide_index=True, key="embeddings.pieces_table")
if len(pieces) >= 2:
    matrix = emb.cosine_matrix(view.word_matrix(idx, pieces))
    labels = {"hover": t("embeddings.cosine.hover"), "title": t("embeddings.cosine.title")}
    live_chart(figures.cosine_figure(matrix, [p.word for p in pieces], labels, num), key="embeddings.cosine_chart")
lesson.show(text, "pieces")

st.header(t("embeddings.norms.header"))
stats = view.norm_stats(name)
lesson.show(text, "norms", pearson=num(stats.pearson, 2), spearman=num(stats.spearman, 2), vocab=num(n_vocab),
            mean=num(float(idx.norms.mean()), 3), std=num(float(idx.norms.std()), 4))
view.norms(name, idx, stats)
lesson.show(text, "why_cosine")

st.header(t("embeddings.neighbours.header"))
lesson.show(text, "neighbours", vocab=num(n_vocab))


@st.fragment
def neighbours() -> None:
    """The nearest rows to a word: its query reruns this section alone (tokenizing, searching the
    table); the number shown and the measure are answered in the browser."""
    query_raw = st.text_input(t("embeddings.neighbours.query"), value=t("embeddings.neighbours.default"),
                              key="embeddings.query", max_chars=emb.MAX_WORD_CHARS)
    query = emb.word_pieces(lm.tokenizer, " ".join(query_raw.split())) if query_raw.strip() else None
    if query is None or not query.ids or query.unknown:
        st.info(t("embeddings.neighbours.empty"))
    else:
        if query.n_pieces > 1:
            st.caption(t("embeddings.neighbours.mean", pieces=" · ".join(query.pieces), n=num(query.n_pieces)))
        view.neighbours(name, query, d_model, info.n_layers)


neighbours()
lesson.show(text, "pca")
if len(pieces) >= 3:
    view.projection(name, pieces, d_model, info.n_layers)  # with and without the neighbours: the switch is the view's
else:
    st.info(t("embeddings.pca.need_three"))

st.header(t("embeddings.context.header"))
lesson.show(text, "context", n_layers=num(info.n_layers))


@st.fragment
def in_context() -> None:
    """One word in two sentences through the layers: its text boxes rerun this section alone; the
    depth is answered in the browser."""
    word = st.text_input(t("embeddings.context.word"), value=t("embeddings.context.word_default"),
                         key="embeddings.ctx_word", max_chars=emb.MAX_WORD_CHARS)
    ca, cb = st.columns(2)
    sent_a = ca.text_input(t("embeddings.context.a"), value=t("embeddings.context.a_default"), key="embeddings.ctx_a",
                           max_chars=400)
    sent_b = cb.text_input(t("embeddings.context.b"), value=t("embeddings.context.b_default"), key="embeddings.ctx_b",
                           max_chars=400)
    view.context(name, info.n_layers, d_model, word, [sent_a, sent_b], learned)


in_context()

st.header(t("embeddings.sentences.header"))
lesson.show(text, "sentences")
raw_sentences = st.text_area(t("embeddings.sentences.label"), value=t("embeddings.sentences.default"),
                             key="embeddings.sentences", max_chars=3000, height=140)
view.sentences(name, raw_sentences)
lesson.show(text, "search")

quiz_widget.render_quiz("embeddings")
lesson.show(text, "next")
nav.footer("embeddings")
