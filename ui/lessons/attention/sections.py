"""The attention lesson's figures, cached computations, page sections and its browser views' data
(the chosen layer's heads for attention.js; every head's steps, weights without the mask and flash
scores, and the scaling demo's results, for attention_steps.js).

Figure builders (`*_figure`) take data and already-translated labels and return a plotly figure,
so they can be tested without a browser. Cached helpers are keyed by plain strings and numbers and
read the capture from ui.shell.cache: changing a layer, a head or a block size never re-runs the model.
Token strings go into plotly escaped (plotly renders a few HTML tags in its text).
"""

from __future__ import annotations

import html
import time

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from lib.lessons import attention as att
from lib.lessons.bertviz_view import as_document, head_view_height, head_view_html, model_view_html
from lib.lessons.reference import REFERENCE_MODELS
from lib.model.capture import Capture
from lib.serving.payload import pack_f32, pack_u16
from ui.shell import core, styles
from ui.shell.cache import get_capture, get_model
from ui.shell.core import num, t
from ui.views import browser, follow
from ui.views.export import modebar_config
from ui.views.figures import PALETTE, Spec
from ui.views.live_chart import live_chart

HEATMAP_MAX_TOKENS = 64  # a [T, T] heatmap with more rows has unreadable token labels
STEP_TABS = ("qkv", "scores", "scale", "mask", "softmax", "sum", "concat")  # the formula's steps, one tab each
OVERVIEW_TOKENS = 16  # each of the L x H thumbnails shows the first tokens only
STEP_TOKENS = 6  # the formula's matrices on screen: the first tokens...
STEP_DIMS = 4  # ...and the first dimensions of Q, K, V
BERTVIZ_HEAD_TOKENS = 48  # bertviz's HTML grows with layers x heads x T²
BERTVIZ_MODEL_TOKENS = 24
BERTVIZ_MODEL_LAYERS = 4
KV_TOKENS = 8192
FAR_TOKENS = 100_000  # where the naive n x n matrix becomes a wall
BLOCKS = (2, 4, 8, 16, 32, 64, 128)
MAX_BLOCKS_PER_SIDE = 64  # at most 64 x 64 tiles to step through (a slider of 2,080 causal tiles)
D_HEADS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
# Attention is peaked (much of it sits on the first token): a scale that spends more colours
# on small weights keeps the weaker links visible. Hover shows the real value.
COLORSCALE = [[0.0, "#ffffff"], [0.03, "#e3ecf7"], [0.12, "#a9c4e6"], [0.35, "#5b8fd0"],
              [0.7, "#2856a3"], [1.0, "#08306b"]]


def esc(token: str) -> str:
    """A token as plotly text: escaped, so `<img ...>` shows as characters."""
    return html.escape(token, quote=False)


def token_labels(tokens, n: int | None = None) -> list[str]:
    """Unique row/column labels "i·token" (two equal tokens must stay two rows)."""
    return [f"{i}·{tok}" for i, tok in enumerate(tokens[:n] if n else tokens)]


# --------------------------------------------------------------------------- cached computations


def _cap(model_name: str, text: str, max_tokens: int) -> Capture:
    return get_capture(model_name, text, max_tokens)


@st.cache_resource(max_entries=8, show_spinner=False)
def patterns(model_name: str, text: str, max_tokens: int) -> dict[str, np.ndarray]:
    """Pattern scores [L, H] of every head, plus the normalised entropy, for one capture."""
    cap = _cap(model_name, text, max_tokens)
    out = att.pattern_scores(cap.attn, cap.token_ids, att.word_ids(cap.text, cap.offsets))
    return out


@st.cache_resource(max_entries=16, show_spinner=False)
def layer_output(model_name: str, text: str, max_tokens: int, layer: int) -> att.LayerOutput:
    return att.layer_output(get_model(model_name), _cap(model_name, text, max_tokens), layer)


@st.cache_resource(max_entries=32, show_spinner=False)
def _head_weights(model_name: str, text: str, max_tokens: int, layer: int, head: int) -> np.ndarray:
    return _cap(model_name, text, max_tokens).attention(layer, head)


def head_weights(cap: Capture, layer: int, head: int) -> np.ndarray:
    """[T, T] the model's own weights of one head (`cap.attention`, recomputed with the model's
    operations), kept per head: the heatmap, the pattern table and the check read it on every
    move of a slider. At most 32 heads (32 MB at 512 tokens)."""
    return _head_weights(core.model_name(), cap.text, core.cut(cap), layer, head)


@st.cache_resource(max_entries=8, show_spinner=False)
def first_tokens_attention(model_name: str, text: str, max_tokens: int, n: int) -> np.ndarray:
    """[L, H, n, n] every head's weights among the first n tokens (causal: the same as in the
    whole text). Small, and kept: the overview and bertviz redraw from it without recomputing
    all the layers' attention (cap.attn) at each move of a slider."""
    cap = _cap(model_name, text, max_tokens)
    return np.stack([cap.attn_layer(layer, upto=n) for layer in range(cap.n_layers)])


@st.cache_resource(max_entries=16, show_spinner=False)
def bertviz(model_name: str, text: str, max_tokens: int, kind: str, layers: tuple[int, ...], n: int):
    cap = _cap(model_name, text, max_tokens)
    attn, tokens = first_tokens_attention(model_name, text, max_tokens, n), list(cap.tokens[:n])
    if kind == "head":
        return head_view_html(attn, tokens, layers=list(layers))
    return model_view_html(attn, tokens, layers=list(layers))


@st.cache_data(max_entries=16, show_spinner=False)
def scaling(d_head: int, seed: int) -> att.ScalingDemo:
    return att.scaling_demo(d_head, seed=seed)


