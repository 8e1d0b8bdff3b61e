"""Two versions of the app side by side: which one answers a widget faster, in the same browser.

Usage: .venv/bin/python scripts/bench_ab.py TREE_A TREE_B lesson:widget [lesson:widget ...]
(ROUNDS=20 by default). TREE_A and TREE_B are checkouts of the repository (for instance a
`git worktree` of an older commit, with `.venv` and `static/vendor` in place). Both servers run
at once; one Chromium moves the widget one step on A, then on B, then on A... (each round starts
to the right, so the widget walks to its end and then steps back and forth there), and the
machine's drift from minute to minute (10-20% here) falls on both alike. Each move is timed as
in bench_ui.py (from the key press until the run it caused is over). Prints p50 / p95 / mean per
tree. A benchmark, not a test.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

import bench_ui  # noqa: E402
from lib.course import i18n  # noqa: E402
from drivers.browser import (CHROMIUM, CHROMIUM_ARGS, _free_port, healthy, runs_of, settle,  # noqa: E402
                                stop_process)

START_TIMEOUT_S = 600
TIMEOUT_MS = 120_000


def start(tree: str) -> tuple[subprocess.Popen, str]:
    """`streamlit run` the tree's app.py with the tree's own venv and code; its URL once healthy."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=tree, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([f"{tree}/.venv/bin/streamlit", "run", f"{tree}/app.py", "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not healthy(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_process(proc)
            sys.exit(f"the server of {tree} did not start")
        time.sleep(0.2)  # polling a server that is starting
    return proc, url


def main() -> None:
    if len(sys.argv) < 4 or any(":" not in a for a in sys.argv[3:]):
        sys.exit(__doc__)
    trees = sys.argv[1:3]
    targets = [a.split(":", 1) for a in sys.argv[3:]]
    rounds = int(os.environ.get("ROUNDS", 20))
    en = i18n.ui("en")

    from playwright.sync_api import expect, sync_playwright

    servers = []
    try:
        for tree in trees:
            servers.append(start(tree))
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            pages = []
            for _, url in servers:
                _, page, counter = bench_ui.new_page(browser)
                runs_of(page).reset()
                page.goto(f"{url}/?lang=en")
                expect(bench_ui.title_of(page, en, "numbers")).to_be_visible(timeout=START_TIMEOUT_S * 1000)
                settle(page, TIMEOUT_MS)
                pages.append((page, counter))
            for lesson, key in targets:
                widgets = []
                for page, counter in pages:
                    if lesson != "numbers":
                        bench_ui.switch(page, en, lesson, counter)
                        settle(page, TIMEOUT_MS)
                    widgets.append(bench_ui.Widget(lesson, key))
                for _ in range(rounds):
                    for (page, counter), w in zip(pages, widgets):
                        bench_ui.move(page, w, len(w.ms) + 1, counter)
                for tree, w in zip(trees, widgets):
                    ms = sorted(w.ms)
                    print(f"{key:22s} {tree:24s} n={len(ms)} p50 {bench_ui.pct(ms, .5):5.0f} ms "
                          f"p95 {bench_ui.pct(ms, .95):5.0f} ms mean {statistics.mean(ms):5.0f} ms {w.note}")
            browser.close()
    finally:
        for proc, _ in servers:
            stop_process(proc)


if __name__ == "__main__":
    main()
