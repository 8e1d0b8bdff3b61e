"""The block lesson's page sections (pages/06_block.py) and what its browser views are sent.

Heavy work is cached in `compute` per (model, text): the attention/MLP split of every block, the
logit lens over the last LENS_WINDOW positions, one layer's MLP branches. The token whose contributions
are drawn and the lens's layer and position are answered in the browser (static/views/block.js)
from every token's and every layer's results, sent once per text; the norm's layer and token and
the MLP's layer stay coarse choices of the server, which reads them from the cached results: the
model never re-runs.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import streamlit as st

from lib.lessons import block as blk
from lib.lessons.logit_lens import Lens, lens_positions
from lib.model.capture import Capture
from lib.model.models import LoadedModel
from lib.serving.payload import pack_ints, pack_u16
from ui.lessons.block import lens_service
from ui.lessons.block.compute import (diagram_spec, get_branches, lens_heatmap_spec, norm_checks, own_activation,
                                      token_strings)
from ui.lessons.block.figures import neuron_heatmap, residual_heatmap, residual_table, shape
from ui.lessons.block.lens_service import LENS_WINDOW
from ui.shell.core import lang as core_lang, num, t
from ui.views import browser
from ui.views.chart_table import as_table
from ui.views.export import modebar_config
from ui.views.figures import PALETTE, subplot_layout
from ui.views.live_chart import live_chart


TOP_NEURONS = 10


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


def md(s: str) -> str:
    """A token for Markdown (captions, prose): punctuation such as $ * _ ` must not format anything."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|$<>~])", r"\\\1", s)


def render_diagram(lm: LoadedModel, n_tokens: int) -> None:
    steps = blk.block_steps(lm, n_tokens)
    live_chart(diagram_spec(lm, repr(lm.info), n_tokens, core_lang()), key="block.diagram")
    with st.expander(t("block.path.title")):
        st.dataframe(pd.DataFrame({
            t("block.path.step"): [t(f"block.step.{s.kind}") for s in steps],
            t("block.path.module"): [s.module or "—" for s in steps],
            t("block.path.in"): [shape(s.shape_in, num) for s in steps],
            t("block.path.out"): [shape(s.shape_out, num) for s in steps]}), hide_index=True, key="block.path")


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


def render_residual(lm: LoadedModel, cap: Capture, c: blk.Contributions, model_name: str) -> None:
    """The stream's norms at every layer and token (drawn once per run of the page), then one
    token's contributions: a browser view, sent every token's once per text (its token box is
    answered there)."""
    labels = {"hover": t("block.resid.hover"), "color": t("block.resid.color"), "x": t("block.resid.x"),
              "y": t("block.resid.y"), "title": t("block.resid.title")}
    live_chart(residual_heatmap(c.resid_norm, list(cap.tokens), labels, num), key="block.resid_heatmap")
    as_table("block.resid_heatmap", lambda: residual_table(c.resid_norm, list(cap.tokens), labels), digits=1)
    browser.view("block", "block.view", contrib_data(cap, c, browser.data_key(
        "contrib", model_name, cap.token_ids.tobytes(), core_lang(), link_token()), core_lang()))
    biggest = int(np.argmax(c.resid_norm[-1]))
    st.caption(t("block.resid.biggest", token=md(token_label(cap, biggest)), norm=num(float(c.resid_norm[-1, biggest]), 1),
                 median=num(float(np.median(c.resid_norm[-1])), 1)))


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
