"""The embeddings lesson's caches, sections and browser view data; its figures are drawn by
ui.lessons.embeddings.figures.

Caches are keyed by plain strings and numbers: the model name, a sentence, a token limit. The
embedding table is read from the shared model once per model name and normalized once
(lib.lessons.embeddings.build_index); captures of example sentences come from ui.shell.cache.get_capture, so
this module never runs the model, except the final norm module on an already captured residual.

The view-only widgets are answered in the browser (static/views/embeddings.js), from data sent once
per (model, text or words, language): the rows at the most dimensions the slider offers, the 30
nearest tokens by both measures, the projection with and without the neighbours, the word's
cosines at every depth. The text inputs (the query, the words, the word and its two sentences) need
the server: tokenizing, searching the table, capturing the sentences.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st
import torch

from lib.lessons import embeddings as emb
from lib.lessons.embeddings import EmbeddingIndex, WordPieces
from lib.model.tokens import readable_tokens
from lib.serving.payload import pack_u16
from ui.lessons.embeddings.figures import cosine_figure, norms_figure, unique_labels
from ui.shell.cache import derived, get_capture, get_model, per_model
from ui.shell.core import lang as core_lang, model_name as current_model_name, num, t
from ui.views import browser
from ui.views.export import modebar_config
from ui.views.figures import PALETTE, colorscale
from ui.views.live_chart import live_chart

ROWS_MAX_TOKENS = 32  # rows drawn in the table heatmap
SENTENCE_MAX_TOKENS = 64  # example sentences are short; longer ones are cut, with a notice
MAX_SENTENCES = 8
SCATTER_POINTS = 4000  # tokens drawn in the length scatter (the correlation uses all of them)
SCATTER_SEED = 0
PCA_NEIGHBOURS = 5
K_MIN, K_MAX, K_DEFAULT = 3, 30, 10  # the neighbours' slider
DIMS_MIN, DIMS_MAX, DIMS_DEFAULT = 4, 128, 32  # the rows' slider (at most the model's width)
METRICS = ("cosine", "euclidean")
LINK_KEY = "embeddings.link_settings"  # a share link's token: the views take its values once
SETTINGS = ("dims", "k", "metric", "pca_add", "depth")  # what the views hold (ui/learner/share.py's IN_BROWSER)


# ---------------------------------------------------------------------------- caches


@per_model
def index(model_name: str) -> EmbeddingIndex:
    """The input embedding table of `model_name` as numpy, normalized once, shared by every session."""
    loaded = get_model(model_name)
    with loaded.lock, torch.inference_mode():
        table = loaded.adapter.embed(loaded.model).weight.detach().float().cpu().numpy()  # [V, D]
    table.flags.writeable = False  # a read-only view of the model's weights: build_index keeps it, no copy
    return emb.build_index(table)


@per_model
def norm_stats(model_name: str) -> emb.NormStats:
    return emb.norm_vs_id(index(model_name).norms)


@derived
def sentence_vector(model_name: str, text: str, max_tokens: int) -> tuple[np.ndarray, bool]:
    """(mean of the final hidden states [D], was the sentence cut) from the cached capture."""
    cap = get_capture(model_name, text, max_tokens)
    hidden = emb.final_hidden(get_model(model_name), cap.resid[-1])
    return emb.sentence_vector(hidden), cap.truncated


# ---------------------------------------------------------------------------- the depth curve's range


def depth_range(cos: np.ndarray) -> list[float]:
    """The depth curve's y range: zoomed to the data, so a fall from 1 to 0.94 is seen as a fall
    (on a 0-1 axis the line looks flat), with a tenth of the fall as margin.

    Example: depth_range(np.array([1.0, 0.96, 0.94])) -> [0.934, 1.006]
    """
    low, high = float(np.nanmin(cos)), max(1.0, float(np.nanmax(cos)))
    pad = max(0.005, 0.1 * (high - low))
    return [round(low - pad, 4), round(high + pad, 4)]


# ---------------------------------------------------------------------------- sections


def table_rows(idx: EmbeddingIndex, cap, pos_table: np.ndarray | None, n_layers: int) -> None:
    """The learner's tokens' rows (a browser view: the dimensions slider is answered there), and
    the proof that they are what enters the first block."""
    n = min(cap.n_tokens, ROWS_MAX_TOKENS)
    if cap.n_tokens > n:
        st.caption(t("embeddings.rows.cut", n=num(n), total=num(cap.n_tokens)))
    browser.view("embeddings", "embeddings.view", rows_data(idx, cap, n_layers))
    scale = emb.embed_scale(get_model(current_model_name()))  # the session's model (cap.model_name is the model's own name)
    diff = emb.lookup_check(idx.table, cap.token_ids, cap.embeddings, pos_table, scale)
    if scale != 1.0:  # Gemma: the rows are multiplied by √d_model before the first block
        st.info(t("gemma.embeddings.scale", scale=num(scale, 4), d=num(idx.table.shape[1])))
    key = "embeddings.rows.same_learned" if pos_table is not None else "embeddings.rows.same_rope"
    (st.success if diff < 1e-4 else st.warning)(t(key, diff=num(diff, 6), scale=num(scale, 4)))


@per_model
def sample_tokens(model_name: str, n_vocab: int) -> list[str]:
    """Readable tokens of the scatter's seeded sample (the same ids on every rerun)."""
    sample = emb.sample_ids(n_vocab, SCATTER_POINTS, seed=SCATTER_SEED)
    return readable_tokens(get_model(model_name).tokenizer, sample.tolist())


