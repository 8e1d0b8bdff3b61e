"""Widgets and cached runs for the sampling lesson (logits, filters, generation, loss); the figures
the server draws are in ui.lessons.sampling.figures.

The maths lives in lib.lessons.sampling, lib.lessons.generate and lib.lessons.loss. The next-token distribution is read
from the cached capture (the sliders never run the model); a generation runs only when the
learner presses the button, through `generation`, cached by plain values, so moving a slider
afterwards finds it in the cache.
"""

from __future__ import annotations

import html
import re
import time

import numpy as np
import streamlit as st

from lib.lessons.generate import Generation, generate
from lib.lessons.loss import TextLoss, capture_loss
from lib.model.tokens import readable_tokens
from lib.serving.payload import pack_u16
from ui.lessons.sampling.figures import GREY, steps_data, times_figure
from ui.shell.cache import derived, get_capture, get_model, per_model
from ui.shell import core
from ui.shell.core import num, t
from ui.views import browser
from ui.views.export import modebar_config
from ui.views.figures import PALETTE
from ui.views.live_chart import live_chart

TOP_CHART = 20  # candidates drawn in the distribution chart
MAX_NEW = 50
DEFAULT_NEW = 20
GEN_BUDGET_S = 120  # a generation on a busy machine stops after this long, keeping what it wrote
PROMPT_SHOWN = 40  # prompt tokens shown before the generated ones
SURPRISE_MAX = 8.0  # nats at which the loss colour saturates
TOP_K_MAX = 10**9
SEED_MAX = 2**32 - 1
DEFAULTS = {"sampling.temperature": 1.0, "sampling.top_k": 50, "sampling.top_p": 0.9, "sampling.seed": 0,
            "sampling.max_new": DEFAULT_NEW}
GEN_RGB = (100, 149, 237)  # generated tokens: white (unlikely) to this blue (certain)
LOSS_RGB = (228, 87, 86)  # surprise: white (none) to this red (SURPRISE_MAX nats or more)


def labels(prefix: str, *names: str, **values) -> dict[str, str]:
    """{name: t(f"{prefix}.{name}", **values)} for a figure builder."""
    return {n: t(f"{prefix}.{n}", **values) for n in names}


def md(token: str) -> str:
    """A token safe inside Markdown: no character of it can start emphasis, a link or LaTeX."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|$<>~])", r"\\\1", token)


def tex(number: str) -> str:
    """A formatted number for inside $...$: a comma there is punctuation (TeX adds a space after
    it), so it goes in braces; 49,152 -> 49{,}152 and Italian 0,144 -> 0{,}144."""
    return number.replace(",", "{,}")


def pct(p: float) -> str:
    """A probability as a percentage, with more digits when it is small."""
    digits = 1 if p >= 0.01 else 3 if p >= 1e-4 else 6
    return f"{num(100 * p, digits)}%"


# ---------------------------------------------------------------- the next-token view
# Temperature, top-k, top-p, the seed and the draw are answered in the browser
# (static/views/sampling.js): the server sends the last position's logits once per text, sorted
# from the best token down and packed (lib/serving/payload.py), with the best candidates' labels.

SETTINGS = ("temperature", "top_k", "top_p", "seed")
LINK_KEY = "sampling.link_settings"  # a share link's values, handed to the view once


def settings() -> dict:
    """The settings the server knows: a share link's, or those the last "Generate" carried, or
    the defaults."""
    s = st.session_state
    return {name: s.get(f"sampling.{name}", DEFAULTS[f"sampling.{name}"]) for name in SETTINGS}


def keep_settings(values: dict | None) -> None:
    """The browser's settings, carried by a button press, checked and kept for the session."""
    if not isinstance(values, dict):
        return
    for name, lo, hi, kind in (("temperature", 0.0, 2.0, float), ("top_k", 0, TOP_K_MAX, int),
                               ("top_p", 0.0, 1.0, float), ("seed", 0, SEED_MAX, int)):
        value = values.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and lo <= value <= hi:
            st.session_state[f"sampling.{name}"] = kind(value)


