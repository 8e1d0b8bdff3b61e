"""Two versions of the app side by side: which one answers a widget faster, in the same browser.

Usage: .venv/bin/python scripts/bench_ab.py TREE_A TREE_B lesson:widget [lesson:widget ...]
(ROUNDS=20 by default). TREE_A and TREE_B are checkouts of the repository (for instance a
`git worktree` of an older commit, with `.venv` and `static/vendor` in place). Both servers run
at once; one Chromium moves the widget on A, then on B, then on A... so the machine's drift from
minute to minute (10-20% here) falls on both alike. Prints p50 / p95 / mean per tree. A benchmark,
not a test.
"""
import os, sys, time, subprocess, statistics
from pathlib import Path
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO)); sys.path.insert(0, str(REPO / "scripts"))
import bench_ui
from lib import i18n
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, healthy, runs_of, settle, stop_process, _free_port
from playwright.sync_api import sync_playwright, expect

def start(tree):
    port = _free_port(); url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=tree, PYTHONUNBUFFERED="1")
    log = open(os.devnull, "w")
    p = subprocess.Popen([f"{tree}/.venv/bin/streamlit", "run", f"{tree}/app.py", "--server.port", str(port),
                          "--server.address", "127.0.0.1", "--server.headless", "true",
                          "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                         cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 600
    while not healthy(url):
        if p.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"the server of {tree} did not start")
        time.sleep(0.2)
    return p, url

if len(sys.argv) < 4 or any(":" not in a for a in sys.argv[3:]):
    sys.exit(__doc__)
trees = sys.argv[1:3]; targets = [a.split(":") for a in sys.argv[3:]]
rounds = int(os.environ.get("ROUNDS", 20))
en = i18n.ui("en")
procs = [start(t) for t in trees]
try:
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        pages = []
        for (p, url) in procs:
            ctx, page, counter = bench_ui.new_page(b)
            runs_of(page).reset(); page.goto(f"{url}/?lang=en")
            expect(bench_ui.title_of(page, en, "numbers")).to_be_visible(timeout=300000); settle(page, 120000)
            pages.append((page, counter))
        for lesson, key in targets:
            ws = []
            for page, counter in pages:
                if lesson != "numbers":
                    bench_ui.switch(page, en, lesson, counter); time.sleep(1); settle(page, 120000)
                ws.append(bench_ui.Widget(lesson, key))
            for r in range(rounds):
                for (page, counter), w in zip(pages, ws):
                    n = len(w.ms); bench_ui.move(page, w, n + 1, counter)
            for tree, w in zip(trees, ws):
                s = sorted(w.ms)
                print(f"{key:22s} {tree:12s} n={len(s)} p50 {bench_ui.pct(s, .5):5.0f} p95 {bench_ui.pct(s, .95):5.0f} mean {statistics.mean(s):5.0f} {w.note}")
        b.close()
finally:
    for p, _ in procs: stop_process(p)
