"""The KV-cache lesson's widgets, cached measurements and figures.

Every number a learner types goes through `number`: drawn without bounds (so nothing typed is
refused silently), then clamped by lib.kvcache.clamp with a notice saying what was used instead.
Figures take numbers and already-translated labels. Measurements on the live model are cached per
model name (and token count): moving a slider that only changes the view never re-runs the model.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from lib import arithmetic as A
from lib import kvcache as K
from lib.reference import MORE_MODELS, REFERENCE_MODELS, SEED_000_KV_TABLE
from ui import figures
from ui.cache import get_model
from ui.core import big, num, t
from ui.figures import PALETTE
from ui.chart_table import as_table
from ui.live_chart import live_chart

CONTEXTS = (512, 1024, 2048, 4096, 8192, 16_384, 32_768, 65_536, 100_000, 131_072, 262_144, 524_288, 1_048_576)
MAX_TOKENS = 10_000_000  # a typed context beyond this is clamped (no model reads more today)
MEASURE_TOKENS = (16, 64, 256, 512)
TIMING_PROMPTS = (8, 32, 128, 384)
TIMING_NEW_TOKENS = 6
BANDWIDTH_BUFFER = 128 * 2**20
BASE = "Llama-3 8B"  # the seed's worked example: variants, fact check and the parameter chart
SEED_KV_HEADS = {"GPT-2 small": 12, "Llama-3 8B": 8, "Llama-3 70B": 8}  # the real models' KV heads
PRESETS = ("live", "GPT-2 small", "Llama-3 8B", "Llama-3 70B", "Mistral 7B", "Qwen2.5 7B", "Gemma 3 27B",
           "DeepSeek-V3", "8b_mla", "8b_sliding", "8b_hybrid", "custom")
CUSTOM_FIELDS = (  # (config key, default, lo, hi)
    ("num_hidden_layers", 32, 1, 1000), ("num_attention_heads", 32, 1, 1024), ("num_key_value_heads", 8, 1, 1024),
    ("head_dim", 128, 1, 4096), ("hidden_size", 4096, 1, 65_536), ("intermediate_size", 14_336, 1, 262_144),
    ("vocab_size", 128_256, 1, 2_000_000))


# ------------------------------------------------------------------------------------ formatting


def size(b: float) -> str:
    """Bytes for people, decimal units: 1.07 GB, 13.1 GB, 840 GB, 2.15 TB."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if b >= scale:
            x = b / scale
            return f"{num(x, 2 if x < 10 else 1 if x < 100 else 0)} {unit}"
    return f"{num(round(b))} B"


def kib(b: float) -> str:
    return f"{num(b / 1024, 1)} KiB"


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def sci(x: float, digits: int = 1) -> str:
    """Scientific notation for people: 7.2 × 10²³."""
    exp = math.floor(math.log10(abs(x))) if x else 0
    return f"{num(x / 10**exp, digits)} × 10{str(exp).translate(_SUPERSCRIPT)}"


