"""The KV-cache lesson's data for its browser view, cached measurements and sections; the timing
figure is drawn by ui.lessons.kvcache.figures.

The calculator, the variants at its context, training, serving and the experts' table are drawn by
static/views/kvcache.js from what `calc_data`, `variants_data` and `cost_data` send: each model as
lib.lessons.kvcache.spec, the labels and the settings; every number a learner types is clamped there with
lib.lessons.kvcache.clamp's rule and a notice. A pasted config.json is read here (`pasted_config`).
Measurements on the live model are cached per model name (and token count).
"""

from __future__ import annotations

import functools
import json
import math

import pandas as pd
import streamlit as st

from lib.lessons import kvcache as K
from lib.lessons.reference import MORE_MODELS, REFERENCE_MODELS, SEED_000_KV_TABLE
from lib.model import arithmetic as A
from ui.lessons.kvcache.figures import timing_figure
from ui.shell.cache import derived, get_model, per_model
from ui.shell.core import big, num, t
from ui.views import browser, figures
from ui.views.export import modebar_config
from ui.views.figures import PALETTE
from ui.views.live_chart import live_chart

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
# static/views/kvcache.js writes the same figures the same way (tests/js/kvcache.test.js on fixtures
# these functions write; sci and flops are the training and serving sentences' formats, now written
# there): `language` None is the page's.


def size(b: float, language: str | None = None) -> str:
    """Bytes for people, decimal units: 1.07 GB, 13.1 GB, 840 GB, 2.15 TB."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if b >= scale:
            x = b / scale
            return f"{num(x, 2 if x < 10 else 1 if x < 100 else 0, language)} {unit}"
    return f"{num(round(b), language=language)} B"


def kib(b: float, language: str | None = None) -> str:
    return f"{num(b / 1024, 1, language)} KiB"


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def sci(x: float, digits: int = 1, language: str | None = None) -> str:
    """Scientific notation for people: 7.2 × 10²³."""
    exp = math.floor(math.log10(abs(x))) if x else 0
    return f"{num(x / 10**exp, digits, language)} × 10{str(exp).translate(_SUPERSCRIPT)}"


def flops(x: float, language: str | None = None) -> str:
    for unit, scale in (("PFLOP", 1e15), ("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6)):
        if x >= scale:
            return f"{num(x / scale, 1, language)} {unit}"
    return f"{num(round(x), language=language)} FLOP"


# ------------------------------------------------------------------------------------ the calculator's view
# The calculator, the variants at its context and the training, serving and experts' sections that
# price its choice are answered in the browser (static/views/kvcache.js): the server sends each
# model as a few numbers (lib.lessons.kvcache.spec), once per model and language, and the view does the
# arithmetic of lib.model.arithmetic there. A pasted config.json is new data: lib reads it here.

SETTINGS = ("context", "tokens", "users", "card_gb", "cache", "weights")  # a share link's names (ui/learner/share.py)
SETTING_KEYS = {"context": "kvcache.context_pick", "tokens": "kvcache.context", "users": "kvcache.users",
                "card_gb": "kvcache.card_gb", "cache": "kvcache.cache_dtype", "weights": "kvcache.weight_dtype"}
DEFAULTS = {"context": 8192, "tokens": 8192, "users": 10, "card_gb": 80.0, "cache": "bf16", "weights": "bf16"}
BOUNDS = {"tokens": (1, MAX_TOKENS), "users": (1, 100_000), "card_gb": (1.0, 100_000.0)}  # the boxes' ranges
LINK_KEY = "kvcache.link_settings"  # a share link's values, handed to the view once
SHARED_LABELS = ("kvcache.clamped", "chart.as_table", "views.unavailable")
LABELS = {  # what each part of the view writes, besides SHARED_LABELS
    "calc": ("kvcache.preset", "kvcache.context_pick", "kvcache.context", "kvcache.users", "kvcache.cache_dtype",
             "kvcache.cache_dtype_help", "kvcache.weight_dtype", "kvcache.weight_dtype_help", "kvcache.card_gb",
             "kvcache.custom.kv_over", "kvcache.per_token", "kvcache.per_token_help", "kvcache.per_user",
             "kvcache.weights", "kvcache.total", "kvcache.params_are", "kvcache.layers_are", "kvcache.weights_too_big",
             "kvcache.fit_unbounded", "kvcache.fit", "kvcache.not_fit", "kvcache.chart.one_user",
             "kvcache.chart.all_users", "kvcache.chart.cache", "kvcache.chart.card", "kvcache.chart.title",
             "kvcache.table.sum", "kvcache.table.card", "chart.kvcache.calc_chart", "yes", "no",
             *(f"kvcache.field.{f}" for f, *_ in CUSTOM_FIELDS)),
    "variants": ("kvcache.variant.hover", "kvcache.variant.title", "kvcache.variant.col.kind",
                 "kvcache.variant.col.per_token", "kvcache.variant.col.per_user", "kvcache.variant.col.saving",
                 "kvcache.variant.col.users", "chart.kvcache.variants_chart"),
    "train": ("kvcache.train.tokens", "kvcache.train.gpus", "kvcache.train.tflops", "kvcache.train.util",
              "kvcache.train.result", "kvcache.train.col.setup", "kvcache.train.adam", "kvcache.train.muon",
              "kvcache.train.zero", "kvcache.train.one_card", *(f"kvcache.train.col.{k}" for k in
                                                               ("weights", "gradients", "master", "optimizer", "total"))),
    "serve": ("kvcache.serve.bandwidth", "kvcache.serve.users", "kvcache.serve.result", "kvcache.serve.flops",
              "kvcache.serve.total", "kvcache.serve.each", "kvcache.serve.x", "kvcache.serve.y",
              "chart.kvcache.serve_chart"),
    "moe": ("kvcache.moe.typical", *(f"kvcache.moe.col.{k}" for k in ("model", "total", "active", "flops", "memory"))),
}


def preset_config(key: str, live_config: dict) -> dict:
    """The config dict behind a preset key (the 8B variants are built by lib.lessons.kvcache)."""
    if key == "live":
        return live_config
    if key.startswith("8b_"):
        return K.variant_config(REFERENCE_MODELS[BASE], key.removeprefix("8b_"))
    return {**REFERENCE_MODELS, **MORE_MODELS}[key]


def preset_label(key: str, live_name: str) -> str:
    if key == "live":
        return t("kvcache.preset.live", name=live_name)
    if key.startswith("8b_") or key in ("custom", "pasted"):
        return t(f"kvcache.preset.{key}")
    return key


@functools.cache
def _specs() -> dict[str, dict]:
    """Every preset but the live model's, and the six variants: the same for every learner."""
    presets = tuple((k, K.spec(preset_config(k, {}), A.count_params(preset_config(k, {}))))
                    for k in (*PRESETS, BASE) if k not in ("live", "custom"))
    base = REFERENCE_MODELS[BASE]
    return dict(presets + tuple((f"variant.{v}", K.spec(K.variant_config(base, v), None)) for v in K.VARIANTS))


