"""Streamlit and plotly helpers for the tokenization lesson: cached training and replay, the
player that animates merges (step slider, buttons, auto-advance), token chips, figures.

The player: a fragment holds the step slider, the step buttons and the drawing, so moving
through the steps reruns only the fragment. Play (outside the fragment) sets `<prefix>.playing`;
the full run it causes declares the fragment with `run_every=TICK_S`, and each automatic rerun
advances the step. Pause is a full run that declares the fragment without a timer, which stops
it; reaching the last step clears `playing`, and the next tick asks for that full run itself.
"""

from __future__ import annotations

import html
from functools import lru_cache
from typing import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from lib import bpe, bpe_replay
from lib.i18n import ASSETS
from lib.tokens import show_bytes
from ui.cache import get_model
from ui.core import num, t
from ui.figures import PALETTE, quick
from ui.live_chart import live_chart

MAX_MERGES = 500  # the target-size box goes up to 256 + this; training takes well under a second
DEFAULT_TARGET = bpe.N_BYTES + 200
YOUR_TEXT_MAX = 20_000  # characters of the learner's text that enter the training corpus
REPLAY_MAX = 2_000  # characters of the learner's text replayed through the real merges
CHIPS_MAX_BYTES = 2_500  # bytes drawn as chips (counts always cover everything)
TICK_S = 0.8
SPEEDS = (1, 5, 20)
SOURCES = ("it", "en", "yours")
# Light backgrounds that keep dark text readable; a token id always gets the same one.
CHIP_COLORS = ["#FDE2B3", "#C9E4F6", "#D5EFC8", "#F8CFD6", "#E3D6F4", "#FFF1A8", "#C8EEE8",
               "#F6D7C3", "#DCE3EA", "#EAD9C6", "#D0F0D8", "#F3E0F0"]


# ------------------------------------------------------------------------- data, cached


def names(prefix: str, options) -> dict[str, str]:
    """Option -> label, looked up now: a widget's format_func may be called outside the run."""
    return {o: t(f"{prefix}.{o}") for o in options}


@lru_cache(maxsize=None)
def corpus_text(lang: str) -> str:
    """The built-in text in a language (the Italian and English ones say the same thing)."""
    return (ASSETS / "corpora" / lang / "tokenization.txt").read_text(encoding="utf-8").strip()


def paragraphs(lang: str) -> list[str]:
    return [p.strip() for p in corpus_text(lang).split("\n\n") if p.strip()]


def build_corpus(sources: list[str], learner: str) -> tuple[str, list[tuple[str, str]]]:
    """The training corpus (learner's text first, so the chips show it) and notices to show."""
    parts, notes = [], []
    if "yours" in sources:
        if not learner.strip():
            notes.append(("info", t("tokenization.build.yours_empty")))
        else:
            if len(learner) > YOUR_TEXT_MAX:
                notes.append(("warning", t("tokenization.build.yours_capped", n=num(len(learner)),
                                            cap=num(YOUR_TEXT_MAX))))
            parts.append(learner[:YOUR_TEXT_MAX])
    parts += [corpus_text(lang) for lang in ("it", "en") if lang in sources]
    return "\n\n".join(parts), notes


def clamp_target(requested: float | None) -> tuple[int, str | None]:
    """The vocabulary size to use, and the notice when the request was out of range."""
    if requested is None:
        return DEFAULT_TARGET, None
    value = int(requested)
    if value < bpe.N_BYTES:
        return bpe.N_BYTES, t("tokenization.build.target_low", n=num(value))
    if value > bpe.N_BYTES + MAX_MERGES:
        return bpe.N_BYTES + MAX_MERGES, t("tokenization.build.target_high", n=num(value),
                                           max=num(bpe.N_BYTES + MAX_MERGES))
    return value, None


@st.cache_resource(max_entries=8, show_spinner=False)
def get_training(corpus: str, pattern: str) -> bpe.Training:
    """Train once up to MAX_MERGES; a smaller target is a prefix of the same merges."""
    return bpe.train(corpus, bpe.N_BYTES + MAX_MERGES, pattern)