def flops(x: float) -> str:
    for unit, scale in (("PFLOP", 1e15), ("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6)):
        if x >= scale:
            return f"{num(x / scale, 1)} {unit}"
    return f"{num(round(x))} FLOP"


# ------------------------------------------------------------------------------------ inputs


def number(key: str, label: str, default: float, lo: float, hi: float, integer: bool = True,
           step: float | None = None, on_change=None) -> float:
    """A number input that accepts anything typed, then clamps it into [lo, hi] with a notice.

    Without `on_change` a new value reruns the input's own section (its fragment) alone."""
    full = f"kvcache.{key}"
    st.session_state.setdefault(full, default)
    raw = st.number_input(label, key=full, step=step if step is not None else (1 if integer else None),
                          format=None if integer else "%g", on_change=on_change)
    c = K.clamp(raw, lo, hi, integer=integer)
    if c.changed:
        st.warning(t("kvcache.clamped", what=label, given=str(raw), used=num(c.value)))
    return c.value


# The calculator's section sets the learner's choice; the sections far below that price it (training,
# serving, mixture of experts) follow it when the learner reaches them (ui/follow.py), so a
# calculator widget reruns the calculator alone, in one script run.
CHOICE_KEY = "kvcache.choice"


def current_choice() -> "Choice | None":
    """The calculator's last choice (set by its section, which runs before the sections reading it)."""
    return st.session_state.get(CHOICE_KEY)


def priced_mark(choice: "Choice") -> str:
    """What the cost sections read of the choice (model, its numbers, context and number formats), as a
    short mark: a section drawn for another mark is out of date."""
    label, cfg, n_params = choice.priced()
    seen = json.dumps([label, cfg, n_params, choice.tokens, choice.cache_dtype, choice.weight_dtype],
                      sort_keys=True, default=str)
    return hashlib.sha1(seen.encode()).hexdigest()[:16]


def _pick_context() -> None:
    """The context picker writes the exact number below it (the calculator's section reruns)."""
    st.session_state["kvcache.context"] = st.session_state["kvcache.context_pick"]


def _custom_config() -> dict | None:
    """The learner's own numbers, or a pasted config.json; None (with a message) if unusable."""
    pasted = st.text_area(t("kvcache.custom.json"), key="kvcache.custom_json", height=90,
                          placeholder='{"num_hidden_layers": 32, "num_attention_heads": 32, ...}')
    if pasted.strip():
        try:
            cfg = json.loads(pasted)
        except ValueError:
            st.error(t("kvcache.custom.bad_json"))
            return None
        if not isinstance(cfg, dict):
            st.error(t("kvcache.custom.bad_json"))
            return None
        return A.text_config(cfg)
    cols = st.columns(4)
    cfg = {"model_type": "llama", "tie_word_embeddings": False}
    for i, (field, default, lo, hi) in enumerate(CUSTOM_FIELDS):
        with cols[i % 4]:
            cfg[field] = number(f"custom.{field}", t(f"kvcache.field.{field}"), default, lo, hi)
    if cfg["num_key_value_heads"] > cfg["num_attention_heads"]:
        st.warning(t("kvcache.custom.kv_over", kv=num(cfg["num_key_value_heads"]), heads=num(cfg["num_attention_heads"])))
        cfg["num_key_value_heads"] = cfg["num_attention_heads"]
    return cfg


def preset_config(key: str, live_config: dict) -> dict:
    """The config dict behind a preset key (the 8B variants are built by lib.kvcache)."""
    if key == "live":
        return live_config
    if key.startswith("8b_"):
        return K.variant_config(REFERENCE_MODELS[BASE], key.removeprefix("8b_"))
    return {**REFERENCE_MODELS, **MORE_MODELS}[key]


def preset_label(key: str, live_name: str) -> str:
    if key == "live":
        return t("kvcache.preset.live", name=live_name)
    if key.startswith("8b_") or key == "custom":
        return t(f"kvcache.preset.{key}")
    return key


# ------------------------------------------------------------------------------------ calculator


@dataclass(frozen=True)
class Choice:
    """What the learner picked in the calculator; `config`/`calc` are None when the numbers are unusable."""

    label: str
    config: dict | None
    n_params: int | None
    calc: K.Calculation | None
    tokens: int
    users: int
    cache_dtype: str
    weight_dtype: str
    card_gb: float

    def priced(self) -> tuple[str, dict, int]:
        """(label, config, parameters) for the cost sections: this model, or the 8B if it cannot be counted."""
        if self.config is not None and self.n_params:
            return self.label, self.config, self.n_params
        base = REFERENCE_MODELS[BASE]
        return BASE, base, A.count_params(base)


def calculator(live_config: dict, live_name: str, live_params: int) -> Choice:
    """The calculator's widgets and results: weights, cache per token, per user, in total, users per card."""
    # Labels computed now, not in the callback: format_func may run outside the script (AppTest).
    names = {k: preset_label(k, live_name) for k in PRESETS}
    key = st.selectbox(t("kvcache.preset"), PRESETS, key="kvcache.preset", format_func=names.__getitem__)
    cfg = _custom_config() if key == "custom" else preset_config(key, live_config)
    st.session_state.setdefault("kvcache.context_pick", 8192)
    ticks = {n: "1M" if n == 2**20 else f"{num(n // 1024)}K" if n % 1024 == 0 else num(n) for n in CONTEXTS}
    st.select_slider(t("kvcache.context_pick"), CONTEXTS, key="kvcache.context_pick", on_change=_pick_context,
                     format_func=ticks.__getitem__)
    c1, c2, c3 = st.columns(3)
    with c1:
        tokens = number("context", t("kvcache.context"), 8192, 1, MAX_TOKENS, step=1024)
        users = number("users", t("kvcache.users"), 10, 1, 100_000)
    with c2:
        cache_dtype = st.segmented_control(t("kvcache.cache_dtype"), list(A.CACHE_DTYPES), default="bf16",
                                           key="kvcache.cache_dtype") or "bf16"
        weight_dtype = st.segmented_control(t("kvcache.weight_dtype"), list(A.WEIGHT_DTYPES), default="bf16",
                                            key="kvcache.weight_dtype", help=t("kvcache.weight_dtype_help")) or "bf16"
    with c3:
        card_gb = number("card_gb", t("kvcache.card_gb"), 80.0, 1.0, 100_000.0, integer=False, step=8.0)
    label = live_name if key == "live" else preset_label(key, live_name)
    choice = Choice(label, None, None, None, tokens, users, cache_dtype, weight_dtype, card_gb)
    if cfg is None:
        return choice
    try:
        A.cache_layers(cfg)
    except A.ConfigError as e:
        st.error(t(f"kvcache.custom.{e.problem}", field=e.field))
        return choice
    try:
        n_params = live_params if key == "live" else A.count_params(cfg)
    except (ValueError, KeyError, TypeError):
        st.info(t("kvcache.custom.no_params", model_type=str(cfg.get("model_type"))))
        n_params = None
    calc = K.calculate(cfg, n_params or 0, tokens, users, A.CACHE_DTYPES[cache_dtype],
                       A.bytes_per_param(weight_dtype), card_gb * 1e9)
    _show_calculation(calc, cfg, n_params, cache_dtype)
    return Choice(label, cfg, n_params, calc, tokens, users, cache_dtype, weight_dtype, card_gb)


def _show_calculation(calc: K.Calculation, cfg: dict, n_params: int | None, cache_dtype: str) -> None:
    kinds = [k for k, _ in A.layer_kinds(cfg)]
    m = st.columns(4)
    m[0].metric(t("kvcache.per_token", dtype=cache_dtype), kib(calc.cache_per_token) if calc.cache_per_token else "0",
                help=t("kvcache.per_token_help"))
    m[1].metric(t("kvcache.per_user"), size(calc.cache_per_user))
    m[2].metric(t("kvcache.weights"), size(calc.weights) if n_params else "—",
                help=t("kvcache.params_are", n=big(n_params)) if n_params else None)
    m[3].metric(t("kvcache.total"), size(calc.total))
    st.caption(t("kvcache.layers_are", full=num(kinds.count("full")), local=num(kinds.count("sliding")),
                 linear=num(kinds.count("linear")), mla=t("yes") if cfg.get("kv_lora_rank") else t("no")))
    live_chart(calc_figure(calc), key="kvcache.calc_chart")
    as_table("kvcache.calc_chart", lambda: calc_table(calc))
    card = size(calc.card)
    if calc.weights > calc.card:
        st.error(t("kvcache.weights_too_big", card=card, cards=num(math.ceil(calc.weights / calc.card))))
    elif calc.users_fit is None:
        st.success(t("kvcache.fit_unbounded", card=card))
    else:
        msg = t("kvcache.fit", card=card, n=num(calc.users_fit), tokens=num(calc.tokens))
        (st.success if calc.fits else st.warning)(msg + ("" if calc.fits else " " + t("kvcache.not_fit")))


def calc_table(calc: K.Calculation) -> pd.DataFrame:
    """The calculator chart's numbers in GB: one user and all users, each with the weights, the
    cache, their sum, and the card's memory."""
    gb = 1e9
    rows = [t("kvcache.chart.one_user"), t("kvcache.chart.all_users", n=num(calc.users))]
    weights, cache = [calc.weights / gb] * 2, [calc.cache_per_user / gb, calc.cache_total / gb]
    return pd.DataFrame({t("kvcache.weights"): weights, t("kvcache.chart.cache"): cache,
                         t("kvcache.table.sum"): [w + c for w, c in zip(weights, cache)],
                         t("kvcache.table.card"): [calc.card / gb] * 2},
                        index=pd.Index(rows, name="GB"))


def calc_figure(calc: K.Calculation) -> go.Figure:
    """Two stacked bars, one user and all users: weights, then cache; the card as a line."""
    x = [t("kvcache.chart.one_user"), t("kvcache.chart.all_users", n=num(calc.users))]
    gb = 1e9
    fig = go.Figure([
        go.Bar(x=x, y=[calc.weights / gb] * 2, name=t("kvcache.weights"), marker_color=PALETTE[0]),
        go.Bar(x=x, y=[calc.cache_per_user / gb, calc.cache_total / gb], name=t("kvcache.chart.cache"),
               marker_color=PALETTE[1], text=[size(calc.cache_per_user), size(calc.cache_total)], textposition="auto"),
    ])
    top = max(calc.total, calc.weights, 1.0) / gb * 1.15
    label = t("kvcache.chart.card", card=size(calc.card))
    if calc.card / gb <= 4 * top:  # the card's line on the chart
        fig.add_hline(y=calc.card / gb, line_dash="dash", line_color=PALETTE[3], annotation_text=label)
        top = max(top, calc.card / gb * 1.08)
    else:  # far above the bars: drawing it would flatten them
        fig.add_annotation(text=label + " ↑", xref="paper", yref="paper", x=1, y=1, showarrow=False,
                           font_color=PALETTE[3])
    fig.update_layout(barmode="stack", height=340, yaxis_title="GB", yaxis_range=[0, top],
                      margin=dict(l=10, r=10, t=30, b=10), title=t("kvcache.chart.title", tokens=num(calc.tokens)))
    return fig


# ------------------------------------------------------------------------------------ variants


def variants_section(tokens: int, cache_dtype: str, card_gb: float) -> tuple[K.Variant, ...]:
    base = REFERENCE_MODELS[BASE]
    rows = K.cache_variants(base, tokens, A.CACHE_DTYPES[cache_dtype])
    weights = A.weight_bytes(A.count_params(base), "bf16")
    fits = [A.users_that_fit(card_gb * 1e9, weights, v.bytes) for v in rows]
    names = [t(f"kvcache.variant.{v.kind}") for v in rows]
    fig = go.Figure(go.Bar(x=names, y=[v.bytes / 1e9 for v in rows], marker_color=PALETTE[: len(rows)],
                           text=[size(v.bytes) for v in rows], textposition="outside",
                           customdata=[num(f) if f is not None else "∞" for f in fits],
                           hovertemplate="%{x}: %{text}<br>" + t("kvcache.variant.hover") + "<extra></extra>"))
    fig.update_layout(height=360, yaxis_title="GB", margin=dict(l=10, r=10, t=40, b=10),
                      title=t("kvcache.variant.title", tokens=num(tokens)))
    live_chart(fig, key="kvcache.variants_chart")
    table = pd.DataFrame({
        t("kvcache.variant.col.kind"): names,
        t("kvcache.variant.col.per_token"): [kib(v.per_token) for v in rows],
        t("kvcache.variant.col.per_user"): [size(v.bytes) for v in rows],
        t("kvcache.variant.col.saving"): [f"{num(v.saving, 1)}×" for v in rows],
        t("kvcache.variant.col.users", card=num(card_gb)): [num(f) if f is not None else "∞" for f in fits],
    })
    st.dataframe(table, hide_index=True, key="kvcache.variants_table")
    return rows


# ------------------------------------------------------------------------------------ fact check


def fact_check_section() -> None:
    rows = K.check_seed_table(SEED_000_KV_TABLE, SEED_KV_HEADS)
    st.dataframe(pd.DataFrame({
        t("kvcache.fact.col.model"): [r.name for r in rows],
        t("kvcache.fact.col.tokens"): [num(r.tokens) for r in rows],
        t("kvcache.fact.col.stated"): [f"~{num(r.stated_gb)} GB" for r in rows],
        t("kvcache.fact.col.all_heads"): [f"{size(r.all_heads)} ({num(r.all_heads / 2**30, 1)} GiB)" for r in rows],
        t("kvcache.fact.col.kv_heads"): [size(r.kv_heads) if r.kv_heads else "—" for r in rows],
        t("kvcache.fact.col.verdict"): [t("kvcache.fact.ok") if r.agrees else t("kvcache.fact.wrong", x=num(r.ratio, 1))
                                        for r in rows],
    }), hide_index=True, key="kvcache.fact_table")
    b70 = SEED_000_KV_TABLE["Llama-3 70B"]
    cfg = dict(num_hidden_layers=b70[0], num_attention_heads=b70[1], head_dim=b70[2], hidden_size=b70[3], vocab_size=1)
    gqa = dict(cfg, num_key_value_heads=SEED_KV_HEADS["Llama-3 70B"])
    st.markdown(t("kvcache.fact.scaling", at8=size(A.kv_cache_bytes(cfg, 8192)), at32=size(A.kv_cache_bytes(cfg, 32768)),
                  gqa8=size(A.kv_cache_bytes(gqa, 8192)), gqa32=size(A.kv_cache_bytes(gqa, 32768)),
                  users=size(A.kv_cache_bytes(cfg, 8192, batch=100)),
                  users_gqa=size(A.kv_cache_bytes(gqa, 8192, batch=100))))


# ------------------------------------------------------------------------------------ the live model


@st.cache_resource(max_entries=16, show_spinner=False)
def measured(model_name: str, text: str, tokens: int) -> tuple[K.CacheMeasurement, int]:
    """The live model's real cache over `tokens` tokens of the learner's text (repeated as needed,
    random ids with a fixed seed if it is empty), and how many tokens the text gave."""
    lm = get_model(model_name)
    ids = K.text_ids(lm, text, tokens)
    return K.measure_cache(lm, tokens, token_ids=ids), len(ids)


@st.cache_resource(max_entries=4, show_spinner=False)
def timings(model_name: str) -> tuple[K.TimingRow, ...]:
    return K.time_prefill_decode(get_model(model_name), TIMING_PROMPTS, TIMING_NEW_TOKENS)


@st.cache_resource(max_entries=1, show_spinner=False)
def bandwidth() -> K.Bandwidth:
    """This machine's copy bandwidth, measured once per server."""
    return K.memory_bandwidth(BANDWIDTH_BUFFER)


@st.fragment
def measured_section(model_name: str, lm, text: str) -> K.CacheMeasurement:
    n = st.select_slider(t("kvcache.measure.tokens"), MEASURE_TOKENS, value=64, key="kvcache.measure_tokens")
    with st.spinner(t("kvcache.measure.running")):
        m, n_text = measured(model_name, text, n)
    if n_text == 0:
        st.info(t("text.empty") + " " + t("kvcache.measure.random"))
    else:
        st.caption(t("kvcache.measure.source", n_text=num(n_text), n=num(n)) if n_text < n
                   else t("kvcache.measure.source_cut", n=num(n)))
    c = st.columns(3)
    c[0].metric(t("kvcache.measure.measured"), f"{num(m.measured_bytes)} B")
    c[1].metric(t("kvcache.measure.formula"), f"{num(m.formula_bytes - m.window_offset_bytes)} B")
    c[2].metric(t("kvcache.measure.per_token", dtype=m.dtype), kib(m.per_token))
    if m.equal:
        st.success(t("kvcache.measure.equal", n=num(m.tokens), dtype=m.dtype, bytes=num(m.dtype_bytes)))
    else:
        st.error(t("kvcache.measure.differ"))
    info = lm.info
    if info.n_kv_heads < info.n_heads:
        mha = A.kv_cache_bytes(dict(lm.config, num_key_value_heads=info.n_heads), m.tokens, dtype_bytes=m.dtype_bytes)
        st.info(t("kvcache.measure.gqa", mha=num(mha), heads=num(info.n_heads), kv=num(info.n_kv_heads),
                  x=num(mha / m.measured_bytes, 1)))
    with st.expander(t("kvcache.measure.layers")):
        st.dataframe(pd.DataFrame({
            t("kvcache.measure.col.layer"): list(range(len(m.layers))),
            t("kvcache.measure.col.keys"): [" × ".join(map(str, x.key_shape)) for x in m.layers],
            t("kvcache.measure.col.values"): [" × ".join(map(str, x.value_shape)) for x in m.layers],
            t("kvcache.measure.col.bytes"): [num(x.bytes) for x in m.layers],
        }), hide_index=True, key="kvcache.layers_table")
    return m


def timing_section(model_name: str, lm) -> None:
    if st.button(t("kvcache.time.run"), key="kvcache.time_run"):
        st.session_state["kvcache.timed"] = model_name
    if st.session_state.get("kvcache.timed") != model_name:
        st.caption(t("kvcache.time.hint"))
        return
    with st.spinner(t("kvcache.time.running")):
        rows = timings(model_name)
        bw = bandwidth()
    weights = K.model_weight_bytes(lm)
    ceiling_ms = weights / bw.bytes_per_s * 1e3
    decode_ms = sum(r.decode_s for r in rows) / len(rows) * 1e3
    c = st.columns(3)
    c[0].metric(t("kvcache.time.bandwidth"), f"{num(bw.bytes_per_s / 1e9, 1)} GB/s")
    c[1].metric(t("kvcache.time.ceiling"), f"{num(ceiling_ms, 1)} ms", help=t("kvcache.time.ceiling_help",
                                                                                  weights=size(weights)))
    c[2].metric(t("kvcache.time.decode"), f"{num(decode_ms, 1)} ms")
    live_chart(timing_figure(rows, ceiling_ms), key="kvcache.time_chart")
    st.markdown(t("kvcache.time.verdict_slower" if decode_ms >= ceiling_ms else "kvcache.time.verdict_faster",
                  ratio=num(decode_ms / ceiling_ms, 1), first=num(rows[-1].prefill_s * 1e3, 0),
                  n=num(rows[-1].prompt_tokens), decode=num(rows[-1].decode_s * 1e3, 0)))


def timing_figure(rows: tuple[K.TimingRow, ...], ceiling_ms: float) -> go.Figure:
    x = [r.prompt_tokens for r in rows]
    fig = go.Figure([
        go.Scatter(x=x, y=[r.prefill_s * 1e3 for r in rows], name=t("kvcache.time.prefill"), mode="lines+markers",
                   line_color=PALETTE[0]),
        go.Scatter(x=x, y=[r.decode_s * 1e3 for r in rows], name=t("kvcache.time.per_token"), mode="lines+markers",
                   line_color=PALETTE[1]),
    ])
    fig.add_trace(go.Scatter(x=[x[0], x[-1]], y=[ceiling_ms, ceiling_ms], name=t("kvcache.time.ceiling"),
                             mode="lines", line=dict(color=PALETTE[3], dash="dash")))
    fig.update_layout(height=360, xaxis_title=t("kvcache.time.x"), yaxis_title="ms", xaxis_type="log",
                      yaxis_type="log", margin=dict(l=10, r=10, t=30, b=10))
    fig.update_xaxes(tickvals=x)
    return fig


# ------------------------------------------------------------------------------------ parameters


def params_section(lm, live_name: str) -> None:
    base = REFERENCE_MODELS[BASE]
    cols = st.columns(2)
    for col, name, cfg in ((cols[0], live_name, lm.config), (cols[1], BASE, base)):
        parts = A.param_breakdown(cfg)
        with col:
            st.plotly_chart(figures.params_figure(parts, {k: t(f"params.{k}") for k in parts}, name),
                            key=f"kvcache.params_{'live' if cfg is lm.config else 'base'}")
    rows = []
    for name, cfg in ((live_name, lm.config), (BASE, base), ("Llama-3 70B", REFERENCE_MODELS["Llama-3 70B"]),
                      ("GPT-2 small", REFERENCE_MODELS["GPT-2 small"])):
        exact, rule = A.count_params(cfg), A.rule_of_thumb_params(cfg)
        rows.append({t("kvcache.params.col.model"): name, t("kvcache.params.col.exact"): big(exact),
                     t("kvcache.params.col.per_layer"): big(A.params_per_layer(cfg)),
                     t("kvcache.params.col.rule"): big(rule), t("kvcache.params.col.ratio"): f"{num(100 * rule / exact, 0)}%"})
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="kvcache.rule_table")


# ------------------------------------------------------------------------------------ training and serving


def training_section(n_params: float, name: str) -> None:
    c = st.columns(4)
    with c[0]:
        tokens_t = number("train_tokens", t("kvcache.train.tokens"), 15.0, 0.001, 1000.0, integer=False)
    with c[1]:
        gpus = number("gpus", t("kvcache.train.gpus"), 1000, 1, 1_000_000)
    with c[2]:
        tflops = number("tflops", t("kvcache.train.tflops"), 400.0, 0.001, 100_000.0, integer=False)
    with c[3]:
        util = number("util", t("kvcache.train.util"), 40.0, 1.0, 100.0, integer=False)
    total = A.training_flops(n_params, tokens_t * 1e12)
    days = A.training_days(total, gpus, tflops * 1e12, util / 100)
    st.markdown(t("kvcache.train.result", name=name, n=big(n_params), d=num(tokens_t), flops=sci(total),
                  days=num(days, 1 if days < 100 else 0), gpus=num(gpus)))
    rows = []
    for opt in ("adam", "muon"):
        for stage in (0, 3):
            m = A.training_memory(n_params, opt, gpus if stage else 1, stage)
            rows.append({t("kvcache.train.col.setup"): t(f"kvcache.train.{opt}") + " · " + (
                t("kvcache.train.zero", gpus=num(gpus)) if stage else t("kvcache.train.one_card")),
                **{t(f"kvcache.train.col.{k}"): size(v) for k, v in m.items()}})
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="kvcache.train_table")


