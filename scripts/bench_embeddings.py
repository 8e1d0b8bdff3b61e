"""Benchmark: nearest neighbours over the whole vocabulary of the live model (target <= 50 ms).

Reads the embedding table of the embedded SmolLM2 (49152 x 576), normalizes it once, then times
top-k queries by cosine and by Euclidean distance for random tokens (seeded), plus the other
per-rerun work of the lesson (a 20 x 20 cosine matrix, a PCA). Prints the numbers; asserts nothing.

Usage: .venv/bin/python scripts/bench_embeddings.py [--queries 200] [--k 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lib.lessons import embeddings as emb  # noqa: E402
from lib.model.models import load_model  # noqa: E402

TARGET_MS = 50.0


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def report(name: str, ms: list[float]) -> None:
    ms = sorted(ms)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    print(f"{name:<34} median {statistics.median(ms):7.2f} ms   p95 {p95:7.2f} ms   best {ms[0]:7.2f} ms"
          f"   max {ms[-1]:7.2f} ms   (n={len(ms)})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()

    loaded = load_model()
    with torch.inference_mode():
        table = loaded.adapter.embed(loaded.model).weight.detach().float().numpy()
    # The machine may be shared: the load says how much the medians are inflated by other work;
    # "best" is the closest to the cost on an idle machine.
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg())
          + f" on {os.cpu_count()} CPUs")
    print(f"model {loaded.info.name}: table {table.shape[0]} x {table.shape[1]} float32, "
          f"{table.nbytes / 1e6:.1f} MB; torch threads {torch.get_num_threads()}")

    t0 = time.perf_counter()
    index = emb.build_index(table)
    print(f"{'build_index (once per model)':<34} {1000 * (time.perf_counter() - t0):7.2f} ms")

    rng = np.random.default_rng(0)
    tokens = rng.choice(index.shape[0], size=args.queries, replace=False)
    emb.nearest(index, index.table[tokens[0]], args.k)  # warm-up
    for metric in ("cosine", "euclidean"):
        ms = []
        for tok in tokens:
            t0 = time.perf_counter()
            nb = emb.nearest(index, index.table[tok], args.k, metric)
            ms.append((time.perf_counter() - t0) * 1000)
            assert nb.ids[0] == tok or np.array_equal(index.table[nb.ids[0]], index.table[tok])
        report(f"nearest top-{args.k}, {metric}", ms)
        verdict = "OK" if statistics.median(ms) <= TARGET_MS else "OVER TARGET"
        print(f"{'':<34} target <= {TARGET_MS:.0f} ms: {verdict}")

    words = index.table[tokens[:20]]
    report("cosine_matrix 20 x 576", timed(lambda: emb.cosine_matrix(words), 50))
    report("pca_2d 70 x 576", timed(lambda: emb.pca_2d(index.table[tokens[:70]]), 50))
    report("norm_vs_id over the whole table", timed(lambda: emb.norm_vs_id(index.norms), 5))
    print("load average at the end: " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