@st.cache_resource(max_entries=3, show_spinner=False)
def get_bpe_model(model_name: str) -> tuple[bpe_replay.ByteLevelBPE | None, str, str]:
    """(model, "", "") or (None, reason code, detail) for a tokenizer that cannot be replayed."""
    try:
        return bpe_replay.from_tokenizer(get_model(model_name).tokenizer), "", ""
    except bpe_replay.NotByteLevelBPE as e:
        return None, e.code, e.detail


@st.cache_resource(max_entries=8, show_spinner=False)
def get_replay(model_name: str, text: str) -> bpe_replay.Replay:
    model, _, _ = get_bpe_model(model_name)
    return bpe_replay.replay(text, model)


@st.cache_data(max_entries=4, show_spinner=False)
def language_costs(model_name: str) -> pd.DataFrame:
    """Tokens of each built-in paragraph in Italian and in English, with the tokenizer itself."""
    tok = get_model(model_name).tokenizer
    rows = []
    for i, (it, en) in enumerate(zip(paragraphs("it"), paragraphs("en")), start=1):
        rows.append({"n": i, "it_chars": len(it), "en_chars": len(en),
                     "it": len(tok.encode(it, add_special_tokens=False)),
                     "en": len(tok.encode(en, add_special_tokens=False))})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------- chips


def _color(token_id: int) -> str:
    return "#E0E0E0" if token_id < 0 else CHIP_COLORS[(token_id * 7) % len(CHIP_COLORS)]


# The chips' look, sent once with each box: a step of the BPE player draws hundreds of chips, and
# the same inline style on each one made its box 145 KB of HTML for the browser to sanitize and
# parse at every step (48 KB now, mostly each chip's title).
CHIP_CSS = ("<style>.tok-chip{display:inline-block;margin:2px 1px;padding:1px 4px;border-radius:5px;"
            "font-family:ui-monospace,monospace;font-size:0.92em;white-space:pre;color:#222;line-height:1.5;"
            "border:1px solid rgba(0,0,0,0.12)}"
            ".tok-chip[data-new='1']{border:2px solid #C2185B;font-weight:700}"
            ".tok-chip.tok-dropped{text-decoration:line-through;opacity:0.6}"
            ".tok-chip .tok-id{font-size:0.68em;opacity:0.65;margin-left:3px}</style>")


def chip(label: str, token_id: int, title: str, *, new: bool = False, show_id: bool = False,
         dropped: bool = False, newline: bool = False) -> str:
    sub = f"<span class='tok-id'>{token_id}</span>" if show_id and token_id >= 0 else ""
    out = (f"<span class='tok-chip{' tok-dropped' if dropped else ''}' data-new='{int(new)}' "
           f"title='{html.escape(title, quote=True)}' tabindex='-1' style='background:{_color(token_id)}'>"
           f"{html.escape(label)}{sub}</span>")  # tabindex -1: a tap shows the title (ui.styles)
    return out + ("<br>" if newline else "")


def chips_box(chips: list[str], step: int) -> None:
    # The style after the chips: a leading <style> would be parsed into the head and dropped by the
    # sanitizer st.html uses.
    st.html(f"<div class='tok-chips' data-step='{step}' style='line-height:2.1'>{''.join(chips)}</div>{CHIP_CSS}")


def _hex(data: bytes) -> str:
    return " ".join(f"{b:02X}" for b in data)


def training_chips(training: bpe.Training, k: int, end: int) -> list[str]:
    new_id = training.merges[k - 1].id if k > 0 else -1
    template = t("tokenization.chip.title")  # looked up once, filled per chip
    out = []
    for s in training.spans(k, 0, end):
        data = training.corpus[s.start:s.end]
        title = template.replace("{id}", str(s.id)).replace("{bytes}", _hex(data))
        out.append(chip(show_bytes(data), s.id, title, new=s.id == new_id, newline=data.endswith(b"\n")))
    return out