def serving_section(cfg: dict, n_params: float, tokens: int, cache_dtype: str, weight_dtype: str) -> None:
    c = st.columns(2)
    with c[0]:
        bw = number("bandwidth", t("kvcache.serve.bandwidth"), 3.0, 0.001, 100.0, integer=False)
    with c[1]:
        users = number("serve_users", t("kvcache.serve.users"), 64, 1, 100_000)
    weights = A.weight_bytes(n_params, weight_dtype)
    per_user = A.kv_cache_bytes(cfg, tokens, dtype_bytes=A.CACHE_DTYPES[cache_dtype])
    one, many = A.decode_step(weights, per_user, 1, bw * 1e12), A.decode_step(weights, per_user, users, bw * 1e12)
    st.markdown(t("kvcache.serve.result", weights=size(weights), ms=num(one.seconds * 1e3, 1),
                  tps=num(one.tokens_per_s, 0), users=num(users), tokens=num(tokens), cache=size(many.cache_bytes),
                  share=num(100 * many.cache_share, 0), total=num(many.tokens_per_s, 0), each=num(many.per_user, 1)))
    per_token = A.forward_flops_per_token(cfg, tokens, n_params)
    st.caption(t("kvcache.serve.flops", tokens=num(tokens), flops=flops(per_token),
                 intensity=num(per_token / (weights + per_user), 1), dtype=weight_dtype,
                 attn=flops(A.attention_flops(cfg, tokens, causal=True))))
    batches = sorted({1, 2, 4, 8, 16, 32, 64, 128, 256, 512, users})
    steps = [A.decode_step(weights, per_user, b, bw * 1e12) for b in batches]
    fig = go.Figure([
        go.Scatter(x=batches, y=[s.tokens_per_s for s in steps], name=t("kvcache.serve.total"), mode="lines+markers",
                   line_color=PALETTE[0]),
        go.Scatter(x=batches, y=[s.per_user for s in steps], name=t("kvcache.serve.each"), mode="lines+markers",
                   line_color=PALETTE[1]),
    ])
    fig.update_layout(height=340, xaxis_type="log", yaxis_type="log", xaxis_title=t("kvcache.serve.x"),
                      yaxis_title=t("kvcache.serve.y"), margin=dict(l=10, r=10, t=30, b=10))
    fig.update_xaxes(tickvals=batches)
    fig.update_yaxes(dtick=1)
    live_chart(fig, key="kvcache.serve_chart")


def moe_table(n_params: float, name: str) -> None:
    ds = MORE_MODELS["DeepSeek-V3"]
    models = ((name, A.dense_vs_moe(n_params)), (t("kvcache.moe.typical"), A.dense_vs_moe(400e9, 25e9)),
              ("DeepSeek-V3", A.dense_vs_moe(A.count_params(ds), A.active_params(ds))))
    st.dataframe(pd.DataFrame([{
        t("kvcache.moe.col.model"): label, t("kvcache.moe.col.total"): big(m.total),
        t("kvcache.moe.col.active"): f"{big(m.active)} ({num(100 * m.active_share, 0)}%)",
        t("kvcache.moe.col.flops"): flops(m.flops_per_token), t("kvcache.moe.col.memory"): size(m.memory_bytes),
    } for label, m in models]), hide_index=True, key="kvcache.moe_table")
