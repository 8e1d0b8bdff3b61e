"""Streamlit and plotly helpers for the block lesson (pages/06_block.py).

Heavy work is cached here per (model, text): the attention/MLP split of every block, the logit
lens over the last LENS_WINDOW positions, one layer's MLP branches. The token whose contributions
are drawn and the lens's layer and position are answered in the browser (static/views/block.js)
from every token's and every layer's results, sent once per text; the norm's layer and token and
the MLP's layer stay coarse choices of the server, which reads them from the cached results: the
model never re-runs.
"""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from lib.lessons import block as blk
from lib.lessons.logit_lens import Lens, lens_positions
from lib.lessons.reference import REFERENCE_MODELS
from lib.model.arithmetic import dims
from lib.model.capture import DEFAULT_MAX_TOKENS, Capture
from lib.model.models import LoadedModel
from lib.model.tokens import readable_tokens
from lib.serving.payload import pack_ints, pack_u16
from ui.lessons.block import lens_service
from ui.lessons.block.lens_service import LENS_WINDOW
from ui.shell.cache import get_capture, get_model
from ui.shell.core import lang as core_lang, num, t
from ui.views import browser
from ui.views.chart_table import as_table
from ui.views.export import modebar_config
from ui.views.figures import PALETTE, colorscale, quick, subplot_layout, wrap
from ui.views.live_chart import as_spec, live_chart

TOP_NEURONS = 10
SHORT = 10  # characters of a token shown inside a heatmap cell
SEED_MODEL = "Llama-3 8B"  # the model whose MLP width seed 001 works out

# --------------------------------------------------------------------------- cached computations