def replay_chips(r: bpe_replay.Replay, k: int, end: int, raw: bool, show_ids: bool,
                 highlight: bool = True) -> list[str]:
    new_id = r.steps[k - 1].id if k > 0 and highlight else -2
    template = t("tokenization.chip.title")
    out = []
    for tk in r.tokens(k, 0, end):
        data = r.data[tk.start:tk.end]
        label = tk.piece if (raw or tk.special) else show_bytes(data)
        if tk.id < 0:
            label = bpe_replay.to_byte_level(data) if raw else show_bytes(data)
        title = template.replace("{id}", str(tk.id)).replace("{bytes}", _hex(data))
        out.append(chip(label, tk.id, title, new=tk.id == new_id, show_id=show_ids, dropped=tk.id < 0,
                        newline=data.endswith(b"\n")))
    return out


def code(text: str) -> str:
    """`text` as a Markdown code span, whatever backticks or dollars it holds."""
    longest, current = 0, 0
    for ch in text:
        current = current + 1 if ch == "`" else 0
        longest = max(longest, current)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}" if longest or text.startswith(" ") else f"{fence}{text}{fence}"


def pair_parts(training: bpe.Training, pair: tuple[int, int]) -> tuple[str, str]:
    table = training.vocab()
    return show_bytes(table[pair[0]]), show_bytes(table[pair[1]])


# ------------------------------------------------------------------------- figures


# The two charts of the training player, redrawn at every step (and every tick while it plays):
# plain plotly JSON (ui.figures.quick), updated in place in the browser (ui.live_chart).

def pairs_figure(training: bpe.Training, k: int) -> go.Figure:
    """The most frequent pairs after k merges; the first bar is the next merge."""
    top = training.top_pairs[k] if k < len(training.top_pairs) else ()
    table = training.vocab()
    labels = [f"«{show_bytes(table[a])}» + «{show_bytes(table[b])}»" for (a, b), _ in top]
    counts = [c for _, c in top]
    colors = ["#C2185B"] + ["#9AA5B1"] * (len(top) - 1) if top else []
    bar = {"type": "bar", "x": counts, "y": labels, "orientation": "h", "marker": {"color": colors}, "text": counts,
           "textposition": "auto", "hovertemplate": "%{y}: %{x}<extra></extra>"}
    return quick([bar], {"title": {"text": t("tokenization.build.pairs_title")}, "height": 340,
                         "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
                         "yaxis": {"autorange": "reversed", "tickfont": {"family": "monospace"}},
                         "xaxis": {"title": {"text": t("tokenization.build.pairs_x")}}})


def compression_figure(n_bytes: int, n_tokens: tuple[int, ...], k: int, n: int) -> go.Figure:
    """Bytes per token against the number of merges, with the current step marked."""
    ratio = n_bytes / np.maximum(np.array(n_tokens[: n + 1]), 1)
    line = {"type": "scatter", "x": list(range(n + 1)), "y": ratio.round(4).tolist(), "mode": "lines",
            "line": {"color": PALETTE[0]}, "hovertemplate": t("tokenization.build.curve_hover") + "<extra></extra>"}
    marker = {"type": "scatter", "x": [k], "y": [float(ratio[k])], "mode": "markers",
              "marker": {"size": 12, "color": "#C2185B"}, "hoverinfo": "skip"}
    return quick([line, marker], {"title": {"text": t("tokenization.build.curve_title")}, "height": 340,
                                  "showlegend": False, "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
                                  "xaxis": {"title": {"text": t("tokenization.build.curve_x")}},
                                  "yaxis": {"title": {"text": t("tokenization.build.curve_y")}}})