def settings() -> dict:
    """The settings the server knows: a share link's (in session state), else the defaults."""
    s = st.session_state
    return {name: s.get(key, DEFAULTS[name]) for name, key in SETTING_KEYS.items()}


def pasted_config() -> tuple[dict, int | None] | None:
    """A config.json the learner pasted, read by lib: (config, parameters or None), or None (with a
    message saying why) when the box is empty or the text unusable. A new text reruns the page: it
    is new data for the view, like a new text for the other lessons."""
    raw = st.text_area(t("kvcache.custom.paste"), key="kvcache.custom_json", height=90,
                       placeholder='{"num_hidden_layers": 32, "num_attention_heads": 32, ...}')
    if not raw.strip():
        return None
    try:
        cfg = json.loads(raw)
    except ValueError:
        cfg = None
    if not isinstance(cfg, dict):
        st.error(t("kvcache.custom.bad_json"))
        return None
    cfg = A.text_config(cfg)
    try:
        A.cache_layers(cfg)
    except A.ConfigError as e:
        st.error(t(f"kvcache.custom.{e.problem}", field=e.field))
        return None
    try:
        n_params = A.count_params(cfg)
    except (ValueError, KeyError, TypeError):
        st.info(t("kvcache.custom.no_params", model_type=str(cfg.get("model_type"))))
        n_params = None
    st.caption(t("kvcache.custom.pasted_used"))
    return cfg, n_params


