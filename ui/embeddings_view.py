"""The embeddings lesson's caches, figures and sections (Streamlit and plotly helpers).

Caches are keyed by plain strings and numbers: the model name, a sentence, a token limit. The
embedding table is read from the shared model once per model name and normalized once
(lib.embeddings.build_index); captures of example sentences come from ui.cache.get_capture, so
this module never runs the model, except the final norm module on an already captured residual.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import torch

from lib import embeddings as emb
from lib.embeddings import EmbeddingIndex, WordPieces
from lib.tokens import readable_tokens
from ui.cache import get_capture, get_model
from ui.core import model_name as current_model_name
from ui.core import num, t
from ui.figures import PALETTE, colorscale, quick
from ui.live_chart import live_chart

ROWS_MAX_TOKENS = 32  # rows drawn in the table heatmap
SENTENCE_MAX_TOKENS = 64  # example sentences are short; longer ones are cut, with a notice
MAX_SENTENCES = 8
SCATTER_POINTS = 4000  # tokens drawn in the length scatter (the correlation uses all of them)
SCATTER_SEED = 0
PCA_NEIGHBOURS = 5


# ---------------------------------------------------------------------------- caches


@st.cache_resource(max_entries=2, show_spinner=False)
def index(model_name: str) -> EmbeddingIndex:
    """The input embedding table of `model_name` as numpy, normalized once, shared by every session."""
    loaded = get_model(model_name)
    with loaded.lock, torch.inference_mode():
        table = loaded.adapter.embed(loaded.model).weight.detach().float().cpu().numpy()  # [V, D]
    table.flags.writeable = False  # a read-only view of the model's weights: build_index keeps it, no copy
    return emb.build_index(table)


@st.cache_resource(max_entries=2, show_spinner=False)
def positions(model_name: str) -> np.ndarray | None:
    """GPT-2's learned position table [P, D], None for models without one (RoPE)."""
    loaded = get_model(model_name)
    module = loaded.adapter.position_embedding(loaded.model)
    if module is None:
        return None
    with loaded.lock, torch.inference_mode():
        return module.weight.detach().float().cpu().numpy()


@st.cache_resource(max_entries=2, show_spinner=False)
def norm_stats(model_name: str) -> emb.NormStats:
    return emb.norm_vs_id(index(model_name).norms)


@st.cache_data(max_entries=64, show_spinner=False)
def sentence_vector(model_name: str, text: str, max_tokens: int) -> tuple[np.ndarray, bool]:
    """(mean of the final hidden states [D], was the sentence cut) from the cached capture."""
    cap = get_capture(model_name, text, max_tokens)
    hidden = emb.final_hidden(get_model(model_name), cap.resid[-1])
    return emb.sentence_vector(hidden), cap.truncated


# ---------------------------------------------------------------------------- figures