def view_labels() -> dict[str, str]:
    """Every text the view writes, in the page's language."""
    names = {"temperature": "sampling.temperature", "temperature_help": "sampling.temperature_help",
             "top_k": "sampling.top_k", "top_k_help": "sampling.top_k_help", "top_p": "sampling.top_p",
             "top_p_help": "sampling.top_p_help", "greedy_note": "sampling.greedy_note",
             "top_k_all": "sampling.top_k_all", "top_p_zero": "sampling.top_p_zero",
             "model": "sampling.chart.model", "final": "sampling.chart.final",
             "cumulative": "sampling.chart.cumulative", "cut": "sampling.chart.cut", "drawn": "sampling.chart.drawn",
             "hover": "sampling.chart.hover", "token": "sampling.table.token", "rank": "sampling.table.rank",
             "kept": "sampling.metric.kept", "top": "sampling.metric.top", "effective": "sampling.metric.effective",
             "effective_help": "sampling.metric.effective_help", "rest": "sampling.metric.rest",
             "rest_help": "sampling.metric.rest_help", "seed": "sampling.seed", "seed_help": "sampling.seed_help",
             "sample": "sampling.sample.button", "prompt": "sampling.sample.prompt", "result": "sampling.sample.view_result",
             "rank_only": "sampling.sample.rank_only", "table": "chart.as_table", "unavailable": "views.unavailable"}
    return {k: t(v) for k, v in names.items()}


def view_data(logits: np.ndarray, tokenizer, key: str, lang: str) -> dict:
    """What the browser view draws from: the logits sorted best first and packed, the best
    candidates' ids and readable labels, the chart's fixed layout, the labels and the settings."""
    x = np.asarray(logits, dtype=np.float64)
    order = np.argsort(-x, kind="stable")  # best first, ties in id order (lib.lessons.sampling)
    n = min(TOP_CHART, x.size)
    ids = [int(i) for i in order[:n]]
    labels = view_labels()
    layout = {"title": {"text": t("sampling.chart.title", n=num(n))}, "barmode": "group", "height": 420,
              "margin": {"l": 10, "r": 10, "t": 50, "b": 10}, "yaxis": {"title": {"text": t("sampling.chart.y")},
                                                                       "range": [0, 1.05]},
              "legend": {"orientation": "h", "y": -0.35}, "separators": t("plot.separators"),
              "xaxis": {"title": {"text": t("sampling.chart.x")}, "tickangle": -45}}
    labels["title"] = layout["title"]["text"]
    current = settings()
    link = st.session_state.get(LINK_KEY)
    return {"key": key, "lang": lang, "logits": pack_u16(x[order]), "ids": ids,
            "tokens": readable_tokens(tokenizer, ids), "labels": labels, "layout": layout,
            "palette": list(PALETTE), "grey": GREY, "config": modebar_config("sampling.dist_chart"),
            "top_k_max": TOP_K_MAX, "seed_max": SEED_MAX, "settings": dict(current, from_link=link)}


def max_new_widget() -> int:
    return int(st.slider(t("sampling.gen.max_new"), 1, MAX_NEW, DEFAULTS["sampling.max_new"], key="sampling.max_new"))


# ---------------------------------------------------------------- generation

@derived
def generation(model_name: str, text: str, max_tokens: int, max_new: int, temperature: float, top_k: int,
               top_p: float, seed: int) -> Generation:
    """One generation per set of plain values: pressing the button again, or moving a slider
    afterwards, finds it here instead of running the model."""
    deadline = time.monotonic() + GEN_BUDGET_S
    return generate(get_model(model_name), text, max_new, temperature, top_k or None, top_p, seed,
                    max_prompt_tokens=max_tokens, should_stop=lambda: time.monotonic() > deadline)


