"""Memory benchmark of the classroom server's caches: RSS after many distinct texts.

Each scenario runs in a fresh Python process, as a server would: load the built-in model through
ui.shell.cache.get_model, then ask ui.shell.cache.get_capture (the one entry every page uses) for N distinct
texts of at least T tokens, cut at T, and read the process's RSS (VmRSS) and peak (VmHWM) from
/proc/self/status. Goal: RSS <= 1.5 GB after 100 texts of 256 tokens and after 30 of 512, with
the default cache budget (ITT_CACHE_BUDGET_MB, 384 MB unless set).

    .venv/bin/python scripts/bench_memory.py            # both scenarios, a table with PASS/MISS
    .venv/bin/python scripts/bench_memory.py --both     # only the two-built-in-models scenario

A third scenario keeps both built-in models resident, as a server does once a learner has picked
Gemma 3 270M: SmolLM2 with 10 texts of 512 tokens, then Gemma with 3 texts of 1,024 tokens (its
captures read twice its sliding window), one shared cache budget. Gemma's weights alone are
1.07 GB in float32, so that row's goal is the models' weights plus the budget, not 1.5 GB.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL_GB = 1.5
SCENARIOS = ((100, 256), (30, 512))
BOTH = ((10, 512), (3, 1024))  # (texts, tokens) on SmolLM2, then on Gemma

WORDS = ("the cat sleeps on a warm mat while rain falls over the quiet town and children read "
         "stories about dragons kings rivers mountains bread music friends numbers light shadow "
         "il gatto dorme sul tappeto mentre la pioggia cade sulla città tranquilla e i bambini "
         "leggono storie di draghi re fiumi montagne pane musica amici numeri luce ombra").split()


def _status() -> dict[str, float]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS", "VmHWM")):
            key, value = line.split(":")
            out[key] = int(value.split()[0]) / 2**20  # kB -> GB
    return out


def child(n: int, tokens: int) -> None:
    sys.path.insert(0, str(REPO))
    from ui.shell import cache

    t0 = time.perf_counter()
    from lib.model.models import DEFAULT_MODEL

    lm = cache.get_model(DEFAULT_MODEL)
    after_load = _status()["VmRSS"]
    rng = random.Random(0)
    sizes = []
    for i in range(n):
        text = f"{i}: " + " ".join(rng.choice(WORDS) for _ in range(tokens * 2))
        cap = cache.get_capture(DEFAULT_MODEL, text, tokens)
        assert cap.n_tokens == tokens, cap.n_tokens
        sizes.append(cap.nbytes)
        del cap
    st = _status()
    print(json.dumps({"n": n, "tokens": tokens, "after_load_gb": after_load, "rss_gb": st["VmRSS"],
                      "peak_gb": st["VmHWM"], "capture_mb": sizes[-1] / 2**20,
                      "kept": len(cache.CACHE.keys()), "kept_mb": cache.CACHE.nbytes / 2**20,
                      "budget_mb": cache.SETTINGS.cache_budget_bytes / 2**20,
                      "seconds": time.perf_counter() - t0, "model": lm.info.name}))


def child_both() -> None:
    """Both built-in models resident: texts on SmolLM2, then on Gemma, through the shared caches."""
    sys.path.insert(0, str(REPO))
    from ui.shell import cache

    t0 = time.perf_counter()
    from lib.model.models import DEFAULT_MODEL, EMBEDDED_MODELS

    names = list(EMBEDDED_MODELS)
    loaded = [cache.get_model(name) for name in names]
    after_load = _status()["VmRSS"]
    weights = sum(p.numel() * p.element_size() for lm in loaded for p in lm.model.parameters())
    rng = random.Random(0)
    sizes = {}
    for name, (n, tokens) in zip(names, BOTH):
        for i in range(n):
            text = f"{i}: " + " ".join(rng.choice(WORDS) for _ in range(tokens * 2))
            cap = cache.get_capture(name, text, tokens)
            sizes[name] = cap.nbytes
            del cap
    st = _status()
    print(json.dumps({"models": [lm.info.name for lm in loaded], "after_load_gb": after_load,
                      "weights_gb": weights / 2**30, "rss_gb": st["VmRSS"], "peak_gb": st["VmHWM"],
                      "capture_mb": {k: v / 2**20 for k, v in sizes.items()},
                      "kept": len(cache.CACHE.keys()), "kept_mb": cache.CACHE.nbytes / 2**20,
                      "budget_mb": cache.SETTINGS.cache_budget_bytes / 2**20,
                      "seconds": time.perf_counter() - t0, "default": DEFAULT_MODEL}))


def both_row() -> None:
    out = subprocess.run([sys.executable, __file__, "--child-both"], cwd=REPO, capture_output=True, text=True,
                         check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    goal = r["weights_gb"] + r["budget_mb"] / 1024 + 0.5  # weights + captures + the interpreter and torch
    caps = " · ".join(f"{v:.0f} MB" for v in r["capture_mb"].values())
    print(f"Both built-in models resident ({', '.join(r['models'])}; weights {r['weights_gb']:.2f} GB; "
          f"goal: RSS <= weights + budget + 0.5 GB = {goal:.2f} GB)")
    print("| texts | one capture | kept (MB) | RSS after models | RSS after texts | peak | time | result |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    texts = " + ".join(f"{n}×{t}" for n, t in BOTH)
    print(f"| {texts} | {caps} | {r['kept']} ({r['kept_mb']:.0f}) | {r['after_load_gb']:.2f} GB | {r['rss_gb']:.2f} GB "
          f"| {r['peak_gb']:.2f} GB | {r['seconds']:.0f} s | {'PASS' if r['rss_gb'] <= goal else 'MISS'} |")


def main() -> None:
    rows = []
    for n, tokens in SCENARIOS:
        out = subprocess.run([sys.executable, __file__, "--child", str(n), str(tokens)], cwd=REPO,
                             capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"Capture memory (built-in model, budget {rows[0]['budget_mb']:.0f} MB; goal: RSS <= {GOAL_GB} GB)")
    print("| texts | tokens | one capture | kept (MB) | RSS after model | RSS after texts | peak | time | result |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        verdict = "PASS" if r["rss_gb"] <= GOAL_GB else "MISS"
        print(f"| {r['n']} | {r['tokens']} | {r['capture_mb']:.0f} MB | {r['kept']} ({r['kept_mb']:.0f}) "
              f"| {r['after_load_gb']:.2f} GB | {r['rss_gb']:.2f} GB | {r['peak_gb']:.2f} GB "
              f"| {r['seconds']:.0f} s | {verdict} |")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1:] == ["--child-both"]:
        child_both()
    elif sys.argv[1:] == ["--both"]:
        both_row()
    else:
        main()
        both_row()