@st.cache_resource(max_entries=4, show_spinner=False)  # 2 × [L, T, D] floats each: 70 MB at 512 tokens
def get_contributions(model_name: str, text: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> blk.Contributions:
    return blk.contributions(get_model(model_name), get_capture(model_name, text, max_tokens))


@st.cache_resource(max_entries=16, show_spinner=False)
def get_branches(model_name: str, text: str, max_tokens: int, layer: int) -> blk.MlpBranches:
    contrib = get_contributions(model_name, text, max_tokens)
    return blk.mlp_branches(get_model(model_name), get_capture(model_name, text, max_tokens), layer,
                            contrib.attn_out[layer])


@st.cache_resource(max_entries=16, show_spinner=False)
def get_collapse(model_name: str, text: str, max_tokens: int, layer: int) -> blk.Collapse:
    branches = get_branches(model_name, text, max_tokens, layer)
    return blk.mlp_collapse(get_model(model_name), layer, branches.normed)


@st.cache_resource(max_entries=64, show_spinner=False)
def token_strings(model_name: str, ids: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(readable_tokens(get_model(model_name).tokenizer, list(ids)))


# --------------------------------------------------------------------------- small helpers


def sci(x: float) -> str:
    """A tiny or huge number as 2.8 × 10⁻¹⁴ (decimal mark of the current language)."""
    if x == 0 or not math.isfinite(x):
        return num(x)
    e = int(math.floor(math.log10(abs(x))))
    if -3 <= e <= 4:
        return num(x, 3 if e < 0 else 2)
    sup = str(e).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{num(round(x / 10 ** e, 1))} × 10{sup}"


def clamp_state(key: str, lo: int, hi: int, default: int) -> None:
    """Keep a widget's remembered value inside lo..hi (the model or the text may have changed),
    saying so when it had to move."""
    value = st.session_state.get(key, default)
    try:
        value = int(value)
    except (TypeError, ValueError):
        value = default
    if value < lo or value > hi:
        st.warning(t("block.clamped", value=num(value), lo=num(lo), hi=num(hi)))
        value = min(max(value, lo), hi)
    st.session_state[key] = value


def token_label(cap: Capture, i: int) -> str:
    return f"{i}: {cap.tokens[i]}"


def short(s: str) -> str:
    return s if len(s) <= SHORT else s[: SHORT - 1] + "…"


def esc(s: str) -> str:
    """A token for plotly text, which reads a subset of HTML: "<img" must stay text."""
    return html.escape(s, quote=False)


def md(s: str) -> str:
    """A token for Markdown (captions, prose): punctuation such as $ * _ ` must not format anything."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|$<>~])", r"\\\1", s)


def shape(s: tuple[int, ...]) -> str:
    return "[" + ", ".join(num(x) for x in s) + "]"


# --------------------------------------------------------------------------- the block, drawn


def diagram_figure(steps: list[blk.Step], labels: dict[str, str]) -> go.Figure:
    """The block as boxes and arrows: the residual spine on the left, the two branches on the
    right, each reading a normalised copy and adding its result back on the spine (through one
    more norm where the model has post-norms)."""
    by_kind = {s.kind: s for s in steps}
    inside = steps[1:-2]  # the block alone: between the embedding and the final norm
    norms = [s for s in inside if s.kind == "norm"]
    spine, cx, w, gap = 1.4, 6.4, 5.6, 1.45
    rows = [(s.kind, s if s.kind != "add" else None, -1.5 - gap * i) for i, s in enumerate(inside)]
    bottom = rows[-1][2]
    fig = go.Figure()
    fills = {"norm": "#DCE8F5", "attention": "#FCE3CC", "mlp": "#D9EED5"}
    ann = []

    def arrow(x0, y0, x1, y1):
        ann.append(dict(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", showarrow=True,
                        arrowhead=2, arrowsize=1.2, arrowwidth=1.5, arrowcolor="#555", text=""))

    fig.add_shape(type="line", x0=spine, y0=0.2, x1=spine, y1=bottom - 1.05, line=dict(color="#888", width=4),
                  layer="below")
    ann.append(dict(x=spine, y=bottom - 1.3, ax=spine, ay=bottom - 0.9, xref="x", yref="y", axref="x", ayref="y",
                    showarrow=True, arrowhead=2, arrowsize=0.8, arrowwidth=4, arrowcolor="#888", text=""))
    for kind, step, y in rows:
        if kind == "add":  # a marker, not a shape: its size is in pixels, so it stays round
            fig.add_trace(go.Scatter(x=[spine], y=[y], mode="markers+text", text=["<b>+</b>"], hoverinfo="skip",
                                     textfont=dict(size=18, color="#333"),
                                     marker=dict(size=30, color="white", line=dict(color="#333", width=2))))
            ann.append(dict(x=spine - 0.45, y=y, text=labels["add"], showarrow=False, xanchor="right",
                            font=dict(size=12)))
            continue
        fig.add_shape(type="rect", x0=cx - w / 2, y0=y - 0.5, x1=cx + w / 2, y1=y + 0.5, fillcolor=fills[kind],
                      line=dict(color="#555", width=1.5))
        # Short lines, so the diagram reads on a phone (plotly does not wrap an annotation): the
        # module's name joins the label, the shapes follow a few to a line, the module's path
        # shows on hover.
        lines: list[str] = []
        for n, s in step.inner:
            item = f"{n} {shape(s)}"
            if lines and len(lines[-1]) + 3 + len(item) <= 48:
                lines[-1] += " · " + item
            else:
                lines.append(item)
        text = "<br>".join([f"<b>{labels[kind]}</b>"] + [f"<span style='font-size:10px'>{x}</span>" for x in lines])
        ann.append(dict(x=cx, y=y, text=text, showarrow=False, font=dict(size=12), hovertext=step.module))
        continue
    # Branches: from the spine to the first box, box to box, the last box back to the spine's adder.
    branch: list[float] = []
    for kind, _, y in rows:
        if kind != "add":
            branch.append(y)
            continue
        top, last = branch[0], branch[-1]
        fig.add_shape(type="line", x0=spine, y0=top + 0.85, x1=cx, y1=top + 0.85, line=dict(color="#555", width=1.5))
        arrow(cx, top + 0.85, cx, top + 0.5)
        for y0, y1 in zip(branch, branch[1:]):
            arrow(cx, y0 - 0.5, cx, y1 + 0.5)
        fig.add_shape(type="line", x0=cx, y0=last - 0.5, x1=cx, y1=y, line=dict(color="#555", width=1.5))
        arrow(cx, y, spine + 0.3, y)
        ann.append(dict(x=cx + 0.1, y=(last - 0.5 + y) / 2, text=shape(by_kind["attention"].shape_out),
                        showarrow=False, xanchor="left", font=dict(size=11, color="#555")))
        branch = []
    ann.append(dict(x=spine, y=0.45, text=f"<b>{labels['in']}</b> {shape(norms[0].shape_in)}", showarrow=False,
                    xanchor="left", font=dict(size=12)))
    ann.append(dict(x=spine, y=bottom - 1.55, text="<br>".join(f"<b>{x}</b>" for x in wrap(labels["out"], 34).split("<br>")) + f" {shape(norms[0].shape_in)}",
                    showarrow=False, xanchor="left", font=dict(size=12)))
    ann.append(dict(x=spine - 0.2, y=bottom / 3.6, text=labels["residual"], showarrow=False, textangle=-90,
                    xanchor="right", font=dict(size=11, color="#666")))
    span = 0.8 - (bottom - 1.9)
    fig.update_layout(annotations=ann, height=round(560 * span / 11.4), margin=dict(l=10, r=10, t=10, b=10),
                      showlegend=False, plot_bgcolor="white", xaxis=dict(visible=False, range=[-0.5, 9.8]),
                      yaxis=dict(visible=False, range=[bottom - 1.9, 0.8]))
    return fig


@st.cache_resource(max_entries=32, show_spinner=False)
def diagram_spec(_lm: LoadedModel, model_key: str, n_tokens: int, lang: str) -> dict:
    """The diagram's plotly JSON, built once per model, text length and language (its dozens of
    shapes and labels, built through plotly's object model, were a third of the lesson's first run)."""
    info = _lm.info
    labels = {"norm": t(f"arch.{info.norm}"), "attention": t("block.diagram.attention"),
              "mlp": t("block.diagram.mlp", act=t(f"arch.{info.activation}")), "add": t("block.diagram.add"),
              "in": t("block.diagram.in"), "out": t("block.diagram.out", layers=num(info.n_layers)),
              "residual": t("block.diagram.residual")}
    return diagram_figure(blk.block_steps(_lm, n_tokens), labels).to_dict()


def render_diagram(lm: LoadedModel, n_tokens: int) -> None:
    steps = blk.block_steps(lm, n_tokens)
    live_chart(diagram_spec(lm, repr(lm.info), n_tokens, core_lang()), key="block.diagram")
    with st.expander(t("block.path.title")):
        st.dataframe(pd.DataFrame({
            t("block.path.step"): [t(f"block.step.{s.kind}") for s in steps],
            t("block.path.module"): [s.module or "—" for s in steps],
            t("block.path.in"): [shape(s.shape_in) for s in steps],
            t("block.path.out"): [shape(s.shape_out) for s in steps]}), hide_index=True, key="block.path")


# --------------------------------------------------------------------------- the norms


@st.fragment
def render_norm(lm: LoadedModel, cap: Capture, model_name: str) -> None:
    """The norm's layer is the server's (this section reruns alone: one layer's vectors sent); the
    token is answered in the browser (static/views/block.js) from every token's vector at that layer."""
    L = lm.info.n_layers
    clamp_state("block.norm_layer", 0, L - 1, min(L // 2, L - 1))
    layer = st.slider(t("block.norm.layer"), 0, L - 1, key="block.norm_layer")
    browser.view("block", "block.norm_view", norm_data(lm, cap, layer, browser.data_key(
        "norm", model_name, cap.token_ids.tobytes(), layer, core_lang(), link_token()), core_lang()))
    # The check over every token of the layer: our formula against the model's own module.
    st.success(t("block.norm.check", norm=t(f"arch.{lm.info.norm}"), diff=sci(norm_checks(lm, cap, layer).max())))


def norm_checks(lm: LoadedModel, cap: Capture, layer: int) -> np.ndarray:
    """[T] the largest gap between our norm and the model's own module, token by token."""
    module = blk.block_norm(lm, layer, "attn")
    params = blk.norm_params(module, lm.info.norm)
    theirs = blk.module_output(lm, module, cap.resid[layer])  # [T, D]
    ours = np.stack([blk.norm_steps(x, params).out for x in cap.resid[layer]])
    return np.abs(theirs - ours).max(axis=-1)


def norm_data(lm: LoadedModel, cap: Capture, layer: int, key: str, lang: str) -> dict:
    """Every token's vector entering `layer` (packed row by row: a few digits of each, whatever its
    scale), the norm's gain (and bias), and lib's numbers for each token: mean, RMS, σ, lengths, and
    the largest gap between RMSNorm and LayerNorm. The view draws the two outputs from these
    (static/views/block.js's normLines, held to lib.lessons.block.norm_steps by tests/js/block.test.js)."""
    params = blk.norm_params(blk.block_norm(lm, layer, "attn"), lm.info.norm)
    steps = [blk.norm_steps(x, params) for x in cap.resid[layer]]
    d = lm.info.d_model
    labels = {"token": t("block.norm.token"), "mean": t("block.norm.mean"), "rms": t("block.norm.rms"),
              "std": t("block.norm.std"), "length_in": t("block.norm.length_in"),
              "length_scaled": t("block.norm.length_scaled"),
              "sqrt_d": t("block.norm.sqrt_d", d=num(d), root=num(math.sqrt(d), 2)),
              "gap": t("block.norm.gap"), "rms_name": t("arch.rmsnorm"), "layer_name": t("arch.layernorm"),
              "title": t("block.norm.fig.x", layer=num(layer), token="{token}"),
              "table": t("chart.as_table"), "dim": t("block.norm.fig.dim"), "unavailable": t("views.unavailable"),
              "name": t("chart.block.norm_chart")}
    layout = subplot_layout((labels["title"], t("block.norm.fig.g"), t("block.norm.fig.out")), rows=3, cols=1,
                            shared_xaxes=True, vertical_spacing=0.07)
    layout["xaxis3"]["title"] = {"text": labels["dim"]}
    layout.update(height=520, autosize=True, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                  legend={"orientation": "h", "y": -0.08}, separators=t("plot.separators"))
    return {"key": key, "lang": lang, "part": "norm", "labels": labels, "tokens": list(cap.tokens),
            "settings": settings(cap, lm.info.n_layers), "x": [pack_u16(st_.x) for st_ in steps],
            "weight": params.weight.astype(np.float64).tolist(),
            "bias": None if params.bias is None else np.asarray(params.bias, dtype=np.float64).tolist(),
            "stats": [[s.mean, s.rms, s.std, float(np.linalg.norm(s.x)), float(np.linalg.norm(s.scaled)),
                       float(np.abs(s.rms_out - s.layer_out).max())] for s in steps],
            "layout": layout, "palette": list(PALETTE), "config": modebar_config("block.norm_chart") | {"responsive": True}}


# --------------------------------------------------------------------------- the residual stream


def residual_heatmap(norms: np.ndarray, tokens: list[str], labels: dict[str, str]) -> go.Figure:
    z = np.log10(np.maximum(norms, 1e-6))
    hover = [[labels["hover"].format(layer=l, token=esc(tokens[i]), norm=num(float(norms[l, i]), 1))
              for i in range(norms.shape[1])] for l in range(norms.shape[0])]
    fig = go.Figure(go.Heatmap(z=z, x=list(range(norms.shape[1])), y=list(range(norms.shape[0])), text=hover,
                               hoverinfo="text", colorscale="Viridis",
                               colorbar=dict(title=labels["color"], tickvals=list(range(0, 6)),
                                             ticktext=[num(10 ** e) for e in range(0, 6)])))
    n = len(tokens)
    step = max(1, n // 40)
    fig.update_layout(height=max(320, 14 * norms.shape[0] + 140), margin=dict(l=10, r=10, t=30, b=10),
                      xaxis=dict(title=labels["x"], tickvals=list(range(0, n, step)),
                                 ticktext=[esc(short(tokens[i])) for i in range(0, n, step)]),
                      yaxis=dict(title=labels["y"]), title=labels["title"])
    return fig


def residual_table(norms: np.ndarray, tokens: list[str], labels: dict[str, str]) -> pd.DataFrame:
    """The residual heatmap's numbers, not their logarithm: the stream's norm, one row per layer
    (as on the chart), one column per token ("i·token")."""
    frame = pd.DataFrame(norms.astype(np.float64), columns=[f"{i}·{tok}" for i, tok in enumerate(tokens)])
    frame.index.name = f"{labels['y']} / {labels['x']}"
    return frame


def render_residual(lm: LoadedModel, cap: Capture, c: blk.Contributions, model_name: str) -> None:
    """The stream's norms at every layer and token (drawn once per run of the page), then one
    token's contributions: a browser view, sent every token's once per text (its token box is
    answered there)."""
    labels = {"hover": t("block.resid.hover"), "color": t("block.resid.color"), "x": t("block.resid.x"),
              "y": t("block.resid.y"), "title": t("block.resid.title")}
    live_chart(residual_heatmap(c.resid_norm, list(cap.tokens), labels), key="block.resid_heatmap")
    as_table("block.resid_heatmap", lambda: residual_table(c.resid_norm, list(cap.tokens), labels), digits=1)
    browser.view("block", "block.view", contrib_data(cap, c, browser.data_key(
        "contrib", model_name, cap.token_ids.tobytes(), core_lang(), link_token()), core_lang()))
    biggest = int(np.argmax(c.resid_norm[-1]))
    st.caption(t("block.resid.biggest", token=md(token_label(cap, biggest)), norm=num(float(c.resid_norm[-1, biggest]), 1),
                 median=num(float(np.median(c.resid_norm[-1])), 1)))


# --------------------------------------------------------------------------- what the browser views are sent
# One token's contributions and the logit lens at any layer and position are answered in the
# browser (static/views/block.js) from data sent once per text; a share link's values reach them once.

LINK_KEY = "block.link_settings"


def link_token() -> str | None:
    return st.session_state.get(LINK_KEY)


def settings(cap: Capture, n_layers: int) -> dict:
    """The views' settings the server knows (a share link's, brought into range with a notice, or
    the defaults), with the link's token: the views take a link's values once."""
    n_positions = len(lens_positions(cap.n_tokens, LENS_WINDOW))
    clamp_state("block.resid_token", 0, cap.n_tokens - 1, cap.n_tokens - 1)
    clamp_state("block.lens_layer", 0, n_layers, n_layers)
    clamp_state("block.lens_pos", 0, n_positions - 1, n_positions - 1)
    clamp_state("block.norm_token", 0, cap.n_tokens - 1, cap.n_tokens - 1)
    s = st.session_state
    return {"resid_token": s["block.resid_token"], "lens_layer": s["block.lens_layer"], "lens_pos": s["block.lens_pos"],
            "norm_token": s["block.norm_token"], "from_link": link_token()}


def _log_lengths(x: np.ndarray) -> dict:
    """Lengths as their base-10 logarithms, packed: a few digits of each at every scale (the chart is logarithmic)."""
    return pack_u16(np.log10(np.maximum(np.asarray(x, dtype=np.float64), 1e-6)))


def contrib_data(cap: Capture, c: blk.Contributions, key: str, lang: str) -> dict:
    """Every token's contributions: the attention's and the MLP's lengths [L, T], the board's [L+1, T]."""
    labels = {"token": t("block.resid.token"), "title": t("block.contrib.title"), "attn": t("block.contrib.attn"),
              "mlp": t("block.contrib.mlp"), "resid": t("block.contrib.resid"), "x": t("block.resid.y"),
              "y": t("block.contrib.y"), "table": t("chart.as_table"), "unavailable": t("views.unavailable")}
    n_layers = int(c.attn_norm.shape[0])
    return {"key": key, "lang": lang, "part": "contrib", "labels": labels, "tokens": list(cap.tokens),
            "n_layers": n_layers, "settings": settings(cap, n_layers),
            "attn": _log_lengths(c.attn_norm), "mlp": _log_lengths(c.mlp_norm), "resid": _log_lengths(c.resid_norm),
            "palette": list(PALETTE), "separators": t("plot.separators"), "config": modebar_config("block.contrib_chart") | {"responsive": True}}


def lens_data(lens: Lens, cap: Capture, model_name: str, key: str, lang: str) -> dict:
    """The lens at every layer and position: its top-k tokens (as indices into their words), their
    probabilities, the final prediction's probability and rank, the layer it reaches the top."""
    ids = np.unique(np.concatenate([lens.top_ids.ravel(), lens.final_ids.ravel()]))
    where = {int(x): i for i, x in enumerate(ids.tolist())}
    words = list(token_strings(model_name, tuple(int(x) for x in ids)))
    index = np.vectorize(where.__getitem__, otypes=[np.int64])
    pos = [int(x) for x in lens.positions]
    names = {"layer": "block.lens.layer", "position": "block.lens.position", "reading": "block.lens.reading",
             "prob": "block.lens.prob", "rank": "block.lens.rank", "curve_title": "block.lens.curve_title",
             "first_on_top": "block.lens.first_on_top", "col_position": "block.lens.col.position",
             "col_rank": "block.lens.col.rank", "table_title": "block.lens.table_title", "x": "block.resid.y",
             "table": "chart.as_table", "unavailable": "views.unavailable"}
    n_layers = lens.n_layers
    return {"key": key, "lang": lang, "part": "lens", "labels": {k: t(v) for k, v in names.items()},
            "n_layers": n_layers, "k": int(lens.top_ids.shape[2]), "positions": pos,
            "inputs": [cap.tokens[i] for i in pos], "words": words, "settings": settings(cap, n_layers),
            "top": pack_ints(index(lens.top_ids).ravel()), "top_probs": pack_u16(lens.top_probs),
            "final": index(lens.final_ids).tolist(), "final_prob": pack_u16(lens.final_prob),
            "final_rank": pack_ints(lens.final_rank), "first_on_top": lens.first_layer_on_top().tolist(),
            "palette": list(PALETTE), "separators": t("plot.separators"), "config": modebar_config("block.lens_curve") | {"responsive": True}}


# --------------------------------------------------------------------------- non-linearity and SwiGLU


@st.cache_resource(max_entries=8, show_spinner=False)
def curves_spec(own: str, lang: str) -> dict:
    """The activation curves' plotly JSON, built once per activation and language."""
    labels = {k: t(f"block.act.{k}") for k in blk.ACTIVATIONS} | {"own": t("block.act.own"), "y": t("block.act.y")}
    return curves_figure(blk.activation_curves(), own, labels).to_dict()


def curves_figure(curves: dict[str, np.ndarray], own: str, labels: dict[str, str]) -> go.Figure:
    fig = go.Figure()
    for i, name in enumerate(blk.ACTIVATIONS):
        width = 4 if name == own else 2
        fig.add_trace(go.Scatter(x=curves["x"], y=curves[name], mode="lines", line=dict(color=PALETTE[i], width=width),
                                 name=labels[name] + (f" ← {labels['own']}" if name == own else "")))
    fig.update_layout(height=360, margin=dict(l=10, r=10, t=30, b=10), xaxis_title="x", yaxis_title=labels["y"],
                      legend=dict(orientation="h", y=-0.2))
    return fig


def is_gated(lm: LoadedModel) -> bool:
    """True when the MLP has a gate branch (SwiGLU), False for a plain one (GPT-2's GELU)."""
    return lm.adapter.mlp_branches(lm.adapter.blocks(lm.model)[0])[0] is not None


def own_activation(lm: LoadedModel) -> str:
    _, _, act = lm.adapter.mlp_branches(lm.adapter.blocks(lm.model)[0])
    return blk.which_activation(act)


def neuron_table(br: blk.MlpBranches, neurons: list[blk.Neuron], cap: Capture, act_name: str) -> pd.DataFrame:
    rows = {t("block.mlp.col.neuron"): [n.index for n in neurons],
            t("block.mlp.col.token"): [token_label(cap, n.position) for n in neurons]}
    if br.gate is not None:
        rows[t("block.mlp.col.gate")] = [num(float(br.gate[n.position, n.index]), 3) for n in neurons]
        rows[t("block.mlp.col.act", act=act_name)] = [num(float(br.act[n.position, n.index]), 3) for n in neurons]
        rows[t("block.mlp.col.up")] = [num(float(br.up[n.position, n.index]), 3) for n in neurons]
    else:
        rows[t("block.mlp.col.pre")] = [num(float(br.up[n.position, n.index]), 3) for n in neurons]
    rows[t("block.mlp.col.product")] = [num(float(br.product[n.position, n.index]), 3) for n in neurons]
    return pd.DataFrame(rows)


def neuron_heatmap(product: np.ndarray, neurons: list[blk.Neuron], tokens: list[str], labels: dict[str, str]) -> go.Figure:
    cols = [n.index for n in neurons]
    z = product[:, cols]  # [T, k]
    top = float(np.abs(z).max()) or 1.0
    return quick([dict(type="heatmap", z=z, x=[f"#{c}" for c in cols], y=list(range(len(tokens))), zmin=-top, zmax=top,
                       colorscale=colorscale("RdBu"), reversescale=True, colorbar=dict(title=dict(text=labels["color"])))],
                 dict(height=max(300, 18 * len(tokens) + 120), margin=dict(l=10, r=10, t=30, b=10),
                      yaxis=dict(autorange="reversed", tickvals=list(range(len(tokens))),
                                 ticktext=[esc(short(s)) for s in tokens], title=dict(text=labels["y"])),
                      xaxis=dict(title=dict(text=labels["x"]), type="category"), title=dict(text=labels["title"])))


@st.fragment
def render_mlp(lm: LoadedModel, cap: Capture, model_name: str, text: str, max_tokens: int) -> blk.MlpBranches:
    L = lm.info.n_layers
    clamp_state("block.mlp_layer", 0, L - 1, min(L // 2, L - 1))
    layer = st.slider(t("block.mlp.layer"), 0, L - 1, key="block.mlp_layer")
    br = get_branches(model_name, text, max_tokens, layer)
    neurons = blk.top_neurons(cap.mlp[layer], TOP_NEURONS)
    act_name = t(f"block.act.{own_activation(lm)}")
    st.dataframe(neuron_table(br, neurons, cap, act_name), hide_index=True, key="block.neurons")
    labels = {"color": t("block.mlp.fig.color"), "x": t("block.mlp.fig.x"), "y": t("block.resid.x"),
              "title": t("block.mlp.fig.title", layer=num(layer))}
    live_chart(neuron_heatmap(br.product, neurons, list(cap.tokens), labels), key="block.neuron_heatmap")
    st.success(t("block.mlp.check", diff=sci(br.max_diff_capture)))
    return br


def dff_table(lm: LoadedModel) -> tuple[pd.DataFrame, dict[str, blk.DffArithmetic]]:
    info = lm.info
    ref = dims(REFERENCE_MODELS[SEED_MODEL])
    seed = blk.dff_arithmetic(ref.D, ref.F, blk.attention_params(ref.D, ref.H, ref.Hkv, ref.Dh))
    live = blk.dff_arithmetic(info.d_model, info.d_mlp,
                              blk.attention_params(info.d_model, info.n_heads, info.n_kv_heads, info.d_head))
    gated = is_gated(lm)
    pct = lambda x: f"{num(100 * x, 1)}%" if x is not None else "—"  # noqa: E731
    rows = [("block.dff.row.d", lambda a, g: num(a.d)),
            ("block.dff.row.classic", lambda a, g: num(a.classic)),
            ("block.dff.row.eight_thirds", lambda a, g: num(a.eight_thirds, 2)),
            ("block.dff.row.scaled", lambda a, g: num(a.scaled, 2)),
            ("block.dff.row.rounded", lambda a, g: num(a.rounded)),
            ("block.dff.row.actual", lambda a, g: num(a.actual)),
            ("block.dff.row.share_eight", lambda a, g: pct(a.mlp_share(a.eight_thirds, True))),
            ("block.dff.row.share_actual", lambda a, g: pct(a.mlp_share(a.actual, g)))]
    table = pd.DataFrame({t("block.dff.col.step"): [t(k) for k, _ in rows],
                          SEED_MODEL: [f(seed, True) for _, f in rows],
                          t("block.dff.col.live"): [f(live, gated) for _, f in rows]})
    return table, {"seed": seed, "live": live}


# --------------------------------------------------------------------------- the logit lens


def lens_heatmap(lens: Lens, words: list[list[str]], tokens: list[str], labels: dict[str, str]) -> go.Figure:
    """Rows: layers (0 = embeddings). Columns: positions. Cell: the lens's top token, coloured by
    its probability. The same for every selected layer: the layer slider leaves it as it is (a
    redraw of its hundreds of labelled cells was most of a layer move in the browser)."""
    probs = lens.top_probs[:, :, 0]
    n_rows, p = probs.shape
    hover = [[labels["hover"].format(layer=l, token=esc(tokens[i]), top=esc(words[l][i]), p=num(float(probs[l, i]), 3))
              for i in range(p)] for l in range(n_rows)]
    fig = go.Figure(go.Heatmap(z=probs, x=list(range(p)), y=list(range(n_rows)), zmin=0, zmax=1,
                               colorscale=[[0, "#F7FBFF"], [1, "#6BAED6"]],  # light enough for black text
                               text=[[esc(short(w)) for w in row] for row in words],
                               texttemplate="%{text}", textfont=dict(size=10), customdata=hover,
                               hovertemplate="%{customdata}<extra></extra>", colorbar=dict(title=labels["color"])))
    fig.update_layout(height=max(360, 20 * n_rows + 140), margin=dict(l=10, r=10, t=30, b=10), title=labels["title"],
                      xaxis=dict(title=labels["x"], tickvals=list(range(p)), ticktext=[esc(short(s)) for s in tokens]),
                      yaxis=dict(title=labels["y"], dtick=1 if n_rows <= 40 else None))
    return fig


@st.cache_resource(max_entries=8, show_spinner=False)
def lens_heatmap_spec(model_name: str, text: str, max_tokens: int, lang: str) -> dict:
    """The lens grid's plotly JSON, built once per text and language."""
    lens, cap = lens_service.result(model_name, text, max_tokens)[0], get_capture(model_name, text, max_tokens)
    words = [list(token_strings(model_name, tuple(int(x) for x in lens.top_ids[l, :, 0])))
             for l in range(lens.n_layers + 1)]
    labels = {"hover": t("block.lens.hover"), "color": t("block.lens.color"), "x": t("block.resid.x"),
              "y": t("block.resid.y"), "title": t("block.lens.title")}
    return as_spec(lens_heatmap(lens, words, [cap.tokens[int(i)] for i in lens.positions], labels))


def render_lens(lm: LoadedModel, cap: Capture, model_name: str, text: str, max_tokens: int) -> None:
    """The lens grid (every layer and position, drawn once per run of the page), then the browser
    view that reads it at the chosen layer and position: the lens sent once per text. The lens comes
    from the lens service, waited for; if it could not be worked out (logged there), a notice."""
    try:
        lens, gap = lens_service.result(model_name, text, max_tokens)
    except lens_service.LensError:
        st.error(t("block.lens.failed"))
        return
    if cap.n_tokens > len(lens.positions):
        st.caption(t("block.lens.window", n=num(len(lens.positions)), total=num(cap.n_tokens)))
    live_chart(lens_heatmap_spec(model_name, text, max_tokens, core_lang()), key="block.lens_heatmap")
    browser.view("block", "block.lens_view", lens_data(lens, cap, model_name, browser.data_key(
        "lens", model_name, text, max_tokens, core_lang(), link_token()), core_lang()))
    st.success(t("block.lens.check", diff=sci(gap)))
