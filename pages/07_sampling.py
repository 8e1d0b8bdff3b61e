"""Lesson 7: logits and sampling. The next-token distribution, the filters live, generation with
the KV cache and its timing, and the loss of the learner's text."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import math

import streamlit as st

from lib.lessons.loss import bits_saved, perplexity
from lib.lessons.reference import REFERENCE_MODELS
from lib.lessons.sampling import logit_cost
from lib.model.capture import DEFAULT_MAX_TOKENS
from ui.learner import quiz_widget
from ui.lessons.differs import sections as differs
from ui.lessons.sampling import sections as view
from ui.shell import core, lesson, nav
from ui.shell.core import num, t
from ui.views import browser, follow

text = lesson.sections("sampling")
lm = core.model()
info = lm.info

st.title(t("lesson.sampling.title"))
lesson.show(text, "intro", model_name=core.display_name(info.name), d_model=num(info.d_model),
            vocab=num(info.vocab_size))

st.header(t("sampling.logits.header"))
cap = core.capture()
n_tokens = cap.n_tokens if cap is not None else 0
cost, cost_ctx = logit_cost(lm.config), logit_cost(lm.config, context=n_tokens)
ref = logit_cost(REFERENCE_MODELS["Llama-3 8B"])
lesson.show(text, "cost", d_model=view.tex(num(info.d_model)), vocab=view.tex(num(info.vocab_size)),
            output=view.tex(num(cost.output)),
            weights=num(cost.weights), share=num(100 * cost.share, 1), n_tokens=num(n_tokens),
            attention=num(cost_ctx.attention), share_ctx=num(100 * cost_ctx.share, 1),
            ref_output=num(ref.output / 1e9, 2), ref_share=num(100 * ref.share, 1))
c1, c2, c3, c4 = st.columns(4)
c1.metric(t("sampling.cost.output"), t("sampling.cost.flops", n=core.big(cost.output)))
c2.metric(t("sampling.cost.step"), t("sampling.cost.flops", n=core.big(cost.weights)))
c3.metric(t("sampling.cost.share"), f"{num(100 * cost.share, 1)}%")
c4.metric(t("sampling.cost.share_ctx"), f"{num(100 * cost_ctx.share, 1)}%")

st.header(t("sampling.dist.header"))
lesson.show(text, "softmax")
lesson.show(text, "filters", vocab=num(info.vocab_size))


if cap is not None:  # temperature, top-k, top-p and the draw are answered in the browser (ui/views/browser.py)
    browser.view("sampling", "sampling.view", view.view_data(
        cap.last_logits(), lm.tokenizer, browser.data_key(core.model_name(), core.text(), core.lang()), core.lang()))
lesson.show(text, "chart_read")
st.subheader(t("sampling.sample.header"))
lesson.show(text, "sample")

st.header(t("sampling.gen.header"))
lesson.show(text, "generate")
gen = None
if cap is not None:
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    with c1:
        view.max_new_widget()
    with c2:
        browser = browser.action("sampling.generate", t("sampling.gen.button"), ["sampling.settings"], primary=True)
    if browser is not None:  # the press carried the view's settings: generate with them
        view.request_generation(core.model_name(), core.text(), DEFAULT_MAX_TOKENS, browser.get("sampling.settings"))
    gen = view.current_generation(core.model_name(), core.text())  # runs only for a new button press
    if gen is not None:
        view.generation_summary(gen)
lesson.show(text, "timing")
if gen is not None and gen.steps:
    view.timing(gen, core.model_name())

st.header(t("sampling.loss.header"))
lesson.show(text, "loss")


@st.fragment(key="sampling.loss_section")
def loss_section() -> None:
    """The loss of the learner's text: every position's logits (worked out when reached, ui.views.follow)."""
    with follow.when_reached("sampling.loss_box", follow.inputs_mark(core.model_name(), core.text())) as now:
        if not now:
            return
        loss, guesses = view.loss_of(core.model_name(), core.text(), DEFAULT_MAX_TOKENS)
        if loss.n_predicted == 0:
            st.info(t("sampling.loss.one_token"))
        else:
            view.surprise_chips(cap.tokens, loss, guesses)
            c1, c2, c3 = st.columns(3)
            c1.metric(t("sampling.loss.mean"), t("sampling.loss.mean_value", n=num(loss.mean, 2)))
            c2.metric(t("sampling.loss.perplexity"), num(loss.perplexity, 1))
            c3.metric(t("sampling.loss.bits"), num(loss.bits_per_token, 2))
            worst = int(loss.surprise.argmax())
            lesson.show(text, "loss_live", loss=num(loss.mean, 2), n=num(loss.n_predicted),
                        bits=num(loss.bits_per_token, 2), ppl=num(loss.perplexity, 1),
                        ppl_round=num(round(loss.perplexity)), vocab=num(info.vocab_size),
                        worst=view.md(cap.tokens[worst + 1]), worst_surprise=num(float(loss.surprise[worst]), 2),
                        worst_p=view.pct(float(loss.prob[worst])))


if cap is not None:
    loss_section()

st.subheader(t("sampling.drop.header"))
lesson.show(text, "drop", saved=view.tex(num(bits_saved(2.0, 1.9), 3)), ppl_a=num(perplexity(2.0), 2),
            ppl_b=num(perplexity(1.9), 2), fewer=num(100 * (1 - math.exp(-0.1)), 1))

differs.sampling_section()  # both built-in models' next-token distributions

quiz_widget.render_quiz("sampling")
lesson.show(text, "next")
nav.footer("sampling")
