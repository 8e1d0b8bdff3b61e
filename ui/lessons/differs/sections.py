""""What differs" sections: each lesson, on a model that departs from the Llama recipe (Gemma 3),
shows the difference computed from the loaded model; on the other built-in model it offers the
same text through both.

One function per lesson, called by its page after the lesson's own sections. A section whose
feature the loaded model lacks draws nothing (SmolLM2 has no window, no q/k norms...), so the
pages need no `if` on the model. Every figure comes from the loaded model or its capture; the charts
are drawn by ui.lessons.differs.figures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from lib.lessons import kvcache as K
from lib.lessons import rope
from lib.lessons.block import block_steps, norm_params
from lib.lessons.compare import architecture
from lib.model.arithmetic import SLIDING, cache_layers
from lib.model.capture import DEFAULT_MAX_TOKENS, Capture
from lib.model.models import LoadedModel
from ui.lessons.compare import sections as compare
from ui.lessons.differs.figures import periods_figure, window_figure
from ui.shell.cache import per_model
from ui.shell.core import cut, model_name, num, t, text

def _local_global(lm: LoadedModel) -> tuple[int | None, int | None]:
    """(first local layer, first global layer), None where the model has none."""
    types = lm.info.layer_types
    local = next((i for i, x in enumerate(types) if x == "sliding_attention"), None)
    glob = next((i for i, x in enumerate(types) if x != "sliding_attention"), None)
    return local, glob


def _lengthen(repeat: int) -> None:
    """Callback: the learner's own text, repeated, so that it runs past the window."""
    st.session_state["app.text"] = " ".join([st.session_state.get("app.text", "")] * repeat)


# ------------------------------------------------------------------------------------ attention


def attention_section(lm: LoadedModel, cap: Capture | None) -> None:
    """MQA (one KV head shared by every query head) and the sliding window on a local layer."""
    info = lm.info
    if info.n_kv_heads != 1 and not info.sliding_window:
        return
    st.header(t("differs.attention.header"))
    if info.n_kv_heads == 1:
        st.markdown(t("differs.attention.mqa", heads=num(info.n_heads), d_head=num(info.d_head),
                      d_model=num(info.d_model), width=num(info.n_heads * info.d_head)))
        if cap is not None:
            same = all(np.array_equal(cap.key(0, 0), cap.key(0, h)) for h in range(cap.n_heads))
            (st.success if same else st.error)(t("differs.attention.mqa_check", heads=num(cap.n_heads)))
    if not info.sliding_window or cap is None:
        return
    w = info.sliding_window
    local, glob = _local_global(lm)
    st.markdown(t("differs.attention.window", window=num(w), local=num(info.layer_types.count("sliding_attention")),
                  glob=num(len(info.layer_types) - info.layer_types.count("sliding_attention")),
                  tokens=num(2 * w), default=num(DEFAULT_MAX_TOKENS)))
    if cap.n_tokens <= w:
        st.info(t("differs.attention.short", n=num(cap.n_tokens), window=num(w)))
        # One more copy than the count suggests: the first token is <bos>, and joining copies can merge tokens.
        if w < cut(cap):  # a window wider than the capture reads cannot be passed by lengthening the text
            repeat = int(np.ceil((w + 32) / max(cap.n_tokens - 1, 1))) + 1
            st.button(t("differs.attention.lengthen"), key="differs.lengthen", on_click=_lengthen, args=(repeat,))
        return
    st.caption(t("differs.attention.notice", n=num(cap.n_tokens), tokens=num(2 * w)))
    head = st.slider(t("differs.attention.head"), 0, cap.n_heads - 1, 0, key="differs.attention_head")
    last = cap.n_tokens - 1
    cols = st.columns(2)
    for col, layer, kind in ((cols[0], local, "local"), (cols[1], glob, "global")):
        if layer is None:
            continue
        a = cap.attention(layer, head)  # [T, T]
        read = int((a[last] > 0).sum())
        labels = {"title": t(f"differs.attention.{kind}_title", layer=num(layer)), "x": t("differs.attention.keys"),
                  "y": t("differs.attention.queries")}
        col.plotly_chart(window_figure(a, labels), key=f"differs.attention_{kind}")
        col.metric(t("differs.attention.read"), num(read), help=t("differs.attention.read_help", n=num(last + 1)))


# ------------------------------------------------------------------------------------ position


def position_section(lm: LoadedModel, cap: Capture | None) -> None:
    """Two RoPE bases: the local layers' and the global layers', read from the config and checked
    against the angles the model itself used."""
    info = lm.info
    if info.rope_theta_local is None or info.rope_theta is None or info.rope_theta_local == info.rope_theta:
        return
    st.header(t("differs.position.header"))
    lo, hi = info.rope_theta_local, info.rope_theta
    p_lo, p_hi = rope.periods(info.d_head, lo), rope.periods(info.d_head, hi)
    st.markdown(t("differs.position.text", local=num(lo), glob=num(hi), slow_local=num(float(p_lo[-1]), 0),
                  slow_glob=num(float(p_hi[-1]), 0), window=num(info.sliding_window or 0)))
    labels = {"local": t("differs.position.local", base=num(lo)), "global": t("differs.position.global", base=num(hi)),
              "x": t("differs.position.pair"), "y": t("differs.position.period")}
    st.plotly_chart(periods_figure(p_lo, p_hi, labels), key="differs.position_periods")
    local, glob = _local_global(lm)
    if cap is not None and cap.rope_local is not None and local is not None and glob is not None:
        pos = np.arange(cap.n_tokens)
        diffs = []
        for layer, base in ((local, lo), (glob, hi)):
            cos, _ = rope.cos_sin(pos, info.d_head, base)
            diffs.append(float(np.abs(np.asarray(cos) - cap.layer_rope(layer)[0]).max()))
        st.success(t("differs.position.check", local=num(local), glob=num(glob), d1=f"{diffs[0]:.1e}",
                     d2=f"{diffs[1]:.1e}"))