def request_generation(model_name: str, text: str, max_tokens: int, browser: dict | None) -> None:
    """Remember what to generate, with the settings the browser carried (the page body runs it,
    through the cache)."""
    keep_settings(browser)
    s = st.session_state
    now = settings()
    s["sampling.request"] = dict(model_name=model_name, text=text, max_tokens=max_tokens,
                                 max_new=int(s.get("sampling.max_new", DEFAULTS["sampling.max_new"])),
                                 temperature=float(now["temperature"]), top_k=int(now["top_k"]),
                                 top_p=float(now["top_p"]), seed=int(now["seed"]))


def current_generation(model_name: str, text: str) -> Generation | None:
    """The generation the learner asked for, if it still belongs to the current text and model."""
    req = st.session_state.get("sampling.request")
    if req is None:
        return None
    if req["model_name"] != model_name or req["text"] != text:
        st.info(t("sampling.gen.stale"))
        return None
    with st.spinner(t("sampling.gen.running")):
        return generation(**req)


def _chip(label: str, title: str, background: str) -> str:
    """One token as a coloured chip. Its numbers (`title`) show on hover (the browser's tooltip) and,
    since a phone has no hover, when the chip is tapped: tapping focuses it (tabindex -1: focusable by
    a tap or a click, not a Tab stop) and ui.shell.styles draws the title under a focused chip."""
    style = (f"display:inline-block;margin:2px 1px;padding:1px 4px;border-radius:5px;background:{background};"
             "font-family:ui-monospace,monospace;font-size:0.92em;white-space:pre;color:#222;"
             "border:1px solid rgba(0,0,0,0.12)")
    tip = html.escape(title, quote=True)
    tap = " class='itt-tip' tabindex='-1'" if title else ""
    return f"<span title='{tip}'{tap} style='{style}'>{html.escape(label)}</span>"


def blend(rgb: tuple[int, int, int], amount: float) -> str:
    """A solid colour between white (amount 0) and `rgb` (amount 1): dark text stays readable on
    it in a light or a dark theme alike."""
    a = min(max(float(amount), 0.0), 1.0)
    r, g, b = (round(255 + (c - 255) * a) for c in rgb)
    return f"#{r:02X}{g:02X}{b:02X}"


def chips_box(chips: list[str], name: str) -> None:
    st.html(f"<div class='{name}' style='line-height:2.1'>{''.join(chips)}</div>")


def generation_chips(gen: Generation) -> None:
    """The end of the prompt in grey, then each generated token coloured by its probability."""
    chips = [_chip(tok, "", "#EEEEEE") for tok in gen.prompt_tokens[-PROMPT_SHOWN:]]
    for i, s in enumerate(gen.steps, start=1):
        title = t("sampling.gen.chip", step=num(i), p=pct(s.prob), rank=num(s.rank), kept=num(s.n_kept))
        chips.append(_chip(s.token, title, blend(GEN_RGB, 0.15 + 0.85 * s.prob)))
    chips_box(chips, "gen-chips")


def generation_summary(gen: Generation) -> None:
    """Settings, why it stopped, the written tokens, and one step's distribution picked by a slider."""
    st.caption(settings_line(gen))
    if gen.prompt_truncated:
        st.caption(t("sampling.gen.prompt_cut", n=num(len(gen.prompt_ids))))
    (st.success if gen.stop in ("eos", "max_tokens") else st.warning)(stop_line(gen))
    if not gen.steps:
        st.info(t("sampling.gen.nothing"))
        return
    generation_chips(gen)
    st.caption(t("sampling.gen.legend"))
    step_view(gen)


def step_view(gen: Generation) -> None:
    """One step's distribution, picked by a slider answered in the browser (static/views/generation.js):
    every step's candidates go with the generation, once."""
    names = {"step": "sampling.gen.step", "title": "sampling.gen.step_title", "model": "sampling.chart.model",
             "final": "sampling.chart.final", "y": "sampling.chart.y", "rank": "sampling.table.rank",
             "token": "sampling.table.token", "table": "chart.as_table", "unavailable": "views.unavailable"}
    key = browser.data_key(gen, core.lang())
    data = steps_data(gen, {k: t(v) for k, v in names.items()}, core.lang(), key)
    data["config"] = modebar_config("sampling.step_chart")
    data["layout"]["separators"] = t("plot.separators")
    browser.view("generation", "sampling.steps_view", data)