def norms(model_name: str, idx: EmbeddingIndex, stats: emb.NormStats) -> None:
    """Row length against token id (a seeded sample of points, the correlation over all rows)."""
    sample = emb.sample_ids(idx.shape[0], SCATTER_POINTS, seed=SCATTER_SEED)
    labels = {"x": t("embeddings.norms.x"), "y": t("embeddings.norms.y"), "hover": t("embeddings.norms.hover"),
              "points": t("embeddings.norms.points", n=num(len(sample))), "means": t("embeddings.norms.means")}
    fig = norms_figure(idx, stats, sample_tokens(model_name, idx.shape[0]), sample, labels)
    live_chart(fig, key="embeddings.norms_chart")
    trend = "up" if stats.spearman > 0.1 else "down" if stats.spearman < -0.1 else "flat"
    st.info(t(f"embeddings.norms.trend_{trend}", spearman=num(stats.spearman, 2), pearson=num(stats.pearson, 2)))


def words(tokenizer, raw: str) -> list[WordPieces]:
    """Parse the typed list and tokenize each word, with a clear message for every problem."""
    wl = emb.parse_words(raw)
    if wl.cut_words:
        st.warning(t("embeddings.words.cut", n=num(len(wl.words)), total=num(wl.n_typed)))
    if wl.cut_chars:
        st.warning(t("embeddings.words.long", n=num(emb.MAX_WORD_CHARS)))
    pieces = [emb.word_pieces(tokenizer, w) for w in wl.words]
    for p in pieces:
        if not p.ids or p.unknown:
            st.warning(t("embeddings.words.unknown", word=p.word))
    pieces = [p for p in pieces if p.ids and not p.unknown]
    if not pieces:
        st.info(t("embeddings.words.empty"))
    elif len(pieces) == 1:
        st.info(t("embeddings.words.one"))
    many = [p.word for p in pieces if p.n_pieces >= emb.MANY_PIECES]
    if many:
        st.warning(t("embeddings.words.many", words=", ".join(many), n=num(emb.MANY_PIECES)))
    if any(p.raw_bytes for p in pieces):
        st.info(t("embeddings.words.bytes"))
    return pieces


def pieces_table(pieces: list[WordPieces]) -> pd.DataFrame:
    return pd.DataFrame({t("embeddings.col.word"): [p.word for p in pieces],
                         t("embeddings.col.pieces"): [" · ".join(p.pieces) for p in pieces],
                         t("embeddings.col.n"): [p.n_pieces for p in pieces]})


