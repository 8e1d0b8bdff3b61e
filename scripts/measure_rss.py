"""Measure one server's memory the way the deployment files size it: real server, real browser.

Starts `streamlit run app.py` on a free loopback port, opens it in Debian's Chromium (Playwright),
waits until the first run is over (the model is loaded), and reads VmRSS and VmHWM (peak) of the
server process from /proc/<pid>/status. Then the learner walks every lesson of the path through the
sidebar (one browser session, the default text) and the figures are read again.

    .venv/bin/python scripts/measure_rss.py            # prints a small table
    .venv/bin/python scripts/measure_rss.py --lessons 0 # only the first page

Deliberately left out: many learners and long texts (the classroom load driver and memory
benchmark measure those; the cache is bounded by ITT_CACHE_BUDGET_MB there).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def status_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of a process, in MB (from /proc/<pid>/status, values in kB)."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(page, timeout_ms: int = 180_000) -> None:
    page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]', timeout=timeout_ms)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=timeout_ms)
    page.locator("h1").first.wait_for(timeout=timeout_ms)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lessons", type=int, default=8, help="lessons to walk after the first page")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    from ui.shell.nav import LESSONS

    port = free_port()
    exe = Path(sys.executable).with_name("streamlit")
    proc = subprocess.Popen([str(exe), "run", "app.py", "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true"],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = []
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("the server did not start")
                time.sleep(0.2)
        rows.append(("server started, no learner yet", status_mb(proc.pid)))
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{url}/?lang=en")
            wait_ready(page)
            rows.append(("first page open (model loaded)", status_mb(proc.pid)))
            walked = LESSONS[1:args.lessons]
            for lesson in walked:
                page.locator(f'[data-testid="stSidebarNavLink"][href$="/{lesson.id}"]').first.click()
                page.wait_for_url(f"**/{lesson.id}*")
                wait_ready(page)
            if walked:
                rows.append((f"after walking {len(walked) + 1} lessons", status_mb(proc.pid)))
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    print(f"{'moment':40s} {'VmRSS MB':>9s} {'VmHWM MB':>9s}")
    for name, m in rows:
        print(f"{name:40s} {m['VmRSS']:9.0f} {m['VmHWM']:9.0f}")


if __name__ == "__main__":
    os.chdir(REPO)
    sys.path.insert(0, str(REPO))
    main()
