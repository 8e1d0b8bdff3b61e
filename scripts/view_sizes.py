"""How many bytes each browser view of the lessons is sent, for the inputs that
docs/architecture.md's table "Which widget needs the server" names (prints the figures).

What is measured, and how:

- **A browser view's data** (every `itt_view` component, ui/views/browser.py): the lesson pages run
  under Streamlit's AppTest on the built-in SmolLM2, in English and in Italian with the course's
  example text (the sidebar's default), with the 64-token text of scripts/bench_views.py, and with
  its first 40 tokens (the tokenization lesson's replay). The size is the data as sent: the JSON
  string Streamlit puts in the component's message (`proto.json`), in bytes. AppTest computes every
  section at once (a browser computes the lower ones when reached); the data is the same.
- **bertviz's head view** (the numbers lesson's glimpse, an iframe, not a view): the page the app
  sends, built as the lesson builds it (lib.lessons.bertviz_view's `head_view_html` and
  `as_document` on the lesson's first 40 tokens at most), for the slider's default layer and for
  every layer at once; with Gemma 3 too (`--no-gemma` leaves it out: its tokenizer takes minutes
  to load). Beside them, `weights_bytes`' estimate that the attention lesson quotes.
- **The MLP layer's time** (a time, not a size): lib.lessons.block.mlp_branches for each layer of
  the 64-token text, as the block lesson computes one layer on a move of its slider, timed with
  perf_counter after one untimed run; the machine's load average is printed with it.

KB here is 1,000 bytes and MB 1,000,000 (the lessons' own megabytes, `weights_bytes / 1e6`).
Figures depend on the code, the model and the labels of the checkout: the commit is printed.

Run from the repository's root: .venv/bin/python scripts/view_sizes.py [--no-gemma]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

from bench_views import TEXT, TEXT_TOKENS  # noqa: E402  (the 64-token text the browser benchmark types)

TIMEOUT_S = 900  # one page run on a cold cache (the model's first load, the lens) on a busy 2-core machine
PAGES = {"tokenization": "pages/02_tokenization.py", "embeddings": "pages/03_embeddings.py",
         "position": "pages/04_position.py", "attention": "pages/05_attention.py", "block": "pages/06_block.py",
         "kvcache": "pages/08_kvcache.py"}
ALL = tuple(PAGES)
# What each view answers in the docs table (its row), by the view's key.
ROWS = {
    "tokenization.view": "tokenization: target vocabulary size, merge step (the training)",
    "tokenization.real_view": "tokenization: the model's merges (the replay)",
    "tokenization.pair_view": "tokenization: paragraph to compare",
    "embeddings.view": "embeddings: dimensions to show (the rows)",
    "embeddings.neighbours_view": "embeddings: how many neighbours, rank by",
    "embeddings.pca_view": "embeddings: the projection's switch",
    "embeddings.depth_view": "embeddings: depth",
    "position.live": "position: live layer (one layer's q and k)",
    "attention.view": "attention: layer (one layer's heads)",
    "attention.formula_view": "attention: the three per layer: formula",
    "attention.mask_view": "attention: the three per layer: mask",
    "attention.flash_view": "attention: the three per layer: flash",
    "attention.scaling_view": "attention: d_head of the scaling demo",
    "block.view": "block: token to follow up the stack",
    "block.lens_view": "block: logit lens",
    "block.norm_view": "block: norm's layer (one layer)",
}
THREE = ("attention.formula_view", "attention.mask_view", "attention.flash_view")


def commit() -> str:
    """The checkout measured: `git rev-parse --short HEAD`, and how many tracked files differ from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True).stdout.strip()

    dirty = git("status", "--porcelain", "--untracked-files=no").splitlines()
    return git("rev-parse", "--short", "HEAD") + (f" with {len(dirty)} tracked files changed (dirty)" if dirty
                                                   else " (clean: no tracked file changed)")


def kb(n: float) -> str:
    """Bytes as the docs write them. Example: kb(9_412) -> '9.4 KB'; kb(2_812_000) -> '2.81 MB'"""
    return f"{n / 1e6:.2f} MB" if n >= 1e6 else f"{n / 1e3:.1f} KB"


def first_tokens(text: str, n: int) -> str:
    """The text up to the end of its `n`-th token on the built-in model's tokenizer."""
    from lib.model.models import DEFAULT_MODEL
    from ui.shell.cache import get_model

    enc = get_model(DEFAULT_MODEL).tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    return text[:enc["offset_mapping"][n - 1][1]]


