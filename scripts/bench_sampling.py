"""Time to first token against time per following token, for prompts of growing length.

Checks the sampling lesson's claim on this machine: the prefill's time grows with the prompt,
the time per following token barely moves (each step reads all the weights for one token).
Prints numbers; it asserts nothing. Run: .venv/bin/python scripts/bench_sampling.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lib.lessons.generate import generate  # noqa: E402
from lib.model.models import load_model  # noqa: E402

WORDS = "the cat sat on the mat because it was tired and then it slept for a long time ".split()
LENGTHS = (8, 64, 256, 512)
NEW_TOKENS = 12
REPEATS = 3


def prompt(n_words: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(n_words))


def main() -> None:
    lm = load_model()
    generate(lm, prompt(8), 2, temperature=0.0)  # warm-up: the first forward pass of a process is slow
    weights_mb = sum(p.numel() * p.element_size() for p in lm.model.parameters()) / 1e6
    print(f"model {lm.info.name}: {weights_mb:.0f} MB of weights, {NEW_TOKENS} new tokens, median of {REPEATS}")
    print(f"{'prompt tokens':>14} {'first token ms':>15} {'per prompt token ms':>20} {'per new token ms':>17}")
    for n in LENGTHS:
        runs = [generate(lm, prompt(n), NEW_TOKENS, temperature=0.0) for _ in range(REPEATS)]
        t = len(runs[0].prompt_ids)
        first = statistics.median(r.first_token_s for r in runs) * 1000
        per_prompt = statistics.median(r.steps[0].forward_s / t for r in runs) * 1000
        per_new = statistics.median(r.per_token_s for r in runs) * 1000
        print(f"{t:>14} {first:>15.1f} {per_prompt:>20.2f} {per_new:>17.1f}")


if __name__ == "__main__":
    main()
