"""How long the block lesson's cached computations take on the built-in model (prints numbers).

For a short, a medium and the longest text (512 tokens): the capture itself, the attention/MLP
split of every block (lib.lessons.block.contributions), one layer's MLP branches, and the logit lens over
the page's window of positions and over every position. The page computes each of these once per
(model, text) and caches it; moving a slider only reads the cached result.

Run from the repo root: .venv/bin/python scripts/bench_block.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lib.lessons import block as blk  # noqa: E402
from lib.lessons.logit_lens import lens_positions, logit_lens  # noqa: E402
from lib.model.capture import run_capture  # noqa: E402
from lib.model.models import load_model  # noqa: E402
from ui.lessons.block.lens_service import LENS_WINDOW  # noqa: E402

TEXTS = {"short": "The cat sat on the mat because it was tired.", "medium": "parola " * 128, "long": "parola " * 7200}


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> None:
    lm, seconds = timed(load_model)
    print(f"model loaded in {seconds:.1f} s ({lm.info.name})")
    print(f"{'text':>8} {'T':>5} {'capture':>9} {'split':>8} {'branches':>9} {'lens@' + str(LENS_WINDOW):>9} {'lens all':>9}")
    for name, text in TEXTS.items():
        cap, t_cap = timed(lambda: run_capture(lm, text))
        contrib, t_split = timed(lambda: blk.contributions(lm, cap))
        layer = lm.info.n_layers // 2
        _, t_branch = timed(lambda: blk.mlp_branches(lm, cap, layer, contrib.attn_out[layer]))
        _, t_window = timed(lambda: logit_lens(lm, cap.resid, lens_positions(cap.n_tokens, LENS_WINDOW)))
        _, t_all = timed(lambda: logit_lens(lm, cap.resid))
        print(f"{name:>8} {cap.n_tokens:>5} {t_cap:>8.2f}s {t_split:>7.2f}s {t_branch:>8.2f}s {t_window:>8.2f}s {t_all:>8.2f}s")


if __name__ == "__main__":
    main()
