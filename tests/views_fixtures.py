"""The shared fixtures that hold the browser views' maths to lib's (tests/js, tests/test_views.py).

`build()` computes every expected value with lib; `python -m tests.views_fixtures` writes them to
tests/fixtures/views/, where node's test runner reads them (tests/js/*.test.js) and checks the
JavaScript, and tests/test_views.py checks that the files still say what lib computes today.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from lib.course.quiz import format_number
from lib.lessons import bpe, rope
from lib.lessons.sampling import draw_at, filter_steps, seed_uniform
from lib.serving.payload import pack_ints, pack_u16, unpack_u16

FOLDER = Path(__file__).resolve().parent / "fixtures" / "views"


def _logits(rng: np.random.Generator, n: int, ties: bool) -> np.ndarray:
    x = rng.normal(0, 3, n)
    if ties:
        x = np.round(x)  # whole numbers: many ties, where the rules on ties matter
    return np.sort(x)[::-1]  # the view's order: best first


def sampling() -> dict:
    rng = np.random.default_rng(20261206)
    cases = []
    for n, ties in ((7, False), (50, True), (120, False), (200, True)):
        x = _logits(rng, n, ties)
        for temperature, top_k, top_p in ((1.0, 0, 1.0), (0.0, 50, 0.9), (0.5, 3, 1.0), (1.0, 50, 0.9),
                                          (2.0, 0, 0.3), (1.3, 10, 0.0), (0.7, 1, 0.5), (1.0, 5000, 0.95)):
            s = filter_steps(x, temperature, top_k, top_p)
            cases.append({"logits": x.tolist(), "temperature": temperature, "top_k": top_k, "top_p": top_p,
                          "greedy": s.greedy, "model": s.model.tolist(), "final": s.final.tolist(),
                          "cumulative": s.cumulative.tolist(), "kept_k": int(s.kept_top_k.sum()),
                          "kept_p": s.n_kept})
    seeds = [0, 1, 2, 7, 123, 98765, 2**31, 2**32 - 1]
    draws = []
    for probs in (np.array([0.2, 0.5, 0.3]), np.array([0.0, 1.0, 0.0]), np.array([0.25, 0.25, 0.5, 0.0]),
                  np.sort(rng.dirichlet(np.ones(40)))[::-1]):
        for u in (0.0, 0.1, 0.25, 0.5, 0.6, 0.75, 0.999999, seed_uniform(123)):
            draws.append({"probs": probs.tolist(), "u": u, "token": draw_at(probs, u).token})
    return {"filters": cases, "seeds": [{"seed": s, "u": seed_uniform(s)} for s in seeds], "draws": draws}


def common() -> dict:
    rng = np.random.default_rng(7)
    packs = []
    for values in ([0.0, 1.0, 2.0], [5.5], rng.normal(0, 10, 500).tolist(), [-3.25, -3.25, 40.0]):
        packed = pack_u16(values)
        packs.append({"packed": packed, "values": unpack_u16(packed).tolist()})
    numbers = []
    for value in (0, 7, 4096, 10000, 131072, -25000, 6.4, 0.5, 0.144, 2.675, 12345.678, 1e-5, 0.000123456,
                  3.14159265, 99.95, 1234567.0):
        for digits in (None, 1, 2, 4):
            for lang in ("en", "it"):
                v = value if digits is None else round(value, digits)
                numbers.append({"value": value, "digits": digits, "lang": lang, "text": format_number(v, lang)})
    percents = []
    for p in (0.5, 0.0123, 0.009, 0.00005, 1.0, 0.0):
        for lang in ("en", "it"):
            digits = 1 if p >= 0.01 else 3 if p >= 1e-4 else 6
            percents.append({"p": p, "lang": lang, "text": f"{format_number(round(100 * p, digits), lang)}%"})
    return {"packs": packs, "numbers": numbers, "percents": percents, "layouts": layouts()}


def layouts() -> list[dict]:
    """The charts' layout rule (ui.views.figures.laid_out) on the shapes the views draw: common.js
    laidOut must give the same layout."""
    import copy

    from ui.views.figures import laid_out

    cases = [
        {"title": {"text": "Memoria"}},
        {"title": "Angolo di ogni coppia (modulo 2π) attorno alla posizione m", "xaxis": {"title": "x", "tickangle": -45}},
        {"title": {"text": "Layer 3, head 7", "y": 0.99}, "xaxis": {"title": {"text": "key"}, "side": "top"},
         "yaxis": {"title": {"text": "query"}, "autorange": "reversed"}, "margin": {"l": 10, "r": 10, "t": 130, "b": 10},
         "height": 500},
        {"xaxis": {"side": "top"}, "margin": {"t": 40}},
        {"showlegend": False, "margin": {"t": 5}},
        {"title": {"text": "Cache per utente delle varianti di Llama-3 8B a 8192 token", "font": {"color": "#111"}},
         "legend": {"y": -0.35}, "barmode": "group",
         "xaxis": {"title": {"text": "candidates, best first, sorted by their probability after the filters"}}},
        {"title": {"text": "Two panels"},
         "xaxis": {"domain": [0, 0.45], "title": "posizione"}, "xaxis2": {"domain": [0.55, 1], "title": "posizione"},
         "annotations": [{"text": "prima di RoPE, con la frase mescolata", "xref": "paper", "yref": "paper", "y": 1,
                          "yanchor": "bottom", "showarrow": False, "x": 0.2},
                         {"text": "dopo", "xref": "paper", "yref": "paper", "y": 1, "yanchor": "bottom",
                          "showarrow": False, "x": 0.8},
                         {"text": "a point", "x": 3, "y": 0.4, "showarrow": True}]},
        {"polar": {"radialaxis": {"title": {"text": "raggio della coppia"}}}, "title": "Rotazione"},
        {"annotations": [{"text": "solo", "xref": "paper", "yref": "paper", "y": 1, "yanchor": "bottom",
                          "showarrow": False}]},
    ]
    return [{"layout": c, "laid_out": laid_out(copy.deepcopy(c))} for c in cases]


def kvcache() -> dict:
    """Every model of the calculator and every variant, at every context and number format: the
    bytes exact; FLOPs, speeds and training figures as floats; the sizes written as the page writes them."""
    from unittest import mock

    from lib.lessons import kvcache as K
    from lib.lessons.reference import MORE_MODELS, REFERENCE_MODELS
    from lib.model import arithmetic as A
    from ui.lessons.kvcache import sections as V
    from ui.shell import core

    qwen_window = dict(MORE_MODELS["Qwen2.5 7B"], use_sliding_window=True, max_window_layers=20, sliding_window=4096)
    hybrid = dict(REFERENCE_MODELS["Llama-3 8B"], model_type="qwen3_next", full_attention_interval=4)
    configs = {k: V.preset_config(k, {}) for k in V.PRESETS if k not in ("live", "custom")}
    configs.update({"Gemma 3 4B": MORE_MODELS["Gemma 3 4B"], "Qwen2.5 7B, window on": qwen_window,
                    "hybrid, 1 full in 4": hybrid})
    configs.update({f"variant.{v}": K.variant_config(REFERENCE_MODELS[V.BASE], v) for v in K.VARIANTS})
    contexts = sorted({*V.CONTEXTS, 1, 2, 511, 1023, 1025, 4095, 4097, 99_999, V.MAX_TOKENS})
    models = []
    for name, cfg in configs.items():
        try:
            params = A.count_params(cfg)
        except ValueError:
            params = None
        spec = K.spec(cfg, params)
        models.append({
            "name": name, "spec": spec,
            "counts": {kind: [k for k, _ in A.layer_kinds(cfg)].count(kind) for kind in (A.FULL, A.SLIDING, A.LINEAR)},
            "bytes": {dt: [A.kv_cache_bytes(cfg, n, dtype_bytes=b) for n in contexts] for dt, b in A.CACHE_DTYPES.items()},
            "per_token": {dt: A.kv_bytes_per_token(cfg, b) for dt, b in A.CACHE_DTYPES.items()},
            "forward": [A.forward_flops_per_token(cfg, n, params or 1) for n in contexts],
            "attention": [A.attention_flops(cfg, n) for n in contexts],
            "causal": [A.attention_flops(cfg, n, causal=True) for n in contexts],
            "calc": [{"given": dict(tokens=n, users=u, cache=c, weights=w, card_gb=g), "out": vars(K.calculate(
                cfg, params or 0, n, u, A.CACHE_DTYPES[c], A.bytes_per_param(w), g * 1e9))}
                for n, u, c, w, g in ((8192, 10, "bf16", "bf16", 80.0), (131_072, 64, "fp8", "int4", 141.0),
                                      (1, 1, "fp32", "fp32", 1.0), (V.MAX_TOKENS, 100_000, "bf16", "fp8", 24.5),
                                      (100_000, 3, "fp32", "int4", 100_000.0))],
        })
    base = REFERENCE_MODELS[V.BASE]
    variants = [{"tokens": n, "cache": c, "rows": [{"kind": v.kind, "bytes": v.bytes, "per_token": v.per_token,
                                                    "saving": v.saving} for v in K.cache_variants(base, n, b)]}
                for n in contexts for c, b in A.CACHE_DTYPES.items()]
    customs = []
    for fields in ({"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                    "hidden_size": 4096, "intermediate_size": 14_336, "vocab_size": 128_256},
                   {"num_hidden_layers": 1, "num_attention_heads": 1, "num_key_value_heads": 1, "head_dim": 1,
                    "hidden_size": 1, "intermediate_size": 1, "vocab_size": 1},
                   {"num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 99, "head_dim": 128,
                    "hidden_size": 8192, "intermediate_size": 28_672, "vocab_size": 2_000_000}):
        cfg = dict(fields, model_type="llama", tie_word_embeddings=False)  # the calculator's own numbers
        cfg["num_key_value_heads"] = min(cfg["num_key_value_heads"], cfg["num_attention_heads"])
        customs.append({"fields": fields, "spec": K.spec(cfg, A.count_params(cfg)),
                        "bytes": [A.kv_cache_bytes(cfg, n) for n in contexts]})
    fits = [{"card": c, "weights": w, "per_user": u, "fit": A.users_that_fit(c, w, u)}
            for c, w, u in ((1.0, 0.0, 0.1), (80e9, 16_060_522_496.0, 1_073_741_824), (0.3, 0.0, 0.1),
                            (24e9, 30e9, 5), (80e9, 0.0, 0), (6.0, 0.0, 0.2), (1e15, 1.0, 3))]
    steps = [{"given": [w, u, n, b], "out": {k: getattr(s, k) for k in (
        "seconds", "tokens_per_s", "per_user", "cache_share", "cache_bytes")}}
        for w, u, n, b in ((16e9, 0, 1, 3e12), (16.06e9, 13.1e9, 64, 3e12), (1e6, 5e5, 512, 1e9))
        for s in [A.decode_step(w, u, n, b)]]
    training = [{"params": p, "tokens": d, "gpus": g, "peak": f, "util": u, "flops": A.training_flops(p, d),
                 "days": A.training_days(A.training_flops(p, d), g, f, u),
                 "memory": {f"{o}.{z}": A.training_memory(p, o, g if z else 1, z) for o in ("adam", "muon") for z in (0, 3)}}
                for p, d, g, f, u in ((8.03e9, 15e12, 1000, 400e12, 0.4), (134_515_008, 1e9, 1, 1e12, 1.0),
                                      (671e9, 14.8e12, 2048, 989e12, 0.35))]
    moe = [{"total": t, "active": a, **vars(A.dense_vs_moe(t, a))} for t, a in ((8.03e9, None), (400e9, 25e9))]
    clamps = [{"given": g, "lo": lo, "hi": hi, "integer": i, **vars(K.clamp(g, lo, hi, integer=i))}
              for g, lo, hi, i in (("-7", 1, 10_000_000, True), ("0", 1, 100_000, True), ("2.7", 1, 100, True),
                                   ("1e12", 1, 10_000_000, True), ("", 1, 100, True), ("abc", 1.0, 100_000.0, False),
                                   ("80", 1.0, 100_000.0, False), ("0.5", 1.0, 100_000.0, False),
                                   ("3.25", 0.001, 1000.0, False), ("8192", 1, 10_000_000, True))]
    written = []
    for lang in ("en", "it"):
        with mock.patch.object(core, "lang", return_value=lang):
            for x in (0, 1, 999, 1000, 1024, 9999.5, 46_080, 131_072, 1_073_741_824, 13_107_200_000, 5.2e13, 2.15e12,
                      99_950_000_000, 7.2e23, 1.606e10, 6.85e10, 12_345_678.9, 2.5e15, 0.4):
                written.append({"x": x, "lang": lang, "size": V.size(x), "kib": V.kib(x) if x < 2**53 else None, "flops": V.flops(x),
                                "big": core.big(x), "sci": V.sci(x) if x else None})
    units = {lang: {"billion": i18n_label(lang, "unit.billion"), "million": i18n_label(lang, "unit.million")}
             for lang in ("en", "it")}
    return {"contexts": contexts, "cache_dtypes": A.CACHE_DTYPES, "weight_dtypes": A.WEIGHT_DTYPES, "models": models,
            "variants": variants, "variant_specs": [K.spec(configs[f"variant.{v}"], None) for v in K.VARIANTS],
            "customs": customs, "fits": fits, "steps": steps, "training": training, "moe": moe, "clamps": clamps,
            "written": written, "units": units}


def i18n_label(lang: str, key: str) -> str:
    from lib.course import i18n

    return i18n.label(lang, key)


# The RoPE bases of the course's models, from their configs: SmolLM2-135M (Dh 64) 100,000; Gemma 3
# 270M (Dh 256) 1,000,000 on its global layers and 10,000 on its windowed ones; the tests' tiny Gemma
# (Dh 16) 10,000 and 10; the original paper's 10,000.
ROPE_CASES = ((64, 100_000.0), (256, 1_000_000.0), (256, 10_000.0), (16, 10_000.0), (16, 10.0), (4, 10_000.0))


def position() -> dict:
    """lib.lessons.rope's angles, rotations and scores for static/views/position.js (tests/js/position.test.js)."""
    rng = np.random.default_rng(20261207)
    positions = [0, 1, 2, 5, 7, 100, 2047, 8191, 32767]
    cases = []
    for d_head, base in ROPE_CASES:
        theta = rope.frequencies(d_head, base)
        x = rng.normal(0, 1.5, (4, d_head))
        q, k = (rope.seeded_vector(d_head, s) for s in (11, 12))
        pairs = [(7, 3), (107, 103), (0, 0), (3, 7), (5000, 4990), (8191, 0)]
        distances = [0, 1, 2, 3, 10, 64, 500, 2047, 8191]
        windows = []
        for m, context in ((5, 8192), (8191, 8192), (3, 100), (20000, 32768)):
            lo = min(max(0, m - 256 // 2), max(0, context - 256))  # the window around m inside the context
            pos = np.arange(lo, min(lo + 256, context))
            z = np.outer(theta, pos) % (2 * np.pi)
            cols = sorted({*range(0, len(pos), 37), len(pos) - 1})  # a sample of the columns: the file stays small
            windows.append({"m": m, "context": context, "lo": int(lo), "n": len(pos), "cols": cols,
                            "z": z[:, cols].tolist()})
        cases.append({
            "d_head": d_head, "base": base, "theta": theta.tolist(),
            "positions": positions, "angles": rope.angles(positions, d_head, base).tolist(),
            "x": x.tolist(), "rotated": rope.apply_rope(x, base=base).tolist(),
            "rotated_scaled": rope.apply_rope(x, inv_freq=theta / 4).tolist(),  # a model's own θ_i (scaled)
            "q": q.tolist(), "k": k.tolist(),
            "scores": [{"n": n, "m": m, "score": float(rope.scores(q[None], k[None], [n], [m], base)[0, 0])}
                       for n, m in pairs],
            "distances": distances, "same": rope.score_vs_distance(q, q, distances, base).tolist(),
            "different": rope.score_vs_distance(q, k, distances, base).tolist(),
            "windows": windows,
        })
    return {"cases": cases}


def tokenization() -> dict:
    """The training animation's lives (lib.lessons.bpe.lives) and, for every step, the tokens lib's
    segments give (Training.spans) in the same window; exact integers through pack_ints."""
    text = ("Il gatto dorme sul divano, il gatto sogna. The cat sleeps on the sofa; the cat dreams!\n"
            "aaabdaaabac 2024 2025 🍞🍞 perché perché") * 3
    cases = []
    for pattern, size in (("gpt2", 256 + 60), ("gpt4", 256 + 40)):
        t = bpe.train(text, size, pattern)
        n = t.n_merges
        window = bpe.chunk_end(t.cut_step, 120)
        starts, ends, born, dies = bpe.lives(t.cut_step, 0, window)
        data = np.frombuffer(t.corpus, dtype=np.uint8)
        merge_ids = np.array([0] + [m.id for m in t.merges], dtype=np.int64)
        ids = np.where(born > 0, merge_ids[born], data[starts])
        dies = np.where(dies >= bpe.NEVER, n + 1, dies)
        cases.append({"pattern": pattern, "n": n, "id": pack_ints(ids), "born": pack_ints(born), "dies": pack_ints(dies),
                      "states": [[s.id for s in t.spans(k, 0, window)] for k in range(n + 1)],
                      "top_len": [len(p) for p in t.top_pairs]})
    ints = []
    for values in ([], [0], [0, 255], [0, 256, 65535], [7, 65536, 2**32 - 1], list(range(0, 3000, 7))):
        ints.append({"packed": pack_ints(values), "values": values})
    return {"trainings": cases, "ints": ints}


def block() -> dict:
    """The norm's two outputs (lib.lessons.block.norm_steps: RMSNorm and LayerNorm with the same gain) on
    vectors of every scale, with and without LayerNorm's bias, for the block view's normLines."""
    from lib.lessons.block import NormParams, norm_steps

    rng = np.random.default_rng(6)
    cases = []
    for d, scale, bias, eps in ((8, 1.0, False, 1e-5), (64, 30.0, True, 1e-6), (576, 0.02, False, 1e-5),
                                (16, 1000.0, True, 0.0)):
        x = rng.normal(0.3, scale, d)
        params = NormParams("rmsnorm", rng.normal(1.0, 0.3, d), rng.normal(0, 0.1, d) if bias else None, eps)
        s = norm_steps(x, params)
        cases.append({"x": x.tolist(), "g": params.weight.tolist(), "b": None if params.bias is None else params.bias.tolist(),
                      "mean": s.mean, "rms": s.rms, "std": s.std, "rms_out": s.rms_out.tolist(),
                      "layer_out": s.layer_out.tolist()})
    return {"norms": cases}


def embeddings() -> dict:
    """lib.lessons.embeddings.nearest at the largest k the view is sent, and at smaller k (the view's
    topNeighbours must give the latter from the former: a prefix, ties to the smaller id, by both
    measures); a table's rows packed at their full width and sliced, for the view's rowsAt."""
    from lib.lessons import embeddings as emb

    rng = np.random.default_rng(3)
    table = rng.normal(0, 1, (300, 16)).astype(np.float32)
    table[40:45] = table[7]  # equal rows: ties, where the order rule matters
    table[50] = 2 * table[7]  # the same direction, longer: a cosine tie, not a distance tie
    index = emb.build_index(table)
    cases = []
    for query in (table[7], table[123] + 0.01, rng.normal(0, 1, 16).astype(np.float32)):
        for metric in ("cosine", "euclidean"):
            sent = emb.nearest(index, query, 30, metric)
            smaller = {}
            for k in (1, 3, 7, 10, 29, 30):
                nb = emb.nearest(index, query, k, metric)
                smaller[str(k)] = {"ids": nb.ids.tolist(), "cosine": nb.cosine.tolist(), "distance": nb.distance.tolist()}
            cases.append({"metric": metric, "sent": {"ids": sent.ids.tolist(), "tokens": [f"t{i}" for i in sent.ids.tolist()],
                                                      "cosine": sent.cosine.tolist(), "distance": sent.distance.tolist()},
                          "expected": smaller})
    rows = rng.normal(0, 0.05, (5, 24))
    packed = pack_u16(rows)
    slices = {str(d): rows[:, :d].tolist() for d in (4, 9, 24, 30)}
    return {"neighbours": cases, "rows": {"packed": packed, "n": 5, "n_dims": 24, "slices": slices,
                                          "tolerance": packed["scale"] / 2 + 1e-12}}


def attention_steps() -> dict:
    """Flash attention's walk (lib.lessons.attention.flash_attention: every tile's running maximum, sum and
    rescaling, the tiles skipped) for the view's flashWalk, from the same scaled scores the view is
    sent (lower triangle, float32 as lib.serving.payload.pack_f32 packs them); -inf written as null."""
    from lib.lessons.attention import flash_attention, head_steps
    from lib.serving.payload import pack_f32, unpack_f32

    rng = np.random.default_rng(5)
    cases = []
    for t, d, block, window in ((1, 4, 2, None), (5, 4, 2, None), (12, 8, 4, None), (13, 8, 4, None),
                                (13, 8, 16, None), (16, 4, 2, 3), (20, 8, 4, 5), (9, 4, 1, None)):
        q, k, v = (rng.normal(0, 1.5, (t, d)) for _ in range(3))
        scaled = head_steps(q, k, v, window=window).scaled
        sent = unpack_f32(pack_f32(scaled[np.tril_indices(t)]))  # what the view gets: float32
        rows = np.zeros((t, t))
        rows[np.tril_indices(t)] = sent
        q_eff = rows  # scores as the view has them: flash_attention on q = rows, k = identity, scale 1
        run = flash_attention(q_eff, np.eye(t), np.zeros((t, 1)), block, block, scale=1.0, window=window)

        def finite(a):
            return [None if not np.isfinite(x) else float(x) for x in a]

        cases.append({"t": t, "block": block, "window": window, "scores": pack_f32(scaled[np.tril_indices(t)]),
                      "steps": [{"q_block": s.q_block, "k_block": s.k_block, "q0": s.q0, "q1": s.q1, "k0": s.k0,
                                 "k1": s.k1, "row_max": finite(s.row_max), "row_sum": s.row_sum.tolist(),
                                 "rescale": s.rescale.tolist()} for s in run.steps],
                      "skipped": [list(x) for x in run.skipped], "n_q_blocks": run.n_q_blocks})
    return {"walks": cases}


def build() -> dict[str, dict]:
    return {"sampling.json": sampling(), "common.json": common(), "tokenization.json": tokenization(),
            "position.json": position(),
            "kvcache.json": kvcache(), "block.json": block(), "embeddings.json": embeddings(),
            "attention_steps.json": attention_steps()}


def write() -> None:
    FOLDER.mkdir(parents=True, exist_ok=True)
    for name, content in build().items():
        (FOLDER / name).write_text(json.dumps(content) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write()