def language_figure(costs: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Bar(x=costs["n"], y=costs["it"], name=t("tokenization.lang.it"), marker_color=PALETTE[2]))
    fig.add_trace(go.Bar(x=costs["n"], y=costs["en"], name=t("tokenization.lang.en"), marker_color=PALETTE[0]))
    fig.update_layout(barmode="group", height=320, margin=dict(l=10, r=10, t=40, b=10),
                      title=t("tokenization.lang.chart_title"), xaxis_title=t("tokenization.lang.paragraph"),
                      yaxis_title=t("tokenization.lang.tokens"), legend=dict(orientation="h", y=1.12))
    return fig


# ------------------------------------------------------------------------- the player


def _set(key: str, value) -> None:
    st.session_state[key] = value


def _toggle_play(prefix: str, n_steps: int) -> None:
    playing = not st.session_state.get(f"{prefix}.playing", False)
    if playing and st.session_state.get(f"{prefix}.step", 0) >= n_steps:
        st.session_state[f"{prefix}.step"] = 0  # play again from the start
    st.session_state[f"{prefix}.playing"] = playing


def _player_body(prefix: str, n_steps: int, draw: Callable[[int], None], ticking: bool) -> None:
    key, play_key = f"{prefix}.step", f"{prefix}.playing"
    playing = st.session_state.get(play_key, False)
    if playing != ticking:
        st.rerun(scope="app")  # only a full run can start or stop the fragment's timer
    step = min(max(int(st.session_state.get(key, 0)), 0), n_steps)
    if playing:
        step = min(step + int(st.session_state.get(f"{prefix}.speed") or 1), n_steps)
        if step >= n_steps:
            st.session_state[play_key] = False  # the next tick sees it and stops the timer
    st.session_state[key] = step

    cols = st.columns([1, 1, 1, 1, 3])
    cols[0].button("⏮", key=f"{prefix}.first", on_click=_set, args=(key, 0), help=t("tokenization.player.first"),
                   width="stretch")
    cols[1].button("◀", key=f"{prefix}.prev", on_click=_set, args=(key, max(step - 1, 0)),
                   help=t("tokenization.player.prev"), width="stretch")
    cols[2].button("▶", key=f"{prefix}.next", on_click=_set, args=(key, min(step + 1, n_steps)),
                   help=t("tokenization.player.next"), width="stretch")
    cols[3].button("⏭", key=f"{prefix}.last", on_click=_set, args=(key, n_steps), help=t("tokenization.player.last"),
                   width="stretch")
    st.slider(t("tokenization.player.step"), 0, n_steps, key=key)
    draw(step)


def player(prefix: str, n_steps: int, draw: Callable[[int], None], identity: str = "", speed: int = 1) -> None:
    """Step controls over 0..n_steps and draw(step), auto-advancing while playing (n_steps >= 1).

    A new `identity` (another corpus, another text) starts again from step 0, paused; `speed` is
    the initial number of steps per tick.
    """
    if st.session_state.get(f"{prefix}.identity") != identity:
        st.session_state[f"{prefix}.identity"] = identity
        st.session_state[f"{prefix}.step"] = 0
        st.session_state[f"{prefix}.playing"] = False
    st.session_state.setdefault(f"{prefix}.speed", speed)
    playing = bool(st.session_state.get(f"{prefix}.playing", False))
    # Play/pause and the speed sit outside the fragment: its reruns never redraw them under the
    # pointer, so a click on Pause during the animation is never lost.
    left, right = st.columns([2, 3], vertical_alignment="bottom")
    left.button(t("tokenization.player.pause") if playing else t("tokenization.player.play"), key=f"{prefix}.play",
                on_click=_toggle_play, args=(prefix, n_steps), type="primary", width="stretch")
    right.segmented_control(t("tokenization.player.speed"), options=list(SPEEDS), format_func=lambda s: f"×{s}",
                            key=f"{prefix}.speed")
    st.fragment(run_every=TICK_S if playing else None)(_player_body)(prefix, n_steps, draw, playing)


# ------------------------------------------------------------------------- the two animations