# ------------------------------------------------------------------------------------ block


def block_section(lm: LoadedModel) -> None:
    """Sandwich norms, q/k norms and GeGLU, read from the block's modules."""
    arch = architecture(lm)
    if arch.norms_per_block <= 2 and not arch.qk_norm:
        return
    st.header(t("differs.block.header"))
    block = lm.adapter.blocks(lm.model)[0]
    # The block's steps in the order they run (lib.lessons.block.block_steps), not the order the code declares
    # them, in the course's words (the modules' names are the code's).
    order = [t(f"block.step.{s.kind}") if s.kind != "add" else "+" for s in block_steps(lm, 1)[1:-2]]
    st.markdown(t("differs.block.text", norms=num(arch.norms_per_block), act=arch.activation,
                  qk=t("yes") if arch.qk_norm else t("no")))
    attn = lm.adapter.attention(block)
    norms = [(name, m) for name, m in block.named_children() if "norm" in name]
    norms += [(f"self_attn.{name}", getattr(attn, name)) for name in ("q_norm", "k_norm")
              if getattr(attn, name, None) is not None]
    # The gain each norm really applies (Gemma stores w and multiplies by 1 + w): lib.lessons.block reads it.
    rows = [{t("differs.block.col.module"): name, t("differs.block.col.width"): num(int(m.weight.numel())),
             t("differs.block.col.gain"): num(float(norm_params(m, "rmsnorm").weight.mean()), 3)} for name, m in norms]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="differs.block_norms")
    st.caption(t("differs.block.order", order=" → ".join(order)))
    st.caption(t("differs.block.gain"))
    st.markdown(t("differs.block.geglu", act=arch.activation))


# ------------------------------------------------------------------------------------ kv cache


@per_model
def _hybrid(name: str, tokens: int) -> K.CacheMeasurement:
    from ui.shell.cache import get_model

    return K.measure_cache(get_model(name), tokens)


def kvcache_section(lm: LoadedModel) -> None:
    """The hybrid cache (local layers keep the window, global layers everything), measured on the
    loaded model past the window and compared with the formula byte for byte."""
    info = lm.info
    if not info.sliding_window:
        return
    st.header(t("differs.kvcache.header"))
    w = info.sliding_window
    kinds = cache_layers(lm.config)
    n_local = sum(k.kind == SLIDING for k in kinds)
    st.markdown(t("differs.kvcache.text", window=num(w), local=num(n_local), glob=num(len(kinds) - n_local)))
    n = 2 * w
    if not st.toggle(t("differs.kvcache.run", n=num(n)), key="differs.kvcache_run"):
        return
    with st.spinner(t("kvcache.measure.running")):
        m = _hybrid(model_name(), n)
    c = st.columns(3)
    c[0].metric(t("kvcache.measure.measured"), f"{num(m.measured_bytes)} B")
    c[1].metric(t("kvcache.measure.formula"), f"{num(m.formula_bytes - m.window_offset_bytes)} B")
    full = K.kv_cache_bytes(dict(lm.config, layer_types=["full_attention"] * info.n_layers), n,
                            dtype_bytes=m.dtype_bytes)
    c[2].metric(t("differs.kvcache.all_global"), f"{num(full)} B")
    (st.success if m.equal else st.error)(t("differs.kvcache.equal" if m.equal else "kvcache.measure.differ",
                                            n=num(n), held=num(min(n, w - 1)), x=num(full / m.measured_bytes, 2)))
    st.dataframe(pd.DataFrame({
        t("kvcache.measure.col.layer"): list(range(len(m.layers))),
        t("differs.kvcache.col.kind"): [t(f"differs.kind.{x.kind}") for x in m.layers],
        t("kvcache.measure.col.keys"): [" × ".join(map(str, x.key_shape)) for x in m.layers],
        t("kvcache.measure.col.bytes"): [num(x.bytes) for x in m.layers],
    }), hide_index=True, key="differs.kvcache_layers")


# ------------------------------------------------------------------------------------ both models


def tokenization_section() -> None:
    """The learner's text and two fixed sentences (Italian, English) cut by both built-in tokenizers."""
    st.header(t("differs.tok.header"))
    st.markdown(t("differs.tok.text"))
    if not st.toggle(t("differs.both"), key="differs.tok_both"):
        return
    models = compare.builtin_models()
    for label, sample in ((t("differs.tok.yours"), text()), (t("differs.tok.it_label"), t("differs.tok.it_sample")),
                          (t("differs.tok.en_label"), t("differs.tok.en_sample"))):
        if sample.strip():
            st.subheader(label)
            compare.tokenization_side_by_side(models, sample)


def sampling_section() -> None:
    """The same prompt, both built-in models' next-token distributions."""
    st.header(t("differs.sampling.header"))
    st.markdown(t("differs.sampling.text"))
    if not text().strip() or not st.toggle(t("differs.both"), key="differs.sampling_both"):
        return
    compare.next_token_side_by_side(compare.builtin_models(), text())
