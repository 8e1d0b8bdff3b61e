"""Lesson 2: tokenization. Build a BPE vocabulary merge by merge, then replay the live model's
merges on the learner's text, from bytes to its final tokens."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import streamlit as st

from lib.lessons import bpe
from lib.model.tokens import readable_tokens
from ui.learner import quiz_widget
from ui.lessons.differs import sections as differs
from ui.lessons.tokenization import figures
from ui.lessons.tokenization import sections as view
from ui.shell import core, lesson, nav
from ui.shell.core import num, t
from ui.views import browser
from ui.views.live_chart import live_chart

text = lesson.sections("tokenization")
lm = core.model()
name = core.model_name()

st.title(t("lesson.tokenization.title"))
lesson.show(text, "intro")
lesson.show(text, "algorithm")
lesson.show(text, "split")

# ---------------------------------------------------------------- part 1: build a vocabulary
# The corpus and the splitting rule train a new vocabulary (the server); the target size, the step
# and the player are answered in the browser from the training sent once (ui/views/browser.py).
st.header(t("tokenization.build.header"))
lesson.show(text, "build")
c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
sources = c1.pills(t("tokenization.build.corpus"), options=list(view.SOURCES), selection_mode="multi",
                   default=list(view.SOURCES), format_func=view.names("tokenization.build.source", view.SOURCES).get,
                   key="tokenization.corpus")
pattern = c2.segmented_control(t("tokenization.build.pattern"), options=list(bpe.PATTERNS), default="gpt2",
                               format_func=view.names("tokenization.build.pattern", bpe.PATTERNS).get,
                               key="tokenization.pattern") or "gpt2"
corpus, notes = view.build_corpus(sources or [], core.text())
for kind, note in notes:
    getattr(st, kind)(note)
if not corpus.strip():
    st.info(t("tokenization.build.empty"))
else:
    training = view.get_training(corpus, pattern)
    st.caption(t("tokenization.build.corpus_size", chars=num(len(corpus)), bytes=num(len(training.corpus)),
                 chunks=num(training.n_chunks)))
    browser.view("tokenization", "tokenization.view", view.build_data(
        training, browser.data_key("build", pattern, corpus, core.lang(), view.link_token()), core.lang()))
lesson.show(text, "build_notes")

# ---------------------------------------------------------------- part 2: the real model's merges
st.header(t("tokenization.real.header"))
model, code, detail = view.get_bpe_model(name)
learner = core.text()
if model is None:
    st.warning(t(f"tokenization.real.not_bpe.{code}", name=core.display_name(name), detail=detail))
    if learner.strip():
        ids = lm.tokenizer.encode(learner[:view.REPLAY_MAX], add_special_tokens=False)
        st.markdown(" · ".join(f"`{x}`" for x in readable_tokens(lm.tokenizer, ids)))
else:
    lesson.show(text, "real", model_name=core.display_name(name), n_merges=num(model.n_merges),
                vocab_size=num(model.n_ids))
    if not learner.strip():
        st.info(t("text.empty"))
    else:
        if len(learner) > view.REPLAY_MAX:
            st.warning(t("tokenization.real.capped", n=num(len(learner)), cap=num(view.REPLAY_MAX)))
        r = view.get_replay(name, learner[:view.REPLAY_MAX])
        own = lm.tokenizer.encode(learner[:view.REPLAY_MAX], add_special_tokens=False)
        c1, c2, c3, c4 = st.columns(4)
        c1.metric(t("tokenization.real.bytes"), num(len(r.data)))
        c2.metric(t("tokenization.real.words"), num(r.words))
        c3.metric(t("tokenization.real.steps"), num(r.n_steps))
        c4.metric(t("tokenization.real.final"), num(len(r.ids)))
        if r.ids == own:
            st.success(t("tokenization.real.same", n=num(len(own))))
        else:
            st.error(t("tokenization.real.differs", ours=num(len(r.ids)), theirs=num(len(own))))
        if r.whole:
            st.info(t("tokenization.real.whole", n=num(r.whole)))
        browser.view("tokenization", "tokenization.real_view", view.real_data(
            r, browser.data_key("real", name, r.text, core.lang(), view.link_token()), core.lang()))
        with st.expander(t("tokenization.real.table"), expanded=False):
            st.dataframe(view.token_table(r), hide_index=True, key="tokenization.real.token_table")
    lesson.show(text, "markers")
    if not model.merges_digits:
        st.caption(t("tokenization.real.digits_apart"))
    if model.missing_bytes:
        st.caption(t("tokenization.real.bytes_missing", missing=num(len(model.missing_bytes)),
                     invalid=num(len(model.missing_invalid_utf8))))

# ---------------------------------------------------------------- Italian and English
st.header(t("tokenization.lang.header"))
costs = view.language_costs(name)
it_total, en_total = int(costs["it"].sum()), int(costs["en"].sum())
lesson.show(text, "languages")
c1, c2, c3 = st.columns(3)
c1.metric(t("tokenization.lang.it_total"), num(it_total), help=t("tokenization.lang.chars", n=num(costs["it_chars"].sum())))
c2.metric(t("tokenization.lang.en_total"), num(en_total), help=t("tokenization.lang.chars", n=num(costs["en_chars"].sum())))
c3.metric(t("tokenization.lang.ratio"), num(it_total / max(en_total, 1), 2))
verdict = "more" if it_total > en_total else "less"
st.markdown(t(f"tokenization.lang.{verdict}", pct=num(abs(100 * (it_total / max(en_total, 1) - 1)), 0),
              model_name=core.display_name(name)))
lang_labels = {"it": t("tokenization.lang.it"), "en": t("tokenization.lang.en"),
               "chart_title": t("tokenization.lang.chart_title"), "paragraph": t("tokenization.lang.paragraph"),
               "tokens": t("tokenization.lang.tokens")}
live_chart(figures.language_figure(costs, lang_labels), key="tokenization.lang_chart")


if model is not None:  # the paragraph slider is answered in the browser
    browser.view("tokenization", "tokenization.pair_view", view.pair_data(
        name, browser.data_key("pair", name, core.lang()), core.lang()))
lesson.show(text, "languages_why")

differs.tokenization_section()  # both built-in tokenizers, side by side

quiz_widget.render_quiz("tokenization")
lesson.show(text, "next")
nav.footer("tokenization")