def word_matrix(idx: EmbeddingIndex, pieces: list[WordPieces]) -> np.ndarray:
    return np.stack([emb.word_vector(idx.table, p.ids) for p in pieces])  # [N, D]


@derived
def _neighbours(model_name: str, ids: tuple[int, ...], k: int,
                metric: str) -> tuple[list[int], list[str], list[float], list[float]]:
    """Top-k over the whole table for the mean of these rows; cached, so other widgets' reruns are free."""
    idx = index(model_name)
    nb = emb.nearest(idx, emb.word_vector(idx.table, ids), k, metric)
    tokens = readable_tokens(get_model(model_name).tokenizer, nb.ids.tolist())
    return nb.ids.tolist(), tokens, nb.cosine.tolist(), nb.distance.tolist()


def neighbours(model_name: str, query: WordPieces, d_model: int, n_layers: int) -> None:
    """The nearest tokens to a query: a browser view, sent the K_MAX nearest by both measures once."""
    browser.view("embeddings", "embeddings.neighbours_view", neighbours_data(model_name, query, d_model, n_layers))


@derived
def _projection(model_name: str, words: tuple[tuple[str, tuple[int, ...]], ...], add_neighbours: bool):
    """PCA of the words (name, piece ids), with each word's nearest tokens if asked; cached."""
    idx = index(model_name)
    vectors = [emb.word_vector(idx.table, ids) for _, ids in words]
    names, is_word = [w for w, _ in words], [True] * len(words)
    if add_neighbours:
        taken = {i for _, ids in words for i in ids}
        for _, ids in words:
            for i in emb.nearest(idx, emb.word_vector(idx.table, ids), PCA_NEIGHBOURS + 1).ids.tolist():
                if i not in taken:
                    taken.add(i)
                    vectors.append(idx.table[i])
                    names.append(readable_tokens(get_model(model_name).tokenizer, [i])[0])
                    is_word.append(False)
    return emb.pca_2d(np.stack(vectors)), names, is_word


def projection(model_name: str, pieces: list[WordPieces], d_model: int, n_layers: int) -> None:
    """PCA of the typed words, with and without each word's nearest tokens: a browser view, whose
    switch picks one of the two projections sent."""
    browser.view("embeddings", "embeddings.pca_view", pca_data(model_name, pieces, d_model, n_layers))


def context(model_name: str, n_layers: int, d_model: int, word: str, sentences: list[str], learned: bool) -> None:
    """The same word in two sentences, depth by depth, from cached captures: a browser view, sent
    every depth's cosines once (its depth slider is answered there)."""
    if not word.strip() or not all(s.strip() for s in sentences):
        st.info(t("embeddings.context.missing"))
        return
    caps = [get_capture(model_name, s, SENTENCE_MAX_TOKENS) for s in sentences]
    if any(c.truncated for c in caps):
        st.warning(t("embeddings.sentences.cut", n=num(SENTENCE_MAX_TOKENS)))
    found = [emb.find_word(c.text, c.offsets, word) for c in caps]
    for s, f in zip(sentences, found):
        if not f:
            st.warning(t("embeddings.context.not_found", word=word.strip(), sentence=s))
    if not all(found):
        return
    vecs = [emb.in_context(c.resid, f) for c, f in zip(caps, found)]  # 2 x [L+1, D]
    pieces = [" · ".join(c.tokens[i] for i in f) for c, f in zip(caps, found)]
    st.caption(t("embeddings.context.pieces", a=pieces[0], b=pieces[1]))
    key = browser.data_key("depth", model_name, word, tuple(sentences), core_lang(), link_token())
    browser.view("embeddings", "embeddings.depth_view", depth_data(vecs, key, d_model, n_layers))
    st.caption(t("embeddings.context.depth0_learned" if learned else "embeddings.context.depth0_rope"))


# ---------------------------------------------------------------------------- what the browser views are sent


def link_token() -> str | None:
    return st.session_state.get(LINK_KEY)