def _part(part: str, key: str, lang: str) -> dict:
    """What every part of the view gets: its labels, the formats' bytes, the chart's look."""
    return {"part": part, "key": key, "lang": lang, "labels": {k: t(k) for k in SHARED_LABELS + LABELS[part]},
            "units": {"billion": t("unit.billion"), "million": t("unit.million")},
            "cache_dtypes": dict(A.CACHE_DTYPES), "weight_dtypes": dict(A.WEIGHT_DTYPES), "palette": list(PALETTE),
            "separators": t("plot.separators"), "config": modebar_config(f"kvcache.{part}_chart")}


def calc_data(live_config: dict, live_name: str, live_params: int, key: str, lang: str,
              pasted: tuple[dict, int | None] | None = None) -> dict:
    """The calculator's data: every preset as lib.lessons.kvcache.spec (the live model's, the references',
    a pasted config's), the contexts, the bounds of the boxes and the settings."""
    specs = _specs()
    presets = [{"key": "live", "label": preset_label("live", live_name), "short": live_name,
                "spec": K.spec(live_config, live_params)}]
    presets += [{"key": k, "label": preset_label(k, live_name), "short": preset_label(k, live_name), "spec": specs[k]}
                for k in PRESETS if k not in ("live", "custom")]
    if pasted is not None:
        name = preset_label("pasted", live_name)
        presets.append({"key": "pasted", "label": name, "short": name, "spec": K.spec(*pasted)})
    name = preset_label("custom", live_name)
    presets.append({"key": "custom", "label": name, "short": name, "spec": None})
    link = st.session_state.get(LINK_KEY)
    return dict(_part("calc", key, lang), presets=presets, contexts=list(CONTEXTS), base=BASE, base_spec=specs[BASE],
                bounds={k: list(v) for k, v in BOUNDS.items()},
                custom=[{"field": f, "default": d, "lo": lo, "hi": hi} for f, d, lo, hi in CUSTOM_FIELDS],
                settings=dict(settings(), from_link=link,
                              pasted=browser.data_key(pasted[0]) if pasted is not None else None))


def variants_data(key: str, lang: str, after: str) -> dict:
    """The six variants of the 8B as specs; `after`, the lesson's sentence the view fills in."""
    specs = _specs()
    return dict(_part("variants", key, lang), base_spec=specs[BASE], local_window=K.LOCAL_WINDOW, after=after,
                settings=settings(), variants=[{"kind": v, "label": t(f"kvcache.variant.{v}"),
                                                "spec": specs[f"variant.{v}"]} for v in K.VARIANTS])


def cost_data(part: str, key: str, lang: str, live_config: dict, live_name: str, live_params: int,
              chosen: str = "") -> dict:
    """Training, serving or the experts' table: they price the calculator's choice, which the view
    reads from the page store; until the calculator has drawn, the live model at the settings."""
    now = settings()
    data = dict(_part(part, key, lang), chosen=chosen, priced={
        "label": live_name, "spec": K.spec(live_config, live_params), "tokens": now["tokens"], "cache": now["cache"],
        "weights": now["weights"]})
    if part == "moe":
        ds = MORE_MODELS["DeepSeek-V3"]
        data["deepseek"] = {"total": A.count_params(ds), "active": A.active_params(ds)}
    return data


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


@derived
def measured(model_name: str, text: str, tokens: int) -> tuple[K.CacheMeasurement, int]:
    """The live model's real cache over `tokens` tokens of the learner's text (repeated as needed,
    random ids with a fixed seed if it is empty), and how many tokens the text gave."""
    lm = get_model(model_name)
    ids = K.text_ids(lm, text, tokens)
    return K.measure_cache(lm, tokens, token_ids=ids), len(ids)


@per_model
def timings(model_name: str) -> tuple[K.TimingRow, ...]:
    return K.time_prefill_decode(get_model(model_name), TIMING_PROMPTS, TIMING_NEW_TOKENS)


@derived
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
    labels = {"prefill": t("kvcache.time.prefill"), "per_token": t("kvcache.time.per_token"),
              "ceiling": t("kvcache.time.ceiling"), "x": t("kvcache.time.x")}
    live_chart(timing_figure(rows, ceiling_ms, labels), key="kvcache.time_chart")
    st.markdown(t("kvcache.time.verdict_slower" if decode_ms >= ceiling_ms else "kvcache.time.verdict_faster",
                  ratio=num(decode_ms / ceiling_ms, 1), first=num(rows[-1].prefill_s * 1e3, 0),
                  n=num(rows[-1].prompt_tokens), decode=num(rows[-1].decode_s * 1e3, 0)))


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
