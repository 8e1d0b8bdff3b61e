"""The shared fixtures that hold the browser views' maths to lib's (tests/js, tests/test_views.py).

`build()` computes every expected value with lib; `python -m tests.views_fixtures` writes them to
tests/fixtures/views/, where node's test runner reads them (tests/js/*.test.js) and checks the
JavaScript, and tests/test_views.py checks that the files still say what lib computes today.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from lib import bpe, rope
from lib.payload import pack_ints, pack_u16, unpack_u16
from lib.quiz import format_number
from lib.sampling import draw_at, filter_steps, seed_uniform

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
    return {"packs": packs, "numbers": numbers, "percents": percents}


def tokenization() -> dict:
    """The training animation's lives (lib.bpe.lives) and, for every step, the tokens lib's
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


# The RoPE bases of the course's models, from their configs: SmolLM2-135M (Dh 64) 100,000; Gemma 3
# 270M (Dh 256) 1,000,000 on its global layers and 10,000 on its windowed ones; the tests' tiny Gemma
# (Dh 16) 10,000 and 10; the original paper's 10,000.
ROPE_CASES = ((64, 100_000.0), (256, 1_000_000.0), (256, 10_000.0), (16, 10_000.0), (16, 10.0), (4, 10_000.0))


def position() -> dict:
    """lib.rope's angles, rotations and scores for static/views/position.js (tests/js/position.test.js)."""
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
    """The training animation's lives (lib.bpe.lives) and, for every step, the tokens lib's
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


def build() -> dict[str, dict]:
    return {"sampling.json": sampling(), "common.json": common(), "tokenization.json": tokenization(),
            "position.json": position()}


def write() -> None:
    FOLDER.mkdir(parents=True, exist_ok=True)
    for name, content in build().items():
        (FOLDER / name).write_text(json.dumps(content) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write()