def _whole(value, lo: int, hi: int, default: int) -> int:
    """A remembered whole number brought into lo..hi (the model may have changed since it was set)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return min(max(value, lo), hi)


def settings(d_model: int, n_layers: int) -> dict:
    """The views' settings the server knows (a share link's, checked by ui/learner/share.py, or the
    defaults), in range for the model loaded now, with the link's token: the views take a link's
    values once, then keep the learner's own in the browser."""
    s = st.session_state
    dims_hi = min(d_model, DIMS_MAX)
    metric = s.get("embeddings.metric")
    pca_add = s.get("embeddings.pca_add")
    return {"dims": _whole(s.get("embeddings.dims"), DIMS_MIN, dims_hi, min(DIMS_DEFAULT, dims_hi)),
            "k": _whole(s.get("embeddings.k"), K_MIN, K_MAX, K_DEFAULT),
            "metric": metric if metric in METRICS else METRICS[0],
            "pca_add": pca_add if isinstance(pca_add, bool) else True,
            "depth": _whole(s.get("embeddings.depth"), 0, n_layers, n_layers), "from_link": link_token()}


def _common(part: str, key: str, chart_key: str, labels: dict, d_model: int, n_layers: int) -> dict:
    return {"key": key, "part": part, "lang": core_lang(), "labels": labels | {
        "table": t("chart.as_table"), "unavailable": t("views.unavailable")},
        "settings": settings(d_model, n_layers), "separators": t("plot.separators"), "palette": list(PALETTE),
        "config": modebar_config(chart_key) | {"responsive": True}}


def rows_data(idx: EmbeddingIndex, cap, n_layers: int) -> dict:
    """The first ROWS_MAX_TOKENS tokens' rows at the most dimensions the slider offers (packed):
    the view shows the first `dims` columns of them."""
    n = min(cap.n_tokens, ROWS_MAX_TOKENS)
    d_model = idx.shape[1]
    n_dims = min(d_model, DIMS_MAX)
    rows = idx.table[cap.token_ids[:n], :n_dims]  # [n, n_dims]
    key = browser.data_key("rows", current_model_name(), cap.token_ids[:n].tobytes(), core_lang(), link_token())
    labels = {"dims": t("embeddings.rows.dims"), "x": t("embeddings.rows.x"), "hover": t("embeddings.rows.hover"),
              "name": t("chart.embeddings.rows_chart"), "token": t("embeddings.col.token")}
    return _common("rows", key, "embeddings.rows_chart", labels, d_model, n_layers) | {
        "names": unique_labels([f"{i} {tok}" for i, tok in enumerate(cap.tokens[:n])]), "n_dims": n_dims,
        "dims_min": DIMS_MIN, "rows": pack_u16(rows), "colorscale": colorscale("RdBu")}


def neighbours_data(model_name: str, query: WordPieces, d_model: int, n_layers: int) -> dict:
    """The K_MAX nearest tokens by each measure (lib.lessons.embeddings.nearest, best first): the view
    shows the first k of the chosen measure's list, which is nearest(k) itself (ties go to the
    smaller id, so a shorter list is a prefix of a longer one)."""
    sent = {}
    for metric in METRICS:
        ids, tokens, cos, dist = _neighbours(model_name, query.ids, K_MAX, metric)
        sent[metric] = {"ids": ids, "tokens": tokens, "cosine": cos, "distance": dist}
    key = browser.data_key("neighbours", model_name, query.ids, core_lang(), link_token())
    labels = {"k": t("embeddings.neighbours.k"), "metric": t("embeddings.neighbours.metric"),
              "metrics": {m: t(f"embeddings.metric.{m}") for m in METRICS}, "rank": t("embeddings.col.rank"),
              "token": t("embeddings.col.token"), "id": t("embeddings.col.id"), "cosine": t("embeddings.col.cosine"),
              "distance": t("embeddings.col.distance"), "caption": t("embeddings.neighbours.header")}
    return _common("neighbours", key, "embeddings.neighbours", labels, d_model, n_layers) | {
        "k_min": K_MIN, "k_max": K_MAX, "neighbours": sent}


