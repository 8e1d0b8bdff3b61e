"""Lesson 1: the model's numbers (layers, heads, d_head, d_model) on the live model."""

import ui

ui.through_app()  # a lesson link opened before app.py's navigation exists (see ui/__init__.py)

import streamlit as st

from lib.lessons.bertviz_view import as_document, head_view_height
from lib.lessons.compare import architecture
from lib.model.arithmetic import param_breakdown
from lib.model.models import DEFAULT_MODEL
from lib.model.tokens import first_split_character
from ui.learner import quiz_widget
from ui.lessons.attention.compute import bertviz
from ui.lessons.numbers import live_table, reference_table
from ui.shell import core, lesson, nav, styles
from ui.shell.core import num, t
from ui.views import figures

BERTVIZ_MAX_TOKENS = 40  # bertviz's page grows with T²; the attention lesson shows more

text = lesson.sections("numbers")
lm = core.model()
info = lm.info

st.title(t("lesson.numbers.title"))
st.info(t("numbers.how_to"))  # what to do, before the prose
lesson.show(text, "intro")
lesson.show(text, "relation")

st.header(t("numbers.live.header"))
wide = info.n_heads * info.d_head != info.d_model  # Gemma: heads wider than the model
lesson.show(text, "live_wide" if wide else "live", model_name=core.display_name(info.name), n_layers=num(info.n_layers),
            n_heads=num(info.n_heads), n_kv_heads=num(info.n_kv_heads), d_head=num(info.d_head),
            d_model=num(info.d_model), d_mlp=num(info.d_mlp), vocab_size=num(info.vocab_size),
            context=num(info.context_length or 0), n_params=num(info.n_params), group_size=num(info.group_size),
            heads_width=num(info.n_heads * info.d_head), embed_share=num(100 * info.vocab_size * info.d_model / info.n_params, 1))
lesson.show(text, "builtin", embed_share=num(100 * info.vocab_size * info.d_model / info.n_params, 1))  # say so once, here
left, right = st.columns([2, 3])
table = live_table(info)
styles.table(table, "numbers.table", where=left)
if info.d_model != info.n_heads * info.d_head:
    left.info(t("numbers.check_differs"))
with right:
    lesson.show(text, "params", norm_terms=t("numbers.params.norms", n=num(architecture(lm).norms_per_block)))
    if info.n_params == info.n_params_formula:
        st.success(t("numbers.params_equal", n=num(info.n_params)))
    else:
        st.warning(t("numbers.params_differ", weights=num(info.n_params), formula=num(info.n_params_formula)))
    parts = param_breakdown(lm.config)
    names = {k: t(f"params.{k}") for k in parts}
    st.plotly_chart(figures.params_figure(parts, names, t("params.title")), key="numbers.params_chart")

st.header(t("numbers.reference.header"))
lesson.show(text, "reference")
styles.table(reference_table(core.short_name(info.name), lm.config), "numbers.ref_table")
st.caption(t("numbers.reference.caption"))

st.header(t("numbers.stack.header"))
n_local = sum(x == "sliding_attention" for x in info.layer_types)
lesson.show(text, "stack", window_note=t("stack.window_note", n_local=num(n_local), window=num(info.sliding_window or 0)))
labels = {"x": t("stack.x"), "y": t("stack.y"), "hover": t("stack.hover"),
          "title": t("stack.title", layers=num(info.n_layers), heads=num(info.n_heads), kv=num(info.n_kv_heads))}
st.plotly_chart(figures.stack_figure(info.n_layers, info.n_heads, info.n_kv_heads, labels), key="numbers.stack_chart")
lesson.show(text, "why_heads")
lesson.show(text, "depth")

st.header(t("numbers.glimpse.header"))
lesson.show(text, "glimpse")
cap = core.capture()


@st.fragment
def glimpse() -> None:
    """bertviz's head view of one layer: the slider reruns this section alone. One layer at a time,
    by measure: every layer at once is up to 2.8 MB at 40 tokens, one layer about 0.11 MB (docs/architecture.md)."""
    # The default goes through session state (a share link may have set it): no value= as well.
    st.session_state.setdefault("numbers.layer", min(info.n_layers // 2, info.n_layers - 1))
    layer = st.slider(t("numbers.layer"), 0, info.n_layers - 1, key="numbers.layer")
    n = min(cap.n_tokens, BERTVIZ_MAX_TOKENS)
    if cap.n_tokens > n:
        st.caption(t("numbers.bertviz_cut", n=num(n), total=num(cap.n_tokens)))
    view = bertviz(core.model_name(), cap.text, core.cut(cap), "head", (layer,), n)  # cached
    if not view.offline:
        st.warning(t("bertviz.cdn"))
    st.iframe(as_document(view.html, core.lang(), t("numbers.glimpse.header")), height=head_view_height(n))
    split = first_split_character(list(cap.tokens[:n]), cap.text, cap.offsets)  # «è» as <C3><A8>
    if split is not None:
        st.caption(t("numbers.bytes_caption", char=split[0], bytes=split[1],
                     lesson=t("lesson.tokenization.title")))


if cap is not None:
    glimpse()

quiz_widget.render_quiz("numbers")
lesson.show(text, "next")
nav.footer("numbers")