@st.cache_resource(max_entries=4, show_spinner=False)
def _steps(model_name: str, text: str, max_tokens: int, layer: int, head: int, scale: float,
           causal: bool) -> att.HeadSteps:
    steps = att.capture_head_steps(_cap(model_name, text, max_tokens), layer, head, scale=scale, causal=causal)
    for value in vars(steps).values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)  # shared by every session
    return steps


def steps_of(cap: Capture, layer: int, head: int, scale: float, causal: bool = True) -> att.HeadSteps:
    """The formula's steps for one head, computed once per head and kept for the few heads last
    seen: the live view, the formula, the mask and flash sections all read them at each move (at
    most 4 entries of four float64 [T, T] matrices: 34 MB at 512 tokens, 0.1 MB at the default
    text). Read only: the arrays are shared by every session."""
    return _steps(core.model_name(), cap.text, core.cut(cap), layer, head, float(scale), causal)


# --------------------------------------------------------------------------- selection


# The page's section that holds the layer and head sliders (pages/05_attention.py): a slider move
# reruns it alone, in one script run; the sections further down that draw the chosen head follow
# when the learner reaches them (ui/views/follow.py).
LIVE_SECTION = "attention.live"


def selected(lm, cap: Capture) -> tuple[int, int, float]:
    """The chosen layer and head (from session state, clamped) and the layer's scale: each section of
    the page reads them in its own fragment, so each one follows the sliders."""
    layer, head = att.clamp_head(cap.n_layers, cap.n_heads, st.session_state.get("attention.layer", cap.n_layers // 2),
                                 st.session_state.get("attention.head", 0))
    return layer, head, att.module_scale(lm, layer)


LAYER_KEY = "attention.view"  # the browser view of the chosen layer's heads


def take_layer() -> None:
    """The view's trigger: a layer the browser has not been sent, with the head chosen there."""
    value = (st.session_state.get(LAYER_KEY) or {}).get("layer")
    if isinstance(value, dict):
        set_chosen(f"{value.get('layer')}:{value.get('head')}")
        st.rerun([LIVE_SECTION, *STEP_SECTIONS])  # one run: the live view and the sections below get the layer


def set_chosen(value) -> None:
    """The layer and head the browser chose, as it publishes them ("layer:head" or "layer")."""
    if not isinstance(value, str):
        return
    parts = value.split(":")
    if not all(p.isdigit() for p in parts) or len(parts) > 2:
        return
    st.session_state["attention.layer"] = int(parts[0])
    if len(parts) == 2:
        st.session_state["attention.head"] = int(parts[1])


def chosen_head(n_layers: int, n_heads: int) -> tuple[int, int]:
    """The layer and head the server knows (a link, an overview click, the last layer sent), brought
    back in range with a warning when a bigger model's choice does not fit this one."""
    asked = (st.session_state.get("attention.layer", n_layers // 2), st.session_state.get("attention.head", 0))
    layer, head = att.clamp_head(n_layers, n_heads, *asked)
    if (layer, head) != asked:
        st.warning(t("attention.clamped", layer=num(layer), head=num(head), n_layers=num(n_layers),
                     n_heads=num(n_heads)))
    st.session_state["attention.layer"], st.session_state["attention.head"] = layer, head
    return layer, head


@st.cache_resource(max_entries=8, show_spinner=False)
def _layer_heads(model_name: str, text: str, max_tokens: int, layer: int, lang: str) -> dict:
    """Everything the view draws for one layer, every head: weights, mask, the patterns in words."""
    cap = _cap(model_name, text, max_tokens)
    n = min(cap.n_tokens, HEATMAP_MAX_TOKENS)
    attn = cap.attn_layer(layer)  # [H, T, T]
    mask = steps_of(cap, layer, 0, 1.0).mask  # the same for every head of a layer (causal, window)
    scores = att.pattern_scores(attn, cap.token_ids, att.word_ids(cap.text, cap.offsets))
    heads = []
    for h in range(cap.n_heads):
        mine = {k: float(v[h]) for k, v in scores.items()}
        best = att.strongest_pattern(mine) if cap.n_tokens >= 2 else None
        sums = attn[h].sum(-1).astype(np.float64)
        rows = [[t(f"attention.pattern.{p}"), "—" if not np.isfinite(mine[p]) else f"{num(round(100 * mine[p]))}%"]
                for p in att.PATTERNS]
        spread = float(att.row_entropy(attn[h]))  # NaN with a single token: no row past the first
        rows.append([t("attention.pattern.spread"), f"{num(round(100 * spread))}%" if np.isfinite(spread) else "—"])
        heads.append({
            "title": t("attention.heatmap_title", layer=layer, head=h),
            "said": (t("attention.pattern.one_token") if cap.n_tokens < 2 else t("attention.pattern.none")
                     if best is None else t(f"attention.pattern.is.{best}", share=num(round(100 * mine[best])))),
            "clear": best is not None,
            "rows": rows,
            "sums": t("attention.rows_sum", n=num(len(sums)), dev=f"{float(np.abs(sums - 1).max()):.1e}"),
        })
    return {"layer": layer, "n": n, "weights": pack_u16(attn[:, :n, :n]), "mask": mask[:n, :n].astype(int).ravel().tolist(),
            "heads": heads}


def heatmap_cut(cap: Capture) -> None:
    """Says that the heatmap draws the first tokens only, when the text is longer."""
    if cap.n_tokens > HEATMAP_MAX_TOKENS:
        st.caption(t("attention.heatmap_cut", n=num(HEATMAP_MAX_TOKENS), total=num(cap.n_tokens)))


def live_data(cap: Capture, layer: int, head: int) -> dict:
    """The view's data: the chosen layer's heads (a coarse choice: another layer is asked for)."""
    lang = core.lang()
    sent = _layer_heads(core.model_name(), cap.text, core.cut(cap), layer, lang)
    labels = {"layer": t("attention.layer"), "head": t("attention.head"), "x": t("attention.axis.key"),
              "y": t("attention.axis.query"), "weight": t("attention.axis.weight"), "hover": t("attention.hover"),
              "hidden": t("attention.hover_hidden"), "table": t("chart.as_table"),
              "corner": f"{t('attention.axis.query')} / {t('attention.axis.key')}",
              "pattern": t("attention.pattern.col"), "share": t("attention.pattern.share"),
              "loading": t("attention.view.loading"), "unavailable": t("views.unavailable")}
    return dict(sent, key=browser.data_key(core.model_name(), cap.text, lang, layer, head, st.session_state.get(CHOSEN_TOKEN)),
                text_key=browser.data_key(core.model_name(), cap.text, lang), lang=lang,
                n_layers=cap.n_layers, n_heads=cap.n_heads, tokens=token_labels(cap.tokens, sent["n"]),
                ticks=[esc(x) for x in cap.tokens[:sent["n"]]],
                labels=labels, colorscale=COLORSCALE, config=modebar_config("attention.heatmap"),
                chosen={"layer": layer, "head": head, "token": st.session_state.get(CHOSEN_TOKEN, "")})


CHOSEN_TOKEN = "attention.server_choice"  # changes when the server chooses the head (a link, a click)


def open_clicked_head() -> None:
    """Callback of the overview: a click on a thumbnail opens that head (it only sets state)."""
    event = st.session_state.get("attention.overview")
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    for p in points:
        data = p.get("customdata")
        if data is not None and len(data) >= 2:
            st.session_state["attention.layer"], st.session_state["attention.head"] = int(data[0]), int(data[1])
            st.session_state[CHOSEN_TOKEN] = str(time.time_ns())  # the view takes this head
            for taken in ("attention.block", "attention.dh"):  # a link's, already taken by the flash and scaling views
                st.session_state.pop(taken, None)
            # The click is in the overview's own section: rerun the live view's and the head's sections.
            st.rerun([LIVE_SECTION, *STEP_SECTIONS])


# --------------------------------------------------------------------------- the sections that draw the head

# The page's sections further down that draw the chosen head (the formula's steps, the unmasked
# heatmap, flash attention): browser views (static/views/attention_steps.js) that follow the head
# through the page store. Their data is every head of the chosen layer, sent once per (model, text,
# language, layer); the live view's layer trigger reruns them with it (`take_layer`).
STEP_SECTIONS = ("attention.formula", "attention.mask", "attention.flash")
FLASH_TOKENS = HEATMAP_MAX_TOKENS  # flash attention walks the first tokens (causal: the same rows as the whole text)
STEP_VIEW = "attention_steps"


def _round(a: np.ndarray) -> list:
    """A small matrix as JSON numbers (float64: the tables round them as Python would)."""
    return np.asarray(a, dtype=np.float64).tolist()


def flash_cases(cap: Capture, layer: int, scale: float) -> dict:
    """What flash attention's view needs for every head of `layer`, on the first FLASH_TOKENS
    tokens: each head's scaled scores, lower triangle (float32: the view reruns the online softmax
    on them, `flashWalk`), and per tile size lib's own tiled run's difference from the naive result
    and the memory both need."""
    n = min(cap.n_tokens, FLASH_TOKENS)
    window = cap.layer_window(layer)
    lower = np.tril_indices(n)
    scores, diffs = [], {b: [] for b in block_options(n)}
    for h in range(cap.n_heads):
        q, k, v = (x[:n] for x in (cap.query(layer, h), cap.key(layer, h), cap.value(layer, h)))
        naive = att.head_steps(q, k, v, scale=scale, window=window)
        scores.append(naive.scaled[lower])
        for b in diffs:
            run = att.flash_attention(q, k, v, b, b, scale=scale, window=window)
            diffs[b].append(f"{float(np.abs(run.out - naive.out).max()):.1e}")
    d_head = cap.q.shape[-1]
    options = []
    for b in block_options(n):
        naive_bytes, tiled_bytes = att.attention_memory(n, d_head, min(b, n), min(b, n))
        far_naive, far_tiled = att.attention_memory(FAR_TOKENS, d_head, b, b)
        options.append({"block": b, "naive": naive_bytes, "tiled": tiled_bytes, "far_naive": far_naive,
                        "far_tiled": far_tiled, "diff": diffs[b]})
    return {"n": n, "window": window, "scores": pack_f32(np.concatenate(scores)), "options": options,
            "default": default_block(n)}


@st.cache_resource(max_entries=8, show_spinner=False)
def _layer_steps(model_name: str, text: str, max_tokens: int, layer: int, lang: str) -> dict:
    """Everything the formula, the unmasked heatmap and flash attention draw for one layer, every
    head: the step matrices cut to what the tables show, the model's check, the heads put together,
    the weights without the mask, flash attention's scores and runs."""
    cap = _cap(model_name, text, max_tokens)
    loaded = get_model(model_name)
    scale = att.module_scale(loaded, layer)
    tt, dh = cap.n_tokens, cap.q.shape[-1]
    n, d = min(tt, STEP_TOKENS), min(dh, STEP_DIMS)
    m = min(tt, HEATMAP_MAX_TOKENS)
    attn = cap.attn_layer(layer)  # [H, T, T] the model's own weights
    steps, unmasked, future = [], [], []
    for h in range(cap.n_heads):
        s = att.capture_head_steps(cap, layer, h, scale=scale)
        diff = float(np.abs(s.weights - attn[h]).max())
        steps.append({"q": _round(s.q[:n, :d]), "k": _round(s.k[:n, :d]), "v": _round(s.v[:n, :d]),
                      "scores": _round(s.scores[:n, :n]), "scaled": _round(s.scaled[:n, :n]),
                      "weights": _round(s.weights[:n, :n]), "out": _round(s.out[:n, :d]),
                      "check": t("attention.check", diff=f"{diff:.1e}"), "ok": diff < 1e-4,
                      "qkv": t("attention.step.qkv_shape", t=num(tt), dh=num(dh), kv=num(cap.kv_head(h)))})
        if tt >= 2:
            free = att.capture_head_steps(cap, layer, h, scale=scale, causal=False)
            unmasked.append(free.weights[:m, :m])
            future.append(float((free.weights * ~att.causal_mask(tt)).sum(-1)[:-1].mean()))  # the last row has no future
    mask = att.capture_head_steps(cap, layer, 0, scale=scale).mask
    out = layer_output(model_name, text, max_tokens, layer)
    share = np.linalg.norm(out.per_head, axis=-1).mean(-1)  # [H] average length of what each head writes
    shape = dict(t=num(tt), dh=num(dh), scale=num(scale, 4), root=num(float(np.sqrt(dh)), 2),
                 window=num(core.model().info.sliding_window or 0))
    formula = {"n": n, "d": d, "more": dh > d, "mask": mask[:n, :n].astype(int).ravel().tolist(), "heads": steps,
               "captions": {k: t(f"attention.step.{k}_shape", **shape) for k in ("scores", "scale", "mask", "softmax")}
               | {"sum": t("attention.step.sum_shape", t=num(tt), dh=num(dh)),
                  "concat": t("attention.step.concat_shape", t=num(tt), h=num(cap.n_heads), dh=num(dh),
                              hd=num(cap.n_heads * dh), d=num(out.out.shape[1]))},
               "share": share.tolist(), "o": _round(out.out[:n, :d]),
               "proj": t("attention.step.proj_module", module=proj_name(loaded, layer), layer=num(layer))}
    masked = {"n": m, "weights": pack_u16(np.stack(unmasked)) if unmasked else None, "future": future}
    return {"layer": layer, "formula": formula, "mask": masked, "flash": flash_cases(cap, layer, scale)}


def steps_data(cap: Capture, layer: int, head: int, part: str) -> dict:
    """One of the three sections' data (`part`: "formula", "mask" or "flash"): the chosen layer's
    heads, keyed on (model, text, language, layer), never on the head: a head move sends nothing."""
    lang = core.lang()
    sent = _layer_steps(core.model_name(), cap.text, core.cut(cap), layer, lang)
    token = st.session_state.get(CHOSEN_TOKEN, "")
    labels = {"head": t("attention.head"), "loading": t("attention.view.loading"),
              "unavailable": t("views.unavailable"), "table": t("chart.as_table")}
    extra: dict = {}
    if part == "formula":
        labels |= {f"tab_{s}": t(f"attention.step.{s}") for s in STEP_TABS}
        labels |= {"tabs": t("attention.formula.header"), "concat_title": t("attention.step.concat_title"),
                   "head_n": t("attention.head_n"), "share": t("attention.step.concat_share")}
        extra = {"tokens": token_labels(cap.tokens, STEP_TOKENS), "palette": PALETTE,
                 "config": modebar_config("attention.step.concat_chart")}
    elif part == "mask":
        labels |= {"x": t("attention.axis.key"), "y": t("attention.axis.query"), "weight": t("attention.axis.weight"),
                   "hover": t("attention.hover"), "title": t("attention.unmasked.title"),
                   "metric": t("attention.unmasked.metric"), "help": t("attention.unmasked.help"),
                   "one_token": t("attention.unmasked.one_token"),
                   "corner": f"{t('attention.axis.query')} / {t('attention.axis.key')}"}
        n = sent["mask"]["n"]
        extra = {"tokens": token_labels(cap.tokens, n), "ticks": [esc(x) for x in cap.tokens[:n]],
                 "colorscale": COLORSCALE, "config": modebar_config("attention.unmasked_chart")}
    else:
        labels |= {k: t(f"attention.flash.{k}") for k in ("block", "step", "todo", "skipped", "done", "current", "x",
                                                           "y", "tile", "max", "sum", "rescale", "diff", "naive_mem",
                                                           "tiled_mem", "mem_caption", "cut")}
        labels["corner"] = f"{t('attention.flash.y')} / {t('attention.flash.x')}"
        n = sent["flash"]["n"]
        asked = st.session_state.get("attention.block")  # a link's tile size, taken once by the view
        asked = asked if isinstance(asked, int) and asked in block_options(n) else None
        extra = {"tokens": token_labels(cap.tokens, n), "total": cap.n_tokens, "far": FAR_TOKENS,
                 "colours": list(FLASH_COLOURS), "config": modebar_config("attention.flash_chart"),
                 "asked_block": asked}
    chosen = {"layer": layer, "head": head, "token": token}
    if part == "flash":
        chosen["block"] = extra["asked_block"] or sent["flash"]["default"]
    return dict(sent[part], part=part, layer=layer, labels=labels, lang=lang, n_heads=cap.n_heads, **extra,
                key=browser.data_key(core.model_name(), cap.text, lang, layer, part, token),
                text_key=browser.data_key(core.model_name(), cap.text, lang, part), chosen=chosen)


# --------------------------------------------------------------------------- figures


def overview_figure(attn: np.ndarray, n: int, labels: dict[str, str],
                    strongest: list[list[str]]) -> go.Figure:
    """Every layer x head as one small heatmap, tiled into a single image (fast for 30 x 9).

    Layers run across, heads down. A transparent square marker sits on each thumbnail: clicking
    it selects that head (heatmap cells themselves cannot be selected in plotly).
    """
    n_layers, n_heads = attn.shape[:2]
    cell = n + 1  # one blank row/column between thumbnails
    big = np.full((n_heads * cell, n_layers * cell), np.nan, dtype=np.float32)  # half the bytes of float64
    tri = np.tril(np.ones((n, n), dtype=bool))
    for layer in range(n_layers):
        for head in range(n_heads):
            block = np.where(tri, attn[layer, head, :n, :n], np.nan)
            big[head * cell:head * cell + n, layer * cell:layer * cell + n] = block
    fig = go.Figure(go.Heatmap(z=big, zmin=0, zmax=1, colorscale=COLORSCALE, showscale=False, hoverinfo="skip"))
    centers = [(layer * cell + (n - 1) / 2, head * cell + (n - 1) / 2, layer, head)
               for layer in range(n_layers) for head in range(n_heads)]
    fig.add_trace(go.Scatter(
        x=[c[0] for c in centers], y=[c[1] for c in centers], mode="markers",
        marker=dict(symbol="square", size=max(8, min(34, 900 // max(n_layers, 1) - 4)), color="rgba(0,0,0,0)"),
        customdata=[[c[2], c[3]] for c in centers],
        text=[labels["hover"].format(layer=c[2], head=c[3], pattern=strongest[c[2]][c[3]]) for c in centers],
        hoverinfo="text", selected=dict(marker=dict(opacity=1)), unselected=dict(marker=dict(opacity=1)),
        showlegend=False))
    fig.update_xaxes(tickmode="array", tickvals=[layer * cell + (n - 1) / 2 for layer in range(n_layers)],
                     ticktext=[str(layer) for layer in range(n_layers)], title=labels["x"], showgrid=False,
                     zeroline=False, range=[-1.5, n_layers * cell])
    fig.update_yaxes(tickmode="array", tickvals=[head * cell + (n - 1) / 2 for head in range(n_heads)],
                     ticktext=[str(head) for head in range(n_heads)], title=labels["y"], showgrid=False,
                     zeroline=False, range=[n_heads * cell - 0.5, -0.5])  # top down; no padding for the markers
    fig.update_layout(height=overview_height(n_layers, n_heads), margin=dict(l=10, r=10, t=10, b=10),
                      dragmode=False, clickmode="event+select", plot_bgcolor="#f4f4f4")
    return fig


OVERVIEW_WIDTH_PX = 900  # the plot's width on a laptop (1400 px wide, sidebar open)
OVERVIEW_ROW_PX = (24, 56)  # the height of one row of thumbnails, at least and at most
OVERVIEW_AXES_PX = 80  # the axes' ticks and titles around the thumbnails


def overview_height(n_layers: int, n_heads: int) -> int:
    """The overview's height in px: its rows of thumbnails (one per head) times a row's height, plus
    the axes. A row is as tall as a thumbnail is wide on a laptop (square thumbnails there); the
    heatmap then fills the plot at any width (it is not held square, so on a phone the thumbnails
    are narrower, never a strip a few pixels high).

    Example: overview_height(30, 9) -> 350 (30 px a row); overview_height(18, 4) -> 280 (50 px)
    """
    row = min(max(OVERVIEW_WIDTH_PX // max(n_layers, 1), OVERVIEW_ROW_PX[0]), OVERVIEW_ROW_PX[1])
    return n_heads * row + OVERVIEW_AXES_PX


def gqa_figure(n_heads: int, n_kv_heads: int, labels: dict[str, str]) -> go.Figure:
    """Query heads on the left, key/value heads on the right, a line for each read."""
    groups = att.gqa_groups(n_heads, n_kv_heads)
    fig = go.Figure()
    span = max(n_heads - 1, 1)

    def y_kv(g: int) -> float:
        return span * (g + 0.5) / n_kv_heads

    for g, members in enumerate(groups):
        color = PALETTE[g % len(PALETTE)]
        for h in members:
            fig.add_trace(go.Scatter(x=[0, 1], y=[h, y_kv(g)], mode="lines", line=dict(color=color, width=2),
                                     hoverinfo="skip", showlegend=False))
        fig.add_trace(go.Scatter(x=[0] * len(members), y=list(members), mode="markers+text",
                                 marker=dict(size=16, color=color), text=[labels["q"].format(h=h) for h in members],
                                 textposition="middle left", hoverinfo="skip", showlegend=False))
        fig.add_trace(go.Scatter(x=[1], y=[y_kv(g)], mode="markers+text", marker=dict(size=22, color=color, symbol="square"),
                                 text=[labels["kv"].format(g=g)], textposition="middle right", hoverinfo="skip",
                                 showlegend=False))
    fig.update_xaxes(visible=False, range=[-0.6, 1.6])
    fig.update_yaxes(visible=False, autorange="reversed")
    fig.update_layout(height=max(220, 26 * n_heads + 60), margin=dict(l=10, r=10, t=30, b=10), title=labels["title"])
    return fig


def mask_figure(n: int, labels: dict[str, str]) -> go.Figure:
    """Causal (decoder), none (encoder), cross-attention (decoder queries x encoder keys)."""
    fig = make_subplots(1, 3, subplot_titles=(labels["causal"], labels["none"], labels["cross"]), horizontal_spacing=0.08)
    mats = (np.tril(np.ones((n, n))), np.ones((n, n)), np.ones((n - 2, n)))
    for i, m in enumerate(mats, start=1):
        fig.add_trace(go.Heatmap(z=m, zmin=0, zmax=1, colorscale=[[0, "#eeeeee"], [1, PALETTE[0]]], showscale=False,
                                 xgap=2, ygap=2, hoverinfo="skip"), 1, i)
        fig.update_yaxes(autorange="reversed", showticklabels=False, title=labels["y"] if i == 1 else None, row=1, col=i)
        fig.update_xaxes(showticklabels=False, title=labels["x_cross"] if i == 3 else labels["x"], row=1, col=i)
    fig.update_layout(height=280, margin=dict(l=10, r=10, t=40, b=10))
    return fig


def cost_figure(curves: dict[str, tuple[np.ndarray, np.ndarray]], mark: tuple[int, float] | None,
                labels: dict[str, str]) -> go.Figure:
    """Attention FLOPs against tokens (log-log) for each model, the learner's text marked."""
    fig = go.Figure()
    for i, (name, (x, y)) in enumerate(curves.items()):
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=name, line=dict(color=PALETTE[i % len(PALETTE)])))
    if mark:
        fig.add_trace(go.Scatter(x=[mark[0]], y=[mark[1]], mode="markers", name=labels["yours"],
                                 marker=dict(size=12, color=PALETTE[3])))
    fig.update_xaxes(type="log", title=labels["x"])
    fig.update_yaxes(type="log", title=labels["y"])
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=40, b=10), title=labels["title"],
                      legend=dict(orientation="h", y=-0.25))
    return fig


def memory_figure(x: np.ndarray, naive: np.ndarray, tiled: np.ndarray, labels: dict[str, str]) -> go.Figure:
    fig = go.Figure([go.Scatter(x=x, y=naive, name=labels["naive"], line=dict(color=PALETTE[1])),
                     go.Scatter(x=x, y=tiled, name=labels["tiled"], line=dict(color=PALETTE[2]))])
    fig.update_xaxes(type="log", title=labels["x"])
    fig.update_yaxes(type="log", title=labels["y"])
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=40, b=10), title=labels["title"],
                      legend=dict(orientation="h", y=-0.25))
    return fig


# The tiles' states: to do, skipped, done, the current one (apart with red-green deficiencies too).
FLASH_COLOURS = ("#eef2f7", "#b4b4b4", PALETTE[0], PALETTE[3])


# --------------------------------------------------------------------------- page sections


def overview(cap: Capture, scores: dict[str, np.ndarray]) -> None:
    n = min(cap.n_tokens, OVERVIEW_TOKENS)
    if cap.n_tokens > n:
        st.caption(t("attention.overview_cut", n=num(n), total=num(cap.n_tokens)))
    spec = overview_spec(core.model_name(), cap.text, core.cut(cap), n, core.lang(), scores)
    st.plotly_chart(Spec(spec), key="attention.overview", on_select=open_clicked_head, selection_mode="points",
                    config={"displayModeBar": False})


@st.cache_resource(max_entries=8, show_spinner=False)
def overview_spec(model_name: str, text: str, max_tokens: int, n: int, lang: str, _scores: dict) -> dict:
    """The overview's plotly JSON, built once per capture and language (the scores are those of the
    same capture, hence not part of the key)."""
    def name(layer_: int, head_: int) -> str:
        best = att.strongest_pattern({k: float(v[layer_, head_]) for k, v in _scores.items()})
        return t(f"attention.pattern.{best}") if best else t("attention.pattern.mixed")

    cap = _cap(model_name, text, max_tokens)
    strongest = [[name(lay, hd) for hd in range(cap.n_heads)] for lay in range(cap.n_layers)]
    labels = {"x": t("attention.layer"), "y": t("attention.head"), "hover": t("attention.overview_hover")}
    thumbs = first_tokens_attention(model_name, text, max_tokens, n)
    return overview_figure(thumbs, n, labels, strongest).to_dict()


def gqa_section(info, cap: Capture | None, config: dict, live_name: str, mark: str = "") -> None:
    """GQA's groups, whether the capture's heads of a group share their keys and values, and what
    that saves. Far below the first screen: computed when the learner reaches it (`mark`: the
    page's inputs, ui.views.follow); the check reads every layer's keys and values. The figure and the
    check are kept per model, text and language, so a full run of the page rebuilds neither."""
    with follow.when_reached("attention.gqa_box", mark) as now:
        if not now:
            return
        lang = core.lang()
        left, right = st.columns([2, 3])
        live_chart(gqa_spec(info.n_heads, info.n_kv_heads, lang), key="attention.gqa_chart", where=left)
        with right:
            if info.n_kv_heads == info.n_heads:
                st.info(t("attention.gqa.none"))
            elif cap is not None:
                same = kv_shared(core.model_name(), cap.text, core.cut(cap), info.n_heads, info.n_kv_heads)
                st.success(t("attention.gqa.shared" if same else "attention.gqa.not_shared",
                             g=num(info.group_size)))
            saving = {v.name: v for v in att.kv_variants(config, KV_TOKENS)}["grouped"].saving
            st.metric(t("attention.gqa.saving"), f"{num(saving, 1)}×")
        styles.table(kv_table(live_name, config, lang), "attention.kv_table")
        st.caption(t("attention.kv.caption", tokens=num(KV_TOKENS)))


@st.cache_resource(max_entries=8, show_spinner=False)
def gqa_spec(n_heads: int, n_kv_heads: int, lang: str) -> dict:
    labels = {"q": t("attention.gqa.q"), "kv": t("attention.gqa.kv"),
              "title": t("attention.gqa.title", h=num(n_heads), kv=num(n_kv_heads))}
    return gqa_figure(n_heads, n_kv_heads, labels).to_dict()


@st.cache_resource(max_entries=8, show_spinner=False)
def kv_shared(model_name: str, text: str, max_tokens: int, n_heads: int, n_kv_heads: int) -> bool:
    """Whether every query head of a group reads the very same keys and values, in every layer."""
    cap = _cap(model_name, text, max_tokens)
    return all(np.array_equal(cap.key(layer, h), cap.key(layer, g[0])) and
               np.array_equal(cap.value(layer, h), cap.value(layer, g[0]))
               for layer in range(cap.n_layers) for g in att.gqa_groups(n_heads, n_kv_heads) for h in g)


def kv_table(live_name: str, config: dict, lang: str) -> pd.DataFrame:
    """The KV cache of each attention variant, for the live model and Llama-3 8B (a fresh frame:
    `config` is the model's config dict, the language picks the labels)."""
    rows = []
    for name, cfg in ((live_name, config), ("Llama-3 8B", REFERENCE_MODELS["Llama-3 8B"])):
        for v, own in att.shown_variants(att.kv_variants(cfg, KV_TOKENS)):
            variant = t(f"attention.kv.{v.name}")
            rows.append({t("attention.kv.model"): name,
                         t("attention.kv.variant"): t("attention.kv.own", variant=variant) if own else variant,
                         t("attention.kv.heads"): num(v.n_kv_heads),
                         t("attention.kv.mb"): num(v.bytes / 1e6, 1),
                         t("attention.kv.saving"): f"{num(v.saving, 1)}×",
                         t("attention.kv.effect"): t(f"attention.kv.effect.{v.name}")})
    return pd.DataFrame(rows)


def mask_kinds() -> None:
    """The three kinds of mask (the same for every text and head: drawn outside the head's fragment)."""
    live_chart(mask_spec(core.lang()), key="attention.mask_chart")


@st.cache_resource(max_entries=4, show_spinner=False)
def mask_spec(lang: str) -> dict:
    labels = {"causal": t("attention.mask.causal"), "none": t("attention.mask.none"), "cross": t("attention.mask.cross"),
              "x": t("attention.axis.key"), "x_cross": t("attention.mask.x_cross"), "y": t("attention.axis.query")}
    return mask_figure(6, labels).to_dict()


@st.fragment
def scaling_section(d_head: int, mark: str = "") -> None:
    """The scaling demo (the same for every text): computed when the learner reaches it (`mark`:
    the model, ui.views.follow), then drawn in the browser (static/views/attention_steps.js, "scaling")
    from every d_head's results sent once: moving d_head runs nothing here."""
    with follow.when_reached("attention.scaling_box", mark) as now:
        if not now:
            return
        browser.view(STEP_VIEW, "attention.scaling_view", scaling_data(d_head))


SCALING_BINS = 60  # the histogram's bins, per series


def _histogram(x: np.ndarray) -> dict:
    counts, edges = np.histogram(x, bins=SCALING_BINS)
    return {"counts": counts.tolist(), "lo": float(edges[0]), "width": float(edges[1] - edges[0])}


@st.cache_resource(max_entries=8, show_spinner=False)
def _scaling_options(d_head: int) -> list[dict]:
    """Every d_head the demo offers (the model's own among them), each one's seeded results: the
    spread of the scores as histograms, the example row's weights, the four numbers."""
    out = []
    for dh in sorted(set(D_HEADS) | {d_head}):
        demo = scaling(dh, 0)
        out.append({"dh": dh, "var_raw": demo.var_raw, "var_scaled": demo.var_scaled, "max_raw": demo.max_raw,
                    "max_scaled": demo.max_scaled, "weights_raw": demo.weights_raw.tolist(),
                    "weights_scaled": demo.weights_scaled.tolist(), "raw": _histogram(demo.raw),
                    "scaled": _histogram(demo.scaled)})
    return out


def scaling_data(d_head: int) -> dict:
    """The scaling view's data: every d_head's results, the labels, the d_head to start from (the
    model's, or a link's once)."""
    lang = core.lang()
    options = _scaling_options(int(d_head))
    token = st.session_state.get(CHOSEN_TOKEN, "")
    asked = st.session_state.get("attention.dh")  # a link's d_head, taken once by the view
    asked = asked if isinstance(asked, int) and asked in [o["dh"] for o in options] else None
    demo = scaling(int(d_head), 0)
    keys = len(demo.weights_raw)
    labels = {k: t(f"attention.scaling.{k}") for k in ("dh", "var_raw", "var_scaled", "max_raw", "max_scaled", "spread",
                                                         "row", "raw", "scaled", "key")}
    labels |= {"table": t("chart.as_table"), "unavailable": t("views.unavailable"),
               "caption": t("attention.scaling.seed", n=num(len(demo.raw)), seed=num(demo.seed),
                            rows=num(len(demo.raw) // keys), keys=num(keys)),
               "from": t("attention.scaling.bin_from"), "to": t("attention.scaling.bin_to"),
               "count": t("attention.scaling.bin_count")}
    return {"part": "scaling", "options": options, "default": int(d_head), "asked_dh": asked, "lang": lang,
            "labels": labels, "palette": PALETTE, "config": modebar_config("attention.scaling_chart"),
            "chosen": {"dh": asked or int(d_head), "token": token}, "layer": 0, "n_heads": 1,
            "key": browser.data_key("scaling", int(d_head), lang, token), "text_key": browser.data_key("scaling", lang)}


def scaling_spec(dh: int, lang: str) -> dict:
    """The scaling demo's figure for one Dh (a seeded draw: the same every time), built once per
    value and language: the Dh slider's few states are each drawn once."""
    labels = {"spread": t("attention.scaling.spread"), "row": t("attention.scaling.row"), "raw": t("attention.scaling.raw"),
              "scaled": t("attention.scaling.scaled"), "key": t("attention.scaling.key")}
    return scaling_figure(scaling(dh, 0), labels).to_dict()


def cost_section(info, n_tokens: int | None, live_name: str, mark: str = "") -> None:
    """What attention costs as the text grows, and its memory: computed when the learner reaches it
    (`mark`: the page's inputs, ui.views.follow)."""
    with follow.when_reached("attention.cost_box", mark) as now:
        if not now:
            return
        width = info.n_heads * info.d_head
        lang = core.lang()
        n_local = sum(x == "sliding_attention" for x in info.layer_types)
        win = dict(window=info.sliding_window, n_local=n_local)
        left, right = st.columns(2)
        live_chart(cost_spec(live_name, width, info.n_layers, n_tokens, lang, info.sliding_window, n_local,
                             info.context_length), key="attention.cost_chart", where=left)
        live_chart(memory_spec(info.d_head, lang), key="attention.memory_chart", where=right)
        if n_tokens:
            st.markdown(t("attention.cost.yours_text", n=num(n_tokens),
                          flops=num(att.attention_flops(n_tokens, width, info.n_layers) / 1e6, 1),
                          causal=num(att.attention_flops(n_tokens, width, info.n_layers, causal=True) / 1e6, 1),
                          windowed=num(att.attention_flops(n_tokens, width, info.n_layers, causal=True, **win) / 1e6, 1),
                          n_local=num(n_local), window=num(info.sliding_window or 0),
                          l=num(info.n_layers), d=num(width)))


COST_TOKENS = np.unique(np.geomspace(16, 131072, 60).astype(int))  # the cost curves' x: 16 to 128k tokens


@st.cache_resource(max_entries=8, show_spinner=False)
def cost_spec(live_name: str, width: int, n_layers: int, n_tokens: int | None, lang: str,
              window: int | None = None, n_local: int = 0, context: int | None = None) -> dict:
    """Attention's FLOPs against the text length, the live model beside Llama-3 8B, the learner's
    text marked (the same for every head: built once per model, length and language). The live
    model's windowed layers count their window only, and its curve stops at its context."""
    x = COST_TOKENS
    llama = REFERENCE_MODELS["Llama-3 8B"]
    mine = x[x <= context] if context else x
    curves = {live_name: (mine, np.array([att.attention_flops(n, width, n_layers, window=window, n_local=n_local)
                                          for n in mine])),
              "Llama-3 8B": (x, np.array([att.attention_flops(n, llama["hidden_size"], llama["num_hidden_layers"])
                                          for n in x]))}
    mark = (n_tokens, att.attention_flops(n_tokens, width, n_layers, window=window, n_local=n_local)) if n_tokens else None
    return cost_figure(curves, mark, {"x": t("attention.cost.x"), "y": t("attention.cost.y"),
                                      "title": t("attention.cost.title"), "yours": t("attention.cost.yours")}).to_dict()


@st.cache_resource(max_entries=8, show_spinner=False)
def memory_spec(d_head: int, lang: str) -> dict:
    """The attention matrix's memory against a tiled run's, by text length."""
    x = COST_TOKENS
    mem = [att.attention_memory(int(n), d_head, 64, 64) for n in x]
    return memory_figure(x, np.array([m[0] for m in mem]), np.array([m[1] for m in mem]),
                         {"x": t("attention.cost.x"), "y": t("attention.memory.y"), "title": t("attention.memory.title"),
                          "naive": t("attention.memory.naive"), "tiled": t("attention.memory.tiled")}).to_dict()


def block_options(n_tokens: int) -> list[int]:
    """Tile sizes worth stepping through: no more than MAX_BLOCKS_PER_SIDE tiles along a side."""
    return [b for b in BLOCKS if -(-n_tokens // b) <= MAX_BLOCKS_PER_SIDE] or [BLOCKS[-1]]


def default_block(n_tokens: int) -> int:
    """The smallest tile that cuts the text into at most 4 blocks a side (a handful of tiles)."""
    options = block_options(n_tokens)
    return next((b for b in options if -(-n_tokens // b) <= 4), options[-1])


def bertviz_section(model_name: str, cap: Capture, layer: int) -> None:
    """bertviz's two views, in tabs that know which one is open: only that view's page is built
    and sent (each is a document of its own for the browser to load)."""
    tabs = st.tabs([t("attention.bertviz.head_tab"), t("attention.bertviz.model_tab")], key="attention.bertviz_tab",
                   on_change="rerun")
    if tabs[0].open:
        with tabs[0]:
            n = min(cap.n_tokens, BERTVIZ_HEAD_TOKENS)
            st.caption(t("attention.bertviz.head_cap", layer=num(layer), n=num(n), total=num(cap.n_tokens)))
            view = bertviz(model_name, cap.text, core.cut(cap), "head", (layer,), n)
            if not view.offline:
                st.warning(t("bertviz.cdn"))
            st.iframe(as_document(view.html, core.lang(), t("attention.bertviz.head_tab")), height=head_view_height(n))
    if tabs[1].open:
        with tabs[1]:
            default = [layer]
            kept = [c for c in st.session_state.get("attention.bertviz_layers", default) if 0 <= c < cap.n_layers]
            st.session_state["attention.bertviz_layers"] = kept[:BERTVIZ_MODEL_LAYERS] or default
            chosen = st.multiselect(t("attention.bertviz.layers", max=num(BERTVIZ_MODEL_LAYERS)),
                                    options=list(range(cap.n_layers)), max_selections=BERTVIZ_MODEL_LAYERS,
                                    key="attention.bertviz_layers") or default
            n = min(cap.n_tokens, BERTVIZ_MODEL_TOKENS)
            st.caption(t("attention.bertviz.model_cap", n=num(n), total=num(cap.n_tokens), layers=num(len(chosen))))
            view = bertviz(model_name, cap.text, core.cut(cap), "model", tuple(sorted(chosen)), n)
            if not view.offline:
                st.warning(t("bertviz.cdn"))
            st.iframe(as_document(view.html, core.lang(), t("attention.bertviz.model_tab")), height=140 * len(chosen) + 160)


def proj_name(loaded, layer: int) -> str:
    """The output projection's name inside its block ("self_attn.o_proj", GPT-2's "attn.c_proj")."""
    block = loaded.adapter.blocks(loaded.model)[layer]
    target = loaded.adapter.o_proj(block)
    return next((n for n, m in block.named_modules() if m is target), "o_proj")
