"""The attention lesson's cached computations, and the data its browser views are sent: the chosen
layer's heads for attention.js; every head's steps, weights without the mask and flash scores, and
the scaling demo's results, for attention_steps.js; the plotly JSON of its charts.

Cached helpers are keyed by plain strings and numbers and read the capture from ui.shell.cache:
changing a layer, a head or a block size never re-runs the model.
"""

from __future__ import annotations

import numpy as np

from lib.lessons import attention as att
from lib.lessons.bertviz_view import head_view_html, model_view_html
from lib.lessons.reference import REFERENCE_MODELS
from lib.model.capture import Capture
from lib.serving.payload import pack_f32, pack_u16
from ui.lessons.attention.figures import (block_options, cost_figure, default_block, gqa_figure, mask_figure,
                                          memory_figure, overview_figure)
from ui.shell import core
from ui.shell.cache import derived, get_capture, get_model
from ui.shell.core import num, t


HEATMAP_MAX_TOKENS = 64  # a [T, T] heatmap with more rows has unreadable token labels


STEP_TOKENS = 6  # the formula's matrices on screen: the first tokens...
STEP_DIMS = 4  # ...and the first dimensions of Q, K, V


KV_TOKENS = 8192
FAR_TOKENS = 100_000  # where the naive n x n matrix becomes a wall


D_HEADS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def _cap(model_name: str, text: str, max_tokens: int) -> Capture:
    return get_capture(model_name, text, max_tokens)


@derived
def patterns(model_name: str, text: str, max_tokens: int) -> dict[str, np.ndarray]:
    """Pattern scores [L, H] of every head, plus the normalised entropy, for one capture."""
    cap = _cap(model_name, text, max_tokens)
    out = att.pattern_scores(cap.attn, cap.token_ids, att.word_ids(cap.text, cap.offsets))
    return out


@derived
def layer_output(model_name: str, text: str, max_tokens: int, layer: int) -> att.LayerOutput:
    return att.layer_output(get_model(model_name), _cap(model_name, text, max_tokens), layer)


@derived
def _head_weights(model_name: str, text: str, max_tokens: int, layer: int, head: int) -> np.ndarray:
    return _cap(model_name, text, max_tokens).attention(layer, head)


def head_weights(cap: Capture, layer: int, head: int) -> np.ndarray:
    """[T, T] the model's own weights of one head (`cap.attention`, recomputed with the model's
    operations), kept per head: the heatmap, the pattern table and the check read it on every
    move of a slider. At most 32 heads (32 MB at 512 tokens)."""
    return _head_weights(core.model_name(), cap.text, core.cut(cap), layer, head)


@derived
def first_tokens_attention(model_name: str, text: str, max_tokens: int, n: int) -> np.ndarray:
    """[L, H, n, n] every head's weights among the first n tokens (causal: the same as in the
    whole text). Small, and kept: the overview and bertviz redraw from it without recomputing
    all the layers' attention (cap.attn) at each move of a slider."""
    cap = _cap(model_name, text, max_tokens)
    return np.stack([cap.attn_layer(layer, upto=n) for layer in range(cap.n_layers)])


@derived
def bertviz(model_name: str, text: str, max_tokens: int, kind: str, layers: tuple[int, ...], n: int):
    cap = _cap(model_name, text, max_tokens)
    attn, tokens = first_tokens_attention(model_name, text, max_tokens, n), list(cap.tokens[:n])
    if kind == "head":
        return head_view_html(attn, tokens, layers=list(layers))
    return model_view_html(attn, tokens, layers=list(layers))


@derived
def scaling(d_head: int, seed: int) -> att.ScalingDemo:
    return att.scaling_demo(d_head, seed=seed)


@derived
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


@derived
def layer_heads(model_name: str, text: str, max_tokens: int, layer: int, lang: str) -> dict:
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