def draw_training(training: bpe.Training, k: int, n: int, window_end: int) -> None:
    """One frame of the training: the merge just made, the corpus, top pairs, compression."""
    n_bytes = len(training.corpus)
    if k == 0:
        st.markdown(t("tokenization.build.step0", bytes=num(n_bytes)))
    else:
        m = training.merges[k - 1]
        a, b = pair_parts(training, m.pair)
        st.markdown(t("tokenization.build.stepk", k=num(k), n=num(n), pair=f"{code(a)} + {code(b)}",
                      new=code(show_bytes(training.vocab(k)[m.id])), id=m.id, count=num(m.count)))
    c1, c2, c3 = st.columns(3)
    c1.metric(t("tokenization.build.vocab_size"), num(bpe.N_BYTES + k))
    c2.metric(t("tokenization.build.tokens"), num(training.n_tokens[k]),
              delta=num(training.n_tokens[k] - training.n_tokens[0]) if k else None, delta_color="inverse")
    c3.metric(t("tokenization.build.ratio"), num(n_bytes / max(training.n_tokens[k], 1), 2))
    chips_box(training_chips(training, k, window_end), k)
    if window_end < n_bytes:
        st.caption(t("tokenization.build.window", shown=num(window_end), total=num(n_bytes)))
    left, right = st.columns(2)
    live_chart(pairs_figure(training, k), key="tokenization.build.pairs_chart", where=left)
    live_chart(compression_figure(n_bytes, training.n_tokens, k, n), key="tokenization.build.curve_chart", where=right)


def draw_replay(r: bpe_replay.Replay, k: int, window_end: int) -> None:
    """One frame of the replay: the model's merge at this step and the text as tokens."""
    if k == 0:
        st.markdown(t("tokenization.real.step0", bytes=num(len(r.data))))
    else:
        s = r.steps[k - 1]
        st.markdown(t("tokenization.real.stepk", k=num(k), n=num(r.n_steps), rank=num(s.rank + 1),
                      left=code(s.left), right=code(s.right), merged=code(s.merged), id=s.id, count=num(s.count)))
    c1, c2 = st.columns([2, 3])
    raw = c1.segmented_control(t("tokenization.real.view"), options=["readable", "raw"], default="readable",
                               format_func=names("tokenization.real.view", ("readable", "raw")).get,
                               key="tokenization.real.view") == "raw"
    show_ids = c2.toggle(t("tokenization.real.show_ids"), value=True, key="tokenization.real.show_ids")
    tokens = r.tokens(k)
    st.metric(t("tokenization.real.tokens_now"), num(sum(1 for x in tokens if x.id >= 0)))
    chips_box(replay_chips(r, k, window_end, raw, show_ids), k)
    if window_end < len(r.data):
        st.caption(t("tokenization.build.window", shown=num(window_end), total=num(len(r.data))))


def paragraph_pair(model_name: str, index: int) -> None:
    """Paragraph `index` of the built-in texts, Italian beside English, as the model's tokens."""
    for col, lang in zip(st.columns(2), ("it", "en")):
        r = get_replay(model_name, paragraphs(lang)[index])
        with col:
            st.markdown(t("tokenization.lang.pair_head", lang=t(f"tokenization.lang.{lang}"), n=num(len(r.ids))))
            chips_box(replay_chips(r, r.n_steps, len(r.data), raw=False, show_ids=False, highlight=False), r.n_steps)


def token_table(r: bpe_replay.Replay) -> pd.DataFrame:
    """The final tokens: id, the vocabulary's own string (with Ġ), its bytes, readable text."""
    rows = [{t("tokenization.table.pos"): i, t("tokenization.table.id"): x.id,
             t("tokenization.table.piece"): x.piece, t("tokenization.table.bytes"): _hex(r.data[x.start:x.end]),
             t("tokenization.table.text"): x.piece if x.special else show_bytes(r.data[x.start:x.end])}
            for i, x in enumerate(y for y in r.tokens() if y.id >= 0)]
    return pd.DataFrame(rows)