@per_model
def weights_bytes(model_name: str) -> int:
    """Bytes of every weight tensor: what each generated token reads from memory once more."""
    return int(sum(p.numel() * p.element_size() for p in get_model(model_name).model.parameters()))


def timing(gen: Generation, model_name: str) -> None:
    """Time to first token against time per following token, with the bytes read per step."""
    n = len(gen.prompt_ids)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(t("sampling.gen.ttft"), t("sampling.gen.ms", n=num(1000 * gen.first_token_s, 1)))
    c3.metric(t("sampling.gen.prompt_tokens"), num(n))
    c4.metric(t("sampling.gen.per_prompt_token"), t("sampling.gen.ms", n=num(1000 * gen.steps[0].forward_s / n, 2)))
    if len(gen.steps) < 2:
        c2.metric(t("sampling.gen.per_token"), "—")
        st.caption(t("sampling.gen.one_token"))
        return
    c2.metric(t("sampling.gen.per_token"), t("sampling.gen.ms", n=num(1000 * gen.per_token_s, 1)))
    mb = weights_bytes(model_name) / 1e6
    live_chart(times_figure(gen, labels("sampling.gen", "times_title", "times_x", "times_y")),
               key="sampling.times_chart")
    st.caption(t("sampling.gen.timing_read", ttft=num(1000 * gen.first_token_s, 1), n=num(n),
                 per_prompt=num(1000 * gen.steps[0].forward_s / n, 2), per_token=num(1000 * gen.per_token_s, 1),
                 weights_mb=num(mb, 0), bandwidth=num(mb / 1000 / gen.per_token_s, 1)))


def settings_line(gen: Generation) -> str:
    return t("sampling.gen.settings", temperature=num(gen.temperature, 2),
             top_k=num(gen.top_k) if gen.top_k else t("sampling.off"),
             top_p=num(gen.top_p, 2) if gen.top_p is not None and gen.top_p < 1 else t("sampling.off"),
             seed=str(gen.seed))


def stop_line(gen: Generation) -> str:
    return t(f"sampling.gen.stop.{gen.stop}", n=num(len(gen.steps)), seconds=num(GEN_BUDGET_S))


# ---------------------------------------------------------------- loss

@derived
def loss_of(model_name: str, text: str, max_tokens: int) -> tuple[TextLoss, tuple[str, ...]]:
    """The loss of the learner's text from the cached capture, with the model's top guesses as text."""
    cap = get_capture(model_name, text, max_tokens)
    loss = capture_loss(cap)  # chunk by chunk: never the whole [T, V] logits (1 GB on Gemma at 1,024 tokens)
    guesses = tuple(readable_tokens(get_model(model_name).tokenizer, loss.top.tolist()))
    return loss, guesses


def surprise_chips(tokens: tuple[str, ...], loss: TextLoss, guesses: tuple[str, ...]) -> None:
    """Every token of the text, coloured from white (no surprise) to red (SURPRISE_MAX nats or more)."""
    chips = [_chip(tokens[0], t("sampling.loss.first"), "#F4F4F4")]
    for tok, s, p, rank, guess in zip(tokens[1:], loss.surprise, loss.prob, loss.rank, guesses):
        title = t("sampling.loss.chip", p=pct(float(p)), s=num(float(s), 2), b=num(float(s) / np.log(2), 2),
                  rank=num(int(rank)), top=guess)
        chips.append(_chip(tok, title, blend(LOSS_RGB, float(s) / SURPRISE_MAX)))
    chips_box(chips, "loss-chips")
    st.caption(t("sampling.loss.legend", max=num(SURPRISE_MAX)))
