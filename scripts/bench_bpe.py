"""Benchmark of the tokenization lesson's algorithms (not a test: it prints figures, asserts nothing).

    PYTHONPATH=. .venv/bin/python scripts/bench_bpe.py

1. Training: `lib.lessons.bpe.train`, 1,000 merges on a 100 KB corpus (the lesson's two built-in texts,
   then Python standard-library sources: prose, code and numbers, many distinct words), with and
   without the top-10 pairs the page records per step; median of 3 runs. A full recount of every
   pair per merge (the textbook loop) is timed on its first 20 merges and extrapolated, to show
   what the incremental counts save. Target: <= 2 s.
2. Replay: `lib.lessons.bpe_replay.replay` of the default model's 48,900 merges on 2,000 characters of
   varied text (Italian, English, digits, emoji, code, whitespace runs), median of 7 runs, next to
   the tokenizer's own Rust encode of the same text; plus reading the merges from the tokenizer
   (done once per model and cached by the page). Target: <= 200 ms.
"""

from __future__ import annotations

import statistics
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lib.lessons import bpe, bpe_replay  # noqa: E402

CORPUS_BYTES = 100_000
MERGES = 1_000
REPLAY_CHARS = 2_000


def _corpus() -> str:
    parts = [(REPO / "assets" / "corpora" / lang / "tokenization.txt").read_text(encoding="utf-8") for lang in ("it", "en")]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for name in ("argparse.py", "inspect.py", "textwrap.py", "difflib.py", "calendar.py"):
        parts.append((stdlib / name).read_text(encoding="utf-8"))
    text = "\n".join(parts)
    data = text.encode("utf-8")[:CORPUS_BYTES]
    return data.decode("utf-8", errors="ignore")


def _median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _naive_per_merge(text: str, n: int) -> float:
    chunks = [list(bpe.to_bytes(c)) for c in bpe.split(text)]
    t0 = time.perf_counter()
    for new_id in range(256, 256 + n):
        counts: Counter = Counter()
        for c in chunks:
            bpe.pair_counts(c, counts)
        pair = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        chunks = [bpe.merge(c, pair, new_id) for c in chunks]
    return (time.perf_counter() - t0) / n


def _mark(value: float, target: float) -> str:
    return "PASS" if value <= target else "MISS"


def bench_training() -> None:
    text = _corpus()
    n_bytes = len(text.encode("utf-8"))
    print(f"1. Training {MERGES:,} merges on {n_bytes:,} bytes ({len(text):,} characters, "
          f"{len(bpe.split(text)):,} chunks, {len(set(bpe.split(text))):,} distinct)")
    result = bpe.train(text, 256 + MERGES, top_k=0)
    assert result.n_merges == MERGES, result.stop
    plain = _median(lambda: bpe.train(text, 256 + MERGES, top_k=0), 3)
    page = _median(lambda: bpe.train(text, 256 + MERGES, top_k=10), 3)
    naive = _naive_per_merge(text, 20)
    print(f"   incremental counts:               {plain:6.3f} s   target <= 2 s  {_mark(plain, 2.0)}")
    print(f"   incremental + top-10 pairs/step:  {page:6.3f} s   (what the page runs)  {_mark(page, 2.0)}")
    print(f"   full recount per merge (textbook): {naive * 1000:6.1f} ms per merge -> ~{naive * MERGES:.0f} s "
          f"for {MERGES:,} merges ({naive * MERGES / plain:.0f}x slower)")
    print(f"   compression: {n_bytes / result.n_tokens[-1]:.2f} bytes per token after {MERGES:,} merges")


def bench_replay() -> None:
    from lib.model.models import load_model

    it = (REPO / "assets" / "corpora" / "it" / "tokenization.txt").read_text(encoding="utf-8")
    en = (REPO / "assets" / "corpora" / "en" / "tokenization.txt").read_text(encoding="utf-8")
    extra = ("\nNel 2024: 1.234.567,89 € e 3,14159 — 😀🐱🚀 🇮🇹 👩‍👩‍👧\n"
             "def f(x):\n    return {k: v ** 2 for k, v in x.items()}  # code\n\n\n\t\t   spazi    multipli   \n")
    text = (it[:900] + extra + en)[:REPLAY_CHARS]  # no repeated paragraph: every word is looked up afresh
    tok = load_model().tokenizer
    t0 = time.perf_counter()
    model = bpe_replay.from_tokenizer(tok)
    read = time.perf_counter() - t0
    r = bpe_replay.replay(text, model)
    same = r.ids == tok.encode(text, add_special_tokens=False)
    replay_s = _median(lambda: bpe_replay.replay(text, model), 7)
    rust_s = _median(lambda: tok.encode(text, add_special_tokens=False), 7)
    states = _median(lambda: [r.tokens(k) for k in range(0, r.n_steps + 1, max(1, r.n_steps // 20))], 3)
    n_states = len(range(0, r.n_steps + 1, max(1, r.n_steps // 20)))
    print(f"2. Replay of {model.n_merges:,} merges on {len(text):,} characters ({len(r.data):,} bytes, "
          f"{r.words:,} pieces): {r.n_steps:,} steps, {len(r.ids):,} tokens, equal to the tokenizer: {same}")
    print(f"   replay (every state kept):        {replay_s * 1000:6.1f} ms   target <= 200 ms  {_mark(replay_s, 0.2)}")
    print(f"   the tokenizer's own encode (Rust): {rust_s * 1000:6.1f} ms")
    print(f"   redrawing one state (tokens(k)):   {states / n_states * 1000:6.2f} ms")
    print(f"   reading the merges from the tokenizer (once per model, cached): {read * 1000:.0f} ms")


if __name__ == "__main__":
    bench_training()
    bench_replay()