def _labels_unique(names: list[str]) -> list[str]:
    """Plotly merges equal category labels: number repeated ones."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} ({seen[n]})")
    return out


def rows_figure(rows: np.ndarray, tokens: list[str], labels: dict[str, str]) -> go.Figure:
    """Heatmap of table rows [T, n]: one line per token, one column per dimension."""
    names = _labels_unique([f"{i} {tok}" for i, tok in enumerate(tokens)])
    return quick([dict(type="heatmap", z=rows, x=list(range(rows.shape[1])), y=names, colorscale=colorscale("RdBu"),
                       zmid=0, hovertemplate=labels["hover"] + "<extra></extra>")],
                 dict(xaxis=dict(title=dict(text=labels["x"])), height=max(260, 22 * len(names) + 110),
                      margin=dict(l=10, r=10, t=30, b=10), yaxis=dict(autorange="reversed", type="category")))


def cosine_figure(matrix: np.ndarray, names: list[str], labels: dict[str, str]) -> go.Figure:
    """Labelled heatmap of a cosine matrix, values written in the cells."""
    names = _labels_unique(names)
    text = [[num(float(v), 2) for v in row] for row in matrix]
    fig = go.Figure(go.Heatmap(z=matrix, x=names, y=names, zmin=-1, zmax=1, colorscale="RdBu", zmid=0, text=text,
                               texttemplate="%{text}" if len(names) <= 12 else None,
                               hovertemplate=labels["hover"] + "<extra></extra>"))
    size = max(320, 38 * len(names) + 140)
    fig.update_layout(height=size, margin=dict(l=10, r=10, t=30, b=10), title=labels.get("title"),
                      xaxis=dict(type="category"), yaxis=dict(autorange="reversed", type="category"))
    return fig


def norms_figure(idx: EmbeddingIndex, stats: emb.NormStats, tokens: list[str], sample: np.ndarray,
                 labels: dict[str, str]) -> go.Figure:
    """Scatter of row length against id (a seeded sample), with the mean length per bin of ids."""
    fig = go.Figure(go.Scatter(x=sample, y=idx.norms[sample], mode="markers", name=labels["points"],
                               marker=dict(size=3, color=PALETTE[0], opacity=0.35), text=tokens,
                               hovertemplate=labels["hover"] + "<extra></extra>"))
    centres = (stats.bins[:-1] + stats.bins[1:]) / 2
    fig.add_trace(go.Scatter(x=centres, y=stats.bin_means, mode="lines+markers", name=labels["means"],
                             line=dict(color=PALETTE[1], width=3)))
    fig.update_layout(xaxis_title=labels["x"], yaxis_title=labels["y"], height=380,
                      margin=dict(l=10, r=10, t=30, b=10), legend=dict(orientation="h", y=1.08))
    return fig


def pca_figure(proj: emb.Projection, names: list[str], is_word: list[bool], labels: dict[str, str]) -> go.Figure:
    """The 2-D projection: typed words in colour and labelled, neighbours small and grey."""
    fig = go.Figure()
    for kind, colour, size in ((True, PALETTE[0], 12), (False, "#9a9a9a", 7)):
        sel = [i for i, w in enumerate(is_word) if w == kind]
        if not sel:
            continue
        fig.add_trace(go.Scatter(x=proj.coords[sel, 0], y=proj.coords[sel, 1],
                                 mode="markers+text" if kind else "markers", text=[names[i] for i in sel],
                                 textposition="top center", name=labels["words" if kind else "neighbours"],
                                 marker=dict(size=size, color=colour), hovertemplate="%{text}<extra></extra>"))
    fig.update_layout(xaxis_title=labels["x"], yaxis_title=labels["y"], height=460, margin=dict(l=10, r=10, t=30, b=10),
                      legend=dict(orientation="h", y=1.08))
    return fig


def depth_figure(cos: np.ndarray, depth: int, labels: dict[str, str]) -> go.Figure:
    """Cosine of the same word in two sentences at every depth; the chosen depth is marked."""
    return quick([dict(type="scatter", x=list(range(len(cos))), y=cos, mode="lines+markers", line=dict(color=PALETTE[0]),
                       hovertemplate=labels["hover"] + "<extra></extra>"),
                  dict(type="scatter", x=[depth], y=[float(cos[depth])], mode="markers",
                       marker=dict(size=16, color=PALETTE[1]), hoverinfo="skip")],
                 dict(xaxis=dict(title=dict(text=labels["x"])), height=320, showlegend=False,
                      margin=dict(l=10, r=10, t=30, b=10),
                      yaxis=dict(title=dict(text=labels["y"]), range=depth_range(cos))))


def depth_range(cos: np.ndarray) -> list[float]:
    """The depth curve's y range: zoomed to the data, so a fall from 1 to 0.94 is seen as a fall
    (on a 0-1 axis the line looks flat), with a tenth of the fall as margin.

    Example: depth_range(np.array([1.0, 0.96, 0.94])) -> [0.934, 1.006]
    """
    low, high = float(np.nanmin(cos)), max(1.0, float(np.nanmax(cos)))
    pad = max(0.005, 0.1 * (high - low))
    return [round(low - pad, 4), round(high + pad, 4)]


# ---------------------------------------------------------------------------- sections


def table_rows(idx: EmbeddingIndex, cap, pos_table: np.ndarray | None, n_dims: int) -> None:
    """The learner's tokens' rows, and the proof that they are what enters the first block."""
    n = min(cap.n_tokens, ROWS_MAX_TOKENS)
    if cap.n_tokens > n:
        st.caption(t("embeddings.rows.cut", n=num(n), total=num(cap.n_tokens)))
    rows = idx.table[cap.token_ids[:n], :n_dims]  # [n, n_dims]
    labels = {"x": t("embeddings.rows.x"), "hover": t("embeddings.rows.hover")}
    live_chart(rows_figure(rows, list(cap.tokens[:n]), labels), key="embeddings.rows_chart")
    scale = emb.embed_scale(get_model(current_model_name()))  # the session's model (cap.model_name is the model's own name)
    diff = emb.lookup_check(idx.table, cap.token_ids, cap.embeddings, pos_table, scale)
    if scale != 1.0:  # Gemma: the rows are multiplied by √d_model before the first block
        st.info(t("gemma.embeddings.scale", scale=num(scale, 4), d=num(idx.table.shape[1])))
    key = "embeddings.rows.same_learned" if pos_table is not None else "embeddings.rows.same_rope"
    (st.success if diff < 1e-4 else st.warning)(t(key, diff=num(diff, 6), scale=num(scale, 4)))


@st.cache_resource(max_entries=2, show_spinner=False)
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


@st.cache_data(max_entries=64, show_spinner=False)
def _neighbours(model_name: str, ids: tuple[int, ...], k: int,
                metric: str) -> tuple[list[int], list[str], list[float], list[float]]:
    """Top-k over the whole table for the mean of these rows; cached, so other widgets' reruns are free."""
    idx = index(model_name)
    nb = emb.nearest(idx, emb.word_vector(idx.table, ids), k, metric)
    tokens = readable_tokens(get_model(model_name).tokenizer, nb.ids.tolist())
    return nb.ids.tolist(), tokens, nb.cosine.tolist(), nb.distance.tolist()