FLASH_TOKENS = HEATMAP_MAX_TOKENS  # flash attention walks the first tokens (causal: the same rows as the whole text)


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
    heads = range(cap.n_heads)
    q, k, v = (np.stack([get(layer, h)[:n] for h in heads]) for get in (cap.query, cap.key, cap.value))
    naive = [att.head_steps(q[h], k[h], v[h], scale=scale, window=window) for h in heads]
    scores = [x.scaled[lower] for x in naive]
    naive_out = np.stack([x.out for x in naive])
    diffs = {}
    for b in block_options(n):  # every head's tiles at once (one run per head took 9 times as long)
        run = att.flash_attention(q, k, v, b, b, scale=scale, window=window, record=False)
        diffs[b] = [f"{x:.1e}" for x in np.abs(run.out - naive_out).max(axis=(-2, -1)).tolist()]
    d_head = cap.q.shape[-1]
    options = []
    for b in block_options(n):
        naive_bytes, tiled_bytes = att.attention_memory(n, d_head, min(b, n), min(b, n))
        far_naive, far_tiled = att.attention_memory(FAR_TOKENS, d_head, b, b)
        options.append({"block": b, "naive": naive_bytes, "tiled": tiled_bytes, "far_naive": far_naive,
                        "far_tiled": far_tiled, "diff": diffs[b]})
    return {"n": n, "window": window, "scores": pack_f32(np.concatenate(scores)), "options": options,
            "default": default_block(n)}


@derived
def layer_steps(model_name: str, text: str, max_tokens: int, layer: int, lang: str) -> dict:
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


@derived
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


@derived
def gqa_spec(n_heads: int, n_kv_heads: int, lang: str) -> dict:
    labels = {"q": t("attention.gqa.q"), "kv": t("attention.gqa.kv"),
              "title": t("attention.gqa.title", h=num(n_heads), kv=num(n_kv_heads))}
    return gqa_figure(n_heads, n_kv_heads, labels).to_dict()


@derived
def kv_shared(model_name: str, text: str, max_tokens: int, n_heads: int, n_kv_heads: int) -> bool:
    """Whether every query head of a group reads the very same keys and values, in every layer."""
    cap = _cap(model_name, text, max_tokens)
    return all(np.array_equal(cap.key(layer, h), cap.key(layer, g[0])) and
               np.array_equal(cap.value(layer, h), cap.value(layer, g[0]))
               for layer in range(cap.n_layers) for g in att.gqa_groups(n_heads, n_kv_heads) for h in g)


@derived
def mask_spec(lang: str) -> dict:
    labels = {"causal": t("attention.mask.causal"), "none": t("attention.mask.none"), "cross": t("attention.mask.cross"),
              "x": t("attention.axis.key"), "x_cross": t("attention.mask.x_cross"), "y": t("attention.axis.query")}
    return mask_figure(6, labels).to_dict()


SCALING_BINS = 60  # the histogram's bins, per series


def _histogram(x: np.ndarray) -> dict:
    counts, edges = np.histogram(x, bins=SCALING_BINS)
    return {"counts": counts.tolist(), "lo": float(edges[0]), "width": float(edges[1] - edges[0])}


@derived
def scaling_options(d_head: int) -> list[dict]:
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


COST_TOKENS = np.unique(np.geomspace(16, 131072, 60).astype(int))  # the cost curves' x: 16 to 128k tokens


@derived
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


@derived
def memory_spec(d_head: int, lang: str) -> dict:
    """The attention matrix's memory against a tiled run's, by text length."""
    x = COST_TOKENS
    mem = [att.attention_memory(int(n), d_head, 64, 64) for n in x]
    return memory_figure(x, np.array([m[0] for m in mem]), np.array([m[1] for m in mem]),
                         {"x": t("attention.cost.x"), "y": t("attention.memory.y"), "title": t("attention.memory.title"),
                          "naive": t("attention.memory.naive"), "tiled": t("attention.memory.tiled")}).to_dict()


def proj_name(loaded, layer: int) -> str:
    """The output projection's name inside its block ("self_attn.o_proj", GPT-2's "attn.c_proj")."""
    block = loaded.adapter.blocks(loaded.model)[layer]
    target = loaded.adapter.o_proj(block)
    return next((n for n, m in block.named_modules() if m is target), "o_proj")