def n_tokens(text: str) -> int:
    """How many tokens the lessons' capture of `text` holds on the built-in model."""
    from lib.model.capture import DEFAULT_MAX_TOKENS
    from lib.model.models import DEFAULT_MODEL
    from ui.shell.cache import get_capture

    return get_capture(DEFAULT_MODEL, text, DEFAULT_MAX_TOKENS).n_tokens


def run_app_py_on_every_run() -> None:
    """AppTest builds a fresh PagesManager per run, which sees pages/ and from the second run on would
    run the page file alone, skipping app.py (the sidebar, the model, st.navigation). The real server
    leaves that mode once st.navigation is called; this does the same for AppTest (as the tests'
    `navigation_v2` fixture does)."""
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = init


def view_bytes(at) -> dict[str, int]:
    """Every browser view on the page AppTest ran, by its key: the bytes of its data as sent (JSON)."""
    out = {}
    for c in at.get("bidi_component"):
        if c.proto.component_name == "itt_view" and c.proto.json:
            out[c.proto.id.rsplit("-", 1)[-1]] = len(c.proto.json.encode("utf-8"))
    return out


def measure_pages(lang: str, text: str | None, pages: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Run app.py in `lang` with `text` (None: the example text the sidebar starts with), then each
    page in turn: {page: {view key: bytes}}."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT_S)
    at.query_params["lang"] = lang
    at.run()
    if text is not None:
        at.text_area(key="app.text").set_value(text)
        at.run()
    found = {}
    for page in pages:
        at.switch_page(PAGES[page])
        at.run()
        if at.exception:
            raise RuntimeError(f"{page} ({lang}): {at.exception}")
        found[page] = view_bytes(at)
    return found


def bertviz_pages(model: str, text: str, lang: str) -> tuple[int, int, int]:
    """(tokens shown, bytes of the page for the slider's default layer, bytes for every layer at once)
    of the numbers lesson's bertviz glimpse, built as pages/01_numbers.py builds it."""
    import numpy as np

    from lib.course import i18n
    from lib.lessons.bertviz_view import as_document, head_view_html
    from lib.model.capture import max_tokens_for
    from ui.shell.cache import get_capture, get_model

    lm = get_model(model)
    cap = get_capture(model, text, max_tokens_for(lm))
    n = min(cap.n_tokens, 40)  # pages/01_numbers.py's BERTVIZ_MAX_TOKENS
    attn = np.stack([cap.attn_layer(layer, upto=n) for layer in range(cap.n_layers)])  # [L, H, n, n]
    tokens, title = list(cap.tokens[:n]), i18n.ui(lang)["numbers.glimpse.header"]
    layer = min(lm.info.n_layers // 2, lm.info.n_layers - 1)  # the slider's default
    one = as_document(head_view_html(attn, tokens, layers=[layer]).html, lang, title)
    every = as_document(head_view_html(attn, tokens).html, lang, title)
    return n, len(one.encode("utf-8")), len(every.encode("utf-8"))


def mlp_seconds(text: str) -> list[float]:
    """Seconds of lib.lessons.block.mlp_branches for each layer of `text` (the block lesson's MLP
    layer), after one untimed run; the contributions it needs are computed once, not timed."""
    from lib.lessons import block as blk
    from lib.model.capture import DEFAULT_MAX_TOKENS
    from lib.model.models import DEFAULT_MODEL
    from ui.shell.cache import get_capture, get_model

    lm = get_model(DEFAULT_MODEL)
    cap = get_capture(DEFAULT_MODEL, text, DEFAULT_MAX_TOKENS)
    contrib = blk.contributions(lm, cap)
    blk.mlp_branches(lm, cap, 0, contrib.attn_out[0])
    times = []
    for layer in range(lm.info.n_layers):
        start = time.perf_counter()
        blk.mlp_branches(lm, cap, layer, contrib.attn_out[layer])
        times.append(time.perf_counter() - start)
    return times


def page_lines(inputs: list[tuple[str, str, str | None, tuple[str, ...]]]) -> list[tuple[str, str, int]]:
    """(row, input, bytes) for every view of every page of every input, with the sums the table quotes."""
    from lib.model.models import DEFAULT_MODEL
    from ui.shell.cache import get_model

    n_layers = get_model(DEFAULT_MODEL).info.n_layers
    lines = []
    for lang, name, text, pages in inputs:
        print(f"measuring: {name} ({lang}), {', '.join(pages)}", file=sys.stderr)
        for page, views in measure_pages(lang, text, pages).items():
            for key, size in views.items():
                lines.append((ROWS.get(key, f"{page}: {key} (not in the table)"), name, size))
            if all(k in views for k in THREE):
                lines.append(("attention: the three per layer, together", name, sum(views[k] for k in THREE)))
            if page == "kvcache":
                lines.append(("kvcache: the whole lesson's views", name, sum(views.values())))
            if "block.norm_view" in views:
                lines.append((f"block: norm's every layer, estimated as {n_layers} x one layer", name,
                              n_layers * views["block.norm_view"]))
    return lines


def bertviz_lines(gemma: bool) -> list[tuple[str, str, int]]:
    """(row, input, bytes) of bertviz's glimpse: the example text in both languages, and the lesson's
    40 tokens on SmolLM2 (and Gemma 3), one layer and every layer; weights_bytes' estimate beside."""
    from lib.course import i18n
    from lib.lessons.bertviz_view import weights_bytes
    from lib.model.models import DEFAULT_MODEL, GEMMA_MODEL
    from ui.shell.cache import get_model

    runs = [(DEFAULT_MODEL, "SmolLM2", lang, i18n.ui(lang)["text.example"], f"{lang} example text")
            for lang in ("en", "it")]
    runs += [(m, label, "en", TEXT, "64-token text, cut at 40") for m, label in
             [(DEFAULT_MODEL, "SmolLM2"), *([(GEMMA_MODEL, "Gemma 3")] if gemma else [])]]
    lines = []
    for model, label, lang, text, name in runs:
        print(f"measuring: bertviz, {label}, {name}", file=sys.stderr)
        n, one, every = bertviz_pages(model, text, lang)
        lines.append((f"numbers: bertviz's layer on {label}, one layer", f"{name} ({n} tokens)", one))
        lines.append((f"numbers: bertviz's layer on {label}, every layer at once", f"{name} ({n} tokens)", every))
        if n == 40:
            info = get_model(model).info
            lines.append((f"numbers: bertviz on {label}, weights_bytes({info.n_layers}, {info.n_heads}, 40)",
                          "the formula's estimate", weights_bytes(info.n_layers, info.n_heads, 40)))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-gemma", action="store_true", help="leave out bertviz on Gemma 3 (its load takes minutes)")
    args = parser.parse_args()
    # A class store of the script's own, never the developer's (as the tests do).
    os.environ.setdefault("ITT_DATABASE_URL", f"sqlite:///{tempfile.mkdtemp(prefix='itt-sizes-')}/classroom.sqlite3")
    run_app_py_on_every_run()
    from lib.course import i18n

    started, code = time.perf_counter(), commit()
    text40 = first_tokens(TEXT, 40)
    inputs = [("en", "en example text", None, ALL), ("it", "it example text", None, ALL),
              ("en", f"{TEXT_TOKENS}-token text", TEXT, ("embeddings", "position", "attention", "block")),
              ("en", "40-token text", text40, ("tokenization",))]
    lines = page_lines(inputs) + bertviz_lines(not args.no_gemma)
    load = os.getloadavg()
    times = mlp_seconds(TEXT)

    print(f"\n`{' '.join(['.venv/bin/python scripts/view_sizes.py', *sys.argv[1:]])}`: commit {code}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, run took {time.perf_counter() - started:.0f} s.")
    for lang, name, text, _ in inputs:
        text = text if text is not None else i18n.ui(lang)["text.example"]
        print(f"{name}: {n_tokens(text)} tokens on the built-in model: {text!r}")
    print()
    print("| row | input | bytes | size |\n|---|---|---:|---:|")
    for row, name, size in sorted(lines, key=lambda x: (x[0].split(":")[0], x[0], x[1])):
        print(f"| {row} | {name} | {size:,} | {kb(size)} |")
    print(f"\nblock: MLP layer, lib.lessons.block.mlp_branches on the {TEXT_TOKENS}-token text: median "
          f"{statistics.median(times):.3f} s a layer (fastest {min(times):.3f} s, slowest {max(times):.3f} s), "
          f"{sum(times):.1f} s for all {len(times)}; load average before it {load[0]:.1f} (1 min) "
          f"on {os.cpu_count()} cores.")


if __name__ == "__main__":
    main()
