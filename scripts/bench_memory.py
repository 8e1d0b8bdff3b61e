"""Memory benchmark of the classroom server's caches (issue 14): RSS after many distinct texts.

Each scenario runs in a fresh Python process, as a server would: load the built-in model through
ui.cache.get_model, then ask ui.cache.get_capture (the one entry every page uses) for N distinct
texts of at least T tokens, cut at T, and read the process's RSS (VmRSS) and peak (VmHWM) from
/proc/self/status. Goal: RSS <= 1.5 GB after 100 texts of 256 tokens and after 30 of 512, with
the default capture budget (ITT_CAPTURE_BUDGET_MB, 384 MB unless set).

    .venv/bin/python scripts/bench_memory.py            # both scenarios, a table with PASS/MISS
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
    from ui import cache

    t0 = time.perf_counter()
    from lib.models import DEFAULT_MODEL

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
                      "kept": len(cache.CAPTURES.keys()), "kept_mb": cache.CAPTURES.nbytes / 2**20,
                      "budget_mb": cache.SETTINGS.capture_budget_bytes / 2**20,
                      "seconds": time.perf_counter() - t0, "model": lm.info.name}))


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
    else:
        main()
