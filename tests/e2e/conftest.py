"""Browser tests: the real app in Debian's Chromium, driven by Playwright, with no internet.

Fixtures
- `app_url` (session): starts `streamlit run app.py` from the repo root on a free
  port (so the repo's .streamlit/config.toml applies), waits for /_stcore/health,
  yields "http://127.0.0.1:<port>", stops the server at the end. E2E_APP=path
  serves another script instead (to try the harness on a small app).
- `browser` (session): Chromium from /usr/bin/chromium, headless. Missing: skip,
  or fail when CI=true (browser tests must run on CI).
- `page`: a fresh context and page. Every request to a host other than
  127.0.0.1/localhost is aborted and recorded; a test that attempted any fails,
  listing them (the classroom has no internet: a CDN left anywhere shows here).

Helpers
- `serve(script, cwd=REPO)`: context manager, the same server for any script
  (a test can serve a small app it writes to tmp_path).
- `wait_for_app(page, text=None)`: waits until Streamlit's script run is over
  (`data-test-script-state="notRunning"`, connection CONNECTED), then for `text`.
- `save_screenshot(page, path=docs/screenshot.png)`: the README's picture.

Usage:
    @pytest.mark.e2e
    def test_home(page, app_url):
        page.goto(app_url)
        wait_for_app(page, "Inside the Transformer")
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    # Containers often have a 64 MB /dev/shm, too small for big pages.
    "--disable-dev-shm-usage",
]
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
DOCS_SCREENSHOT = REPO / "docs" / "screenshot.png"
SERVER_START_TIMEOUT_S = 90
APP_TIMEOUT_MS = 120_000  # the first run may load the model


# --- server ----------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _streamlit() -> list[str]:
    exe = Path(sys.executable).with_name("streamlit")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "streamlit"]


@contextlib.contextmanager
def serve(script: Path, cwd: Path = REPO) -> Iterator[str]:
    """Run `streamlit run script` from `cwd` on a free port; yield its base URL.

    Streamlit reads .streamlit/config.toml from the working directory, so with
    the default cwd the app runs with the repo's config (static serving on).
    Static files are served from the `static/` folder next to `script`.
    """
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    log = tempfile.NamedTemporaryFile("w+", prefix="streamlit-e2e-", suffix=".log", delete=False)
    proc = subprocess.Popen(
        [*_streamlit(), "run", str(script),
         "--server.port", str(port), "--server.address", "127.0.0.1",
         "--server.headless", "true", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
    )

    def server_log() -> str:
        log.flush()
        return Path(log.name).read_text(errors="replace")[-4000:]

    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}:\n{server_log()}", pytrace=False)
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit not healthy after {SERVER_START_TIMEOUT_S}s:\n{server_log()}",
                            pytrace=False)
            time.sleep(0.2)  # polling a server that is starting, not waiting on the page
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        os.unlink(log.name)


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    app = Path(os.environ.get("E2E_APP", REPO / "app.py"))
    if not app.exists():
        pytest.fail(f"{app} is missing", pytrace=False)
    with serve(app) as url:
        yield url


# --- browser ---------------------------------------------------------------------

@pytest.fixture(scope="session")
def browser():
    if not (os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        reason = (f"{CHROMIUM} not found: run `make test` (installs Debian's chromium as root) "
                  "or `apt-get install chromium fonts-noto-color-emoji`")
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def _is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss"):
        return True  # data:, blob:, about: never leave the machine
    return (parts.hostname or "") in LOCAL_HOSTS


@pytest.fixture
def page(browser, request):
    """A page whose requests outside this machine are aborted and fail the test."""
    external: list[str] = []
    request.node.external_requests = external
    # No service workers: their fetches would bypass the routing below.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")

    def guard(route):
        if _is_local(route.request.url):
            route.continue_()
        else:
            external.append(f"{route.request.method} {route.request.url}")
            route.abort("blockedbyclient")

    context.route("**/*", guard)
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    # Checked right after the test body, so the test itself is reported FAILED
    # (a fixture teardown could only report an ERROR).
    result = yield
    external = getattr(item, "external_requests", None)
    if external:
        listing = "\n  ".join(dict.fromkeys(external))
        pytest.fail(f"the page tried to reach outside this machine ({len(external)} "
                    f"request(s), all blocked):\n  {listing}", pytrace=False)
    return result


# --- helpers ---------------------------------------------------------------------

def wait_for_app(page, text: str | None = None, timeout: int = APP_TIMEOUT_MS) -> None:
    """Wait until Streamlit has finished running the script, then for `text`.

    The root element carries data-test-script-state: "initial" before the first
    run, then "running" / "rerunRequested" / "notRunning" (values checked in the
    Streamlit 1.67 frontend bundle). After a click, wait for the text the click
    should bring: the state may still read "notRunning" before the rerun starts.
    """
    from playwright.sync_api import expect

    page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]',
                           timeout=timeout)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=timeout)
    if text is not None:
        expect(page.get_by_text(text).first).to_be_visible(timeout=timeout)


def save_screenshot(page, path: Path = DOCS_SCREENSHOT) -> Path:
    """Save what the page shows (the README's picture by default)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    return path


def link_static(app_dir: Path) -> None:
    """Give an app written in `app_dir` the repo's static/ (vendored JS)."""
    target = app_dir / "static"
    if not target.exists():
        try:
            target.symlink_to(REPO / "static", target_is_directory=True)
        except OSError:
            shutil.copytree(REPO / "static", target)


def press_until(page, target, key: str, shown, attempts: int = 3, attached: bool = False) -> None:
    """Focus `target`, press `key` until the locator `shown` is visible (an idempotent key only).

    On a loaded machine a key press that lands while Streamlit redraws the widget can be lost;
    a learner would press again, and so does this helper. The final expectation is the usual one.
    """
    from playwright.sync_api import expect

    def check(timeout: int) -> None:
        (expect(shown).to_be_attached if attached else expect(shown).to_be_visible)(timeout=timeout)

    for _ in range(attempts):
        target.scroll_into_view_if_needed()
        target.focus()
        page.keyboard.press(key)
        try:
            check(20_000)
            return
        except AssertionError:
            wait_for_app(page)
    check(APP_TIMEOUT_MS)
