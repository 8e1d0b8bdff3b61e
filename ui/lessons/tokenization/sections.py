"""Cached training and replay for the tokenization lesson, and what its browser views are sent; the
figure the server draws is in ui.lessons.tokenization.figures.

The merge animations (step, play, speed), the target size, the readable/raw and ids switches and
the paragraph pair are answered in the browser (static/views/tokenization.js): the server sends
each animation once per (corpus and rule, or model and text, and language) as data lib worked
out: every token that lives at some step with the steps it lives through (lib.lessons.bpe.lives,
Replay.lives), the merges, the token count and the top pairs after each step. The view shows step
k by keeping the tokens alive at k; it does no BPE of its own. Training on another corpus or rule,
and the replay of a new text, stay on the server.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
import streamlit as st

from lib.course.i18n import ASSETS
from lib.lessons import bpe, bpe_replay
from lib.model.tokens import show_bytes
from lib.serving.payload import pack_ints
from ui.shell.cache import derived, get_model, per_model
from ui.shell.core import num, t
from ui.views.export import modebar_config
from ui.views.figures import PALETTE

MAX_MERGES = 500  # the target-size box goes up to 256 + this; training takes well under a second
DEFAULT_TARGET = bpe.N_BYTES + 200
YOUR_TEXT_MAX = 20_000  # characters of the learner's text that enter the training corpus
REPLAY_MAX = 2_000  # characters of the learner's text replayed through the real merges
CHIPS_MAX_BYTES = 2_500  # bytes drawn as chips (counts always cover everything)
TICK_MS = 800  # the animation's tick, in the browser
SPEEDS = (1, 5, 20)  # steps per tick
ACCENT = "#C2185B"  # the latest merge: its chips outlined, its bar and the curve's marker
LINK_KEY = "tokenization.link_settings"  # a share link's values, handed to the views once
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


@derived
def get_training(corpus: str, pattern: str) -> bpe.Training:
    """Train once up to MAX_MERGES; a smaller target is a prefix of the same merges."""
    return bpe.train(corpus, bpe.N_BYTES + MAX_MERGES, pattern)


@per_model
def get_bpe_model(model_name: str) -> tuple[bpe_replay.ByteLevelBPE | None, str, str]:
    """(model, "", "") or (None, reason code, detail) for a tokenizer that cannot be replayed."""
    try:
        return bpe_replay.from_tokenizer(get_model(model_name).tokenizer), "", ""
    except bpe_replay.NotByteLevelBPE as e:
        return None, e.code, e.detail


@derived
def get_replay(model_name: str, text: str) -> bpe_replay.Replay:
    model, _, _ = get_bpe_model(model_name)
    return bpe_replay.replay(text, model)


@per_model
def language_costs(model_name: str) -> pd.DataFrame:
    """Tokens of each built-in paragraph in Italian and in English, with the tokenizer itself."""
    tok = get_model(model_name).tokenizer
    rows = []
    for i, (it, en) in enumerate(zip(paragraphs("it"), paragraphs("en")), start=1):
        rows.append({"n": i, "it_chars": len(it), "en_chars": len(en),
                     "it": len(tok.encode(it, add_special_tokens=False)),
                     "en": len(tok.encode(en, add_special_tokens=False))})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------- what the views are sent


def _hex(data: bytes) -> str:
    return " ".join(f"{b:02X}" for b in data)


def _never(dies: np.ndarray, last: int) -> np.ndarray:
    """`dies` with NEVER written as last + 1: a token alive to the end (and it packs small)."""
    return np.where(dies >= bpe.NEVER, last + 1, dies)


def player_labels() -> dict[str, str]:
    names = {"first": "tokenization.player.first", "prev": "tokenization.player.prev",
             "next": "tokenization.player.next", "last": "tokenization.player.last",
             "play": "tokenization.player.play", "pause": "tokenization.player.pause",
             "speed": "tokenization.player.speed", "step": "tokenization.player.step",
             "chip": "tokenization.chip.title", "window": "tokenization.build.window",
             "table": "chart.as_table", "unavailable": "views.unavailable", "chips": "tokenization.chips"}
    return {k: t(v) for k, v in names.items()}


def link_token() -> str | None:
    """A share link's token, part of the views' data key: a link's values reach a view drawn already."""
    return st.session_state.get(LINK_KEY)