def pca_data(model_name: str, pieces: list[WordPieces], d_model: int, n_layers: int) -> dict:
    """Both projections of the typed words: alone, and with each word's PCA_NEIGHBOURS nearest tokens."""
    words = tuple((p.word, p.ids) for p in pieces)
    both = {}
    for name, add in (("alone", False), ("with", True)):
        proj, names, is_word = _projection(model_name, words, add)
        both[name] = {"x": proj.coords[:, 0].tolist(), "y": proj.coords[:, 1].tolist(), "names": list(names),
                      "is_word": list(is_word), "explained": proj.explained.tolist()}
    key = browser.data_key("pca", model_name, words, core_lang(), link_token())
    labels = {"add": t("embeddings.pca.add", n=num(PCA_NEIGHBOURS)), "x": t("embeddings.pca.x"),
              "y": t("embeddings.pca.y"), "words": t("embeddings.pca.words"),
              "neighbours": t("embeddings.pca.neighbours"), "caption": t("embeddings.pca.caption"),
              "name": t("chart.embeddings.pca_chart"), "point": t("embeddings.pca.col.point"),
              "kind": t("embeddings.pca.col.kind"), "first": t("embeddings.pca.col.first"),
              "second": t("embeddings.pca.col.second")}
    return _common("pca", key, "embeddings.pca_chart", labels, d_model, n_layers) | {"projections": both}


def depth_data(vecs: list[np.ndarray], key: str, d_model: int, n_layers: int) -> dict:
    """The word's cosine between the two sentences at every depth (lib.lessons.embeddings.cosine_by_depth),
    and each sentence's vector against its own input row, at every depth; the chart's y range."""
    cos = emb.cosine_by_depth(*vecs)  # [L+1]
    own = [[emb.cosine(v[depth], v[0]) for depth in range(len(cos))] for v in vecs]  # 2 x [L+1]
    labels = {"depth": t("embeddings.context.depth"), "cos_ab": t("embeddings.context.cos_ab"),
              "cos_input": t("embeddings.context.cos_input"), "delta": t("embeddings.context.delta"),
              "x": t("embeddings.context.x", n=num(n_layers)), "y": t("embeddings.context.y"),
              "hover": t("embeddings.context.hover"), "name": t("chart.embeddings.depth_chart"),
              "col_depth": t("embeddings.context.col.depth"), "col_ab": t("embeddings.context.col.ab"),
              "col_a": t("embeddings.context.col.a"), "col_b": t("embeddings.context.col.b")}
    return _common("depth", key, "embeddings.depth_chart", labels, d_model, n_layers) | {
        "n_layers": n_layers, "cos": cos.tolist(), "own": own, "range": depth_range(cos)}


def sentences(model_name: str, raw: str) -> None:
    """Mean of the final hidden states of each sentence, compared by cosine."""
    lines = list(dict.fromkeys(" ".join(x.split()) for x in (raw or "").splitlines() if x.strip()))
    if len(lines) > MAX_SENTENCES:
        st.warning(t("embeddings.sentences.too_many", n=num(MAX_SENTENCES), total=num(len(lines))))
        lines = lines[:MAX_SENTENCES]
    if len(lines) < 2:
        st.info(t("embeddings.sentences.need_two"))
        return
    results = [sentence_vector(model_name, s, SENTENCE_MAX_TOKENS) for s in lines]
    if any(cut for _, cut in results):
        st.warning(t("embeddings.sentences.cut", n=num(SENTENCE_MAX_TOKENS)))
    matrix = emb.cosine_matrix(np.stack([v for v, _ in results]))
    names = [f"{i + 1}. {s[:22]}{'…' if len(s) > 22 else ''}" for i, s in enumerate(lines)]  # fits a phone
    labels = {"hover": t("embeddings.cosine.hover")}
    live_chart(cosine_figure(matrix, names, labels, num), key="embeddings.sentences_chart")