def neighbours_table(model_name: str, query: WordPieces, k: int, metric: str) -> pd.DataFrame:
    ids, tokens, cos, dist = _neighbours(model_name, query.ids, k, metric)
    return pd.DataFrame({t("embeddings.col.rank"): range(1, len(ids) + 1), t("embeddings.col.token"): tokens,
                         t("embeddings.col.id"): ids, t("embeddings.col.cosine"): [num(c, 3) for c in cos],
                         t("embeddings.col.distance"): [num(d, 3) for d in dist]})


@st.cache_data(max_entries=32, show_spinner=False)
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


def projection(model_name: str, pieces: list[WordPieces], add_neighbours: bool) -> None:
    """PCA of the typed words, optionally with each word's nearest tokens around it."""
    proj, names, is_word = _projection(model_name, tuple((p.word, p.ids) for p in pieces), add_neighbours)
    labels = {"x": t("embeddings.pca.x", share=num(100 * proj.explained[0], 1)),
              "y": t("embeddings.pca.y", share=num(100 * proj.explained[1], 1)),
              "words": t("embeddings.pca.words"), "neighbours": t("embeddings.pca.neighbours")}
    live_chart(pca_figure(proj, names, is_word, labels), key="embeddings.pca_chart")
    st.caption(t("embeddings.pca.caption", share=num(100 * proj.explained.sum(), 1)))


def context(model_name: str, n_layers: int, word: str, sentences: list[str], depth: int, learned: bool) -> None:
    """The same word in two sentences, depth by depth, from cached captures."""
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
    cos = emb.cosine_by_depth(*vecs)
    pieces = [" · ".join(c.tokens[i] for i in f) for c, f in zip(caps, found)]
    st.caption(t("embeddings.context.pieces", a=pieces[0], b=pieces[1]))
    cols = st.columns(3)
    cols[0].metric(t("embeddings.context.cos_ab", depth=num(depth)), num(cos[depth], 3),
                   delta=num(cos[depth] - cos[0], 3), delta_color="off")
    for i, col in enumerate(cols[1:]):
        col.metric(t("embeddings.context.cos_input", which="AB"[i], depth=num(depth)),
                   num(emb.cosine(vecs[i][depth], vecs[i][0]), 3))
    labels = {"x": t("embeddings.context.x", n=num(n_layers)), "y": t("embeddings.context.y"),
              "hover": t("embeddings.context.hover")}
    live_chart(depth_figure(cos, depth, labels), key="embeddings.depth_chart")
    st.caption(t("embeddings.context.depth0_learned" if learned else "embeddings.context.depth0_rope"))


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
    live_chart(cosine_figure(matrix, names, labels), key="embeddings.sentences_chart")