def settings() -> dict:
    """The settings the server knows (a share link's values, or the defaults), with the link's
    token: the view takes a link's values once, over what it kept in the browser."""
    s = st.session_state
    return {"target": s.get("tokenization.target", DEFAULT_TARGET), "view": s.get("tokenization.real.view", "readable"),
            "ids": bool(s.get("tokenization.real.show_ids", True)), "from_link": s.get(LINK_KEY)}


def build_data(training: bpe.Training, key: str, lang: str) -> dict:
    """The training animation: the vocabulary's labels, every merge, the token count and the top
    pairs after each step, and the tokens of the first CHIPS_MAX_BYTES // 3 bytes with their lives."""
    n = training.n_merges
    table = training.vocab()
    window = bpe.chunk_end(training.cut_step, CHIPS_MAX_BYTES // 3)
    starts, ends, born, dies = bpe.lives(training.cut_step, 0, window)
    data = np.frombuffer(training.corpus, dtype=np.uint8)
    merge_ids = np.array([0] + [m.id for m in training.merges], dtype=np.int64)
    ids = np.where(born > 0, merge_ids[born], data[starts] if len(starts) else 0)
    top_len = [len(p) for p in training.top_pairs]
    flat = [(a, b, c) for step in training.top_pairs for (a, b), c in step]
    labels = player_labels() | {k: t(f"tokenization.build.{k}") for k in (
        "target", "target_help", "target_low", "target_high", "exhausted", "step0", "stepk", "vocab_size",
        "tokens", "ratio", "pairs_title", "pairs_x", "curve_title", "curve_x", "curve_y")}
    labels["curve_hover"] = t("tokenization.build.curve_hover")
    labels["pair_col"] = t("tokenization.build.pair_col")
    return {"key": key, "lang": lang, "part": "build", "labels": labels, "settings": settings(),
            "n_bytes": len(training.corpus), "n_merges": n, "min_target": bpe.N_BYTES,
            "max_target": bpe.N_BYTES + MAX_MERGES, "window": window, "colors": CHIP_COLORS,
            "vocab": [show_bytes(table[i]) for i in range(bpe.N_BYTES + n)],
            "hex": [table[i].hex().upper() for i in range(bpe.N_BYTES + n)],
            "merges": pack_ints([x for m in training.merges for x in (*m.pair, m.count)]),
            "n_tokens": pack_ints(training.n_tokens),
            "top": {"len": pack_ints(top_len), "pairs": pack_ints([x for p in flat for x in p])},
            "lives": {"id": pack_ints(ids), "born": pack_ints(born), "dies": pack_ints(_never(dies, n))},
            "separators": t("plot.separators"), "accent": ACCENT, "palette": list(PALETTE), "tick_ms": TICK_MS,
            "speeds": list(SPEEDS), "config": modebar_config("tokenization.build") | {"responsive": True}}


def _kind(tk: bpe_replay.Token, data: bytes, kinds: dict[tuple, int]) -> int:
    """The index of `tk`'s chip among the distinct chips in `kinds` ([id, readable, raw, hex,
    newline], added when new)."""
    b = data[tk.start:tk.end]
    readable = tk.piece if tk.special else show_bytes(b)
    raw = bpe_replay.to_byte_level(b) if tk.id < 0 else tk.piece
    return kinds.setdefault((tk.id, readable, raw, b.hex().upper(), int(b.endswith(b"\n"))), len(kinds))


def real_data(r: bpe_replay.Replay, key: str, lang: str) -> dict:
    """The replay of the model's merges: its steps, the tokens of the first CHIPS_MAX_BYTES bytes
    with their lives, and the count of tokens after each step (of the whole text)."""
    n = r.n_steps
    window = bpe.chunk_end(r.cut_step, CHIPS_MAX_BYTES)
    shown = r.lives(0, window)
    kinds: dict[tuple, int] = {}
    index = [_kind(tk, r.data, kinds) for tk, _, _ in shown]
    # Tokens after each step, in the whole text: +1 where a token is born, -1 where it dies (a byte
    # the vocabulary lacks is dropped, and not counted).
    delta = np.zeros(n + 2, dtype=np.int64)
    for tk, b, d in r.lives():
        if tk.id >= 0:
            delta[b] += 1
            delta[min(d, n + 1)] -= 1
    counts = np.cumsum(delta)[: n + 1]
    labels = player_labels() | {k: t(f"tokenization.real.{k}") for k in ("step0", "stepk", "view", "show_ids",
                                                                          "tokens_now")}
    labels |= {f"view_{v}": t(f"tokenization.real.view.{v}") for v in ("readable", "raw")}
    return {"key": key, "lang": lang, "part": "real", "labels": labels, "settings": settings(),
            "n_bytes": len(r.data), "n_steps": n, "window": window, "colors": CHIP_COLORS,
            "speed": 1 if n <= 60 else 5, "tick_ms": TICK_MS, "speeds": list(SPEEDS),
            "steps": {"rank": pack_ints([s.rank for s in r.steps]), "count": pack_ints([s.count for s in r.steps]),
                      "id": [s.id for s in r.steps], "left": [s.left for s in r.steps],
                      "right": [s.right for s in r.steps], "merged": [s.merged for s in r.steps]},
            "kinds": [list(k) for k in kinds], "tokens_now": pack_ints(counts),
            "lives": {"kind": pack_ints(index), "born": pack_ints([b for _, b, _ in shown]),
                      "dies": pack_ints(_never(np.array([d for _, _, d in shown], dtype=np.int64), n))}}


def pair_data(model_name: str, key: str, lang: str) -> dict:
    """The built-in paragraphs in both languages as the model's final tokens, for the paragraph slider."""
    texts = {x: paragraphs(x) for x in ("it", "en")}
    kinds: dict[tuple, int] = {}
    index: list[int] = []
    pairs = []
    for i in range(min(len(texts["it"]), len(texts["en"]))):
        row = {}
        for x in ("it", "en"):
            r = get_replay(model_name, texts[x][i])
            chips = [_kind(tk, r.data, kinds) for tk in r.tokens()]
            row[x] = {"from": len(index), "chips": len(chips), "n": len(r.ids)}
            index.extend(chips)
        pairs.append(row)
    labels = {"pick": t("tokenization.lang.pick"), "pair_head": t("tokenization.lang.pair_head"),
              "it": t("tokenization.lang.it"), "en": t("tokenization.lang.en"), "chip": t("tokenization.chip.title"),
              "unavailable": t("views.unavailable"), "chips": t("tokenization.chips")}
    return {"key": key, "lang": lang, "part": "pair", "labels": labels, "colors": CHIP_COLORS,
            "kinds": [list(k) for k in kinds], "chips": pack_ints(index), "pairs": pairs}


def token_table(r: bpe_replay.Replay) -> pd.DataFrame:
    """The final tokens: id, the vocabulary's own string (with Ġ), its bytes, readable text."""
    rows = [{t("tokenization.table.pos"): i, t("tokenization.table.id"): x.id,
             t("tokenization.table.piece"): x.piece, t("tokenization.table.bytes"): _hex(r.data[x.start:x.end]),
             t("tokenization.table.text"): x.piece if x.special else show_bytes(r.data[x.start:x.end])}
            for i, x in enumerate(y for y in r.tokens() if y.id >= 0)]
    return pd.DataFrame(rows)
