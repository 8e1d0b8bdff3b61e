"""Driving the real app in Debian's Chromium with Playwright: the helpers the browser tests
(tests/e2e/) and the browser benchmarks (scripts/bench_ui.py, bench_ab.py, screenshot_dashboard.py)
share. The pytest fixtures built on them (`app_url`, `browser`, `page`, `italian_walk`) live in
tests/e2e/conftest.py.

Server
- `serve(script, cwd=REPO, port=None)`: context manager, the same server for any script
  (a test can serve a small app it writes to tmp_path); raises RuntimeError when the server
  exits or is not healthy within SERVER_START_TIMEOUT_S.
- `healthy(url)`, `stop_process(proc)`, `_free_port()`.

Pages
- `offline_page(browser, request, external)`: a tracked page whose requests outside this machine
  are aborted and recorded (a test that attempted any fails, see tests/e2e/conftest.py);
  `offline_context(browser, external)`: the same rule for a context a test opens itself.
- `AppRuns` / `track(page)`: reads Streamlit's websocket (BackMsg rerun requests,
  ForwardMsg new_session / script_finished with their run ids), so a caller knows
  when an input reached the server and when the run it caused is over.
- `settle(page)`: the app has settled (no run going or owed since the last
  input; the DOM says CONNECTED and notRunning; with `sections=True`, as before every input, no
  section about to ask for its own run).
- `goto`, `click`, `press`, `slide`, `type_text`: settle, check the target is
  attached, visible, enabled and still (nothing around it animating), send, check the
  value shows in the DOM, then wait until the browser sent the rerun (for a click at
  coordinates, the request carrying the click: `sends=selects(...)`) and its run started and ended.
  None sleeps a fixed time.
- `wait_for_app(page, text=None)`: settle, then wait for `text`.
- `share_link(page, label, carries)`: the share dialog's link, once it carries what the page's views
  hold (finished in the browser); `views_fit(page)`: no chart, table or chips of a browser view
  reaches past the window (after it narrowed).
- `save_screenshot(page, name, tmp_path)`: a picture for docs/ (the README's, the hub's bar), saved
  in the test's own folder; UPDATE_SCREENSHOT=1 saves it in docs/ instead, to refresh the pictures.

Usage (in a test, with the fixtures of tests/e2e/conftest.py):
    @pytest.mark.e2e
    def test_home(page, app_url):
        goto(page, app_url, "Inside the Transformer")
        slide(page, page.get_by_role("slider").first, "End", "29")
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "deploy" / "nginx"))
import render  # noqa: E402  (deploy/nginx/render.py: the one health probe of the course's servers)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    # Containers often have a 64 MB /dev/shm, too small for big pages.
    "--disable-dev-shm-usage",
]
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
DOCS = REPO / "docs"
SERVER_START_TIMEOUT_S = 90
APP_TIMEOUT_MS = 60_000  # one run of a page, on a loaded 2-core machine
SERVER_WARM_TIMEOUT_MS = 240_000  # the first open of a server: model load (conversion on a cold cache) and capture


# --- server ----------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _streamlit() -> list[str]:
    exe = Path(sys.executable).with_name("streamlit")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "streamlit"]


def healthy(url: str) -> bool:
    """The Streamlit server at `url` answers its health check (deploy/nginx/render.py's probe)."""
    return render.healthy(url)


def stop_process(proc: subprocess.Popen) -> None:
    """Terminate a server process, killing it if it has not exited within 15 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def serve(script: Path, cwd: Path = REPO, port: int | None = None) -> Iterator[str]:
    """Run `streamlit run script` from `cwd` on `port` (default: a free one); yield its base URL.

    A fixed port restarts a server at the same origin (the browser's local storage is per origin).

    Streamlit reads .streamlit/config.toml from the working directory, so with
    the default cwd the app runs with the repo's config (static serving on).
    Static files are served from the `static/` folder next to `script`.
    """
    port = port or _free_port()
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
                raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{server_log()}")
            if healthy(url):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit not healthy after {SERVER_START_TIMEOUT_S}s:\n{server_log()}")
            time.sleep(0.2)  # polling a server that is starting, not waiting on the page
        yield url
    finally:
        stop_process(proc)
        log.close()
        os.unlink(log.name)


# --- browser ---------------------------------------------------------------------

def _is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss"):
        return True  # data:, blob:, about: never leave the machine
    return (parts.hostname or "") in LOCAL_HOSTS


def offline_context(browser, external: list[str], **context_options):
    """A new browser context (`context_options`: viewport, touch...) whose requests outside this
    machine are aborted and appended to `external` ("GET https://..."): a test asserts it stays empty.
    The caller closes it."""
    # No service workers: their fetches would bypass the routing below.
    context = browser.new_context(service_workers="block", **context_options)

    def guard(route):
        if _is_local(route.request.url):
            route.continue_()
        else:
            external.append(f"{route.request.method} {route.request.url}")
            route.abort("blockedbyclient")

    context.route("**/*", guard)
    return context


@contextlib.contextmanager
def offline_page(browser, request, external: list[str] | None = None, **context_options) -> Iterator:
    """A tracked page in a new browser context (`context_options`: viewport, touch...) whose requests
    outside this machine are aborted and fail the test (the hook in tests/e2e/conftest.py).

    `request` None (a page shared by several tests, see `italian_walk`): the requests are only
    appended to `external`, and each test reading that page hands the list to the hook itself.
    """
    external = [] if external is None else external
    if request is not None:
        request.node.external_requests = external
    context = offline_context(browser, external, **context_options)
    pg = context.new_page()
    track(pg)
    try:
        yield pg
    finally:
        context.close()


@contextlib.contextmanager
def learner_pages(browser, n: int, viewport: tuple[int, int] = (1280, 900)) -> Iterator[list]:
    """`n` tracked pages, each in a browser context of its own (`n` learners, nothing shared between
    them), closed at the end."""
    width, height = viewport
    contexts = [browser.new_context(viewport={"width": width, "height": height}, service_workers="block")
                for _ in range(n)]
    try:
        pages = [c.new_page() for c in contexts]
        for pg in pages:
            track(pg)
        yield pages
    finally:
        for c in contexts:
            c.close()


# --- script runs, as the websocket tells them ---------------------------------------

class AppRuns:
    """What Streamlit's own websocket says about one page's script runs.

    The browser sends a `BackMsg.rerun_script` for every input Streamlit acts on (a widget's new
    value, a click, a page link, a fragment's timer); the server answers each run with a
    `ForwardMsg.new_session` when it starts and a `script_finished` when it ends, both tagged with
    the run's id. Reading those frames (Playwright sees every websocket frame) tells a test, with
    no guessing and no sleep, that an input reached the server and that the run it caused is over.

    The page is *settled* when at least one run has ended, no run is going, the last finish was
    not "stopped early for a rerun" (another run follows it), and every rerun the browser sent for
    an input was followed by the start of a run. A fragment's timer (`run_every`, sent with
    `is_auto_rerun`) is not an input: while an animation plays, runs follow each other with no
    gap, so `quiet` latches the first settled moment after the last input.
    """

    def __init__(self, page) -> None:
        self.page = page
        self.ws = None
        self.sent = 0          # rerun requests the browser sent, on every connection
        self.started = 0
        self.finished = 0
        self._tick = 0         # a clock over sent/start/finish events
        self._last_sent = -1
        self._last_start = -1
        self._running: set[str] = set()
        self._last_status: int | None = None
        self.quiet = False     # settled at some moment since the last input (latched)
        self.history: list[str] = []  # the last events, for a failure message
        self.requests: list[dict] = []  # per rerun request sent (as `sent` counts them): widget id -> value
        page.on("websocket", self._attach)

    # -- frames
    def _attach(self, ws) -> None:
        if "/_stcore/stream" not in ws.url:
            return
        self.ws = ws
        self._running.clear()  # a new connection: the server tells everything again
        self._note(f"connect {ws.url}")
        ws.on("framesent", self._on_sent)
        ws.on("framereceived", self._on_received)
        ws.on("close", lambda _ws: self._note("close"))

    def _note(self, event: str) -> None:
        self._tick += 1
        self.history.append(f"{self._tick}:{event}")
        del self.history[:-30]

    def _on_sent(self, payload) -> None:
        if isinstance(payload, str):
            return
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg.FromString(payload)
        if msg.WhichOneof("type") == "rerun_script":
            if msg.rerun_script.is_auto_rerun:
                # A fragment's own timer (run_every), not an input: it never holds the app
                # unsettled, or a playing animation would never let a test act.
                self._note("auto rerun requested")
                return
            self.sent += 1
            self.requests.append({w.id: getattr(w, w.WhichOneof("value")) if w.WhichOneof("value") else None
                                  for w in msg.rerun_script.widget_states.widgets})
            self.quiet = False
            self._note("rerun requested" + (" (fragment)" if msg.rerun_script.fragment_id else "")
                       + f" page {msg.rerun_script.page_script_hash[:6] or '-'}")
            self._last_sent = self._tick

    def _on_received(self, payload) -> None:
        if isinstance(payload, str):
            return
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = ForwardMsg.FromString(payload)
        kind = msg.WhichOneof("type")
        run = msg.metadata.run.script_run_id
        if kind == "new_session":
            self.started += 1
            # One run at a time per session: a start ends any run before it, even one whose
            # finish the server never sends (a ScriptRunner replaced mid-run stays silent).
            self._running = {run}
            self._note(f"start {run[:8]} page {msg.new_session.page_script_hash[:6]}"
                       + (" (fragment)" if msg.metadata.run.fragment_ids else ""))
            self._last_start = self._tick
        elif kind == "script_finished":
            self.finished += 1
            if run:
                self._running.discard(run)
            else:
                self._running.clear()  # an error ends whatever ran, with no id
            self._last_status = msg.script_finished
            self._note(f"finish {run[:8]} {ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)}")
            if self.settled():
                self.quiet = True  # latched: seen settled since the last input

    # -- state
    def settled(self) -> bool:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        return (self.finished > 0 and not self._running
                and self._last_status != ForwardMsg.FINISHED_EARLY_FOR_RERUN
                and self._last_start > self._last_sent)

    def reset(self) -> None:
        """Forget the runs seen so far (before a navigation: the next page must run afresh)."""
        self.finished = 0
        self._running.clear()
        self._last_status = None
        self.quiet = False
        self._note("reset")

    def mark(self) -> int:
        return self.sent

    def wait(self, condition, timeout_ms: int, what: str) -> None:
        """Process Playwright's events until `condition()` holds; fail with the event log."""
        from playwright.sync_api import Error, TimeoutError as PwTimeout

        deadline = time.monotonic() + timeout_ms / 1000
        while not condition():
            remaining_ms = (deadline - time.monotonic()) * 1000
            if remaining_ms <= 0:
                raise AssertionError(f"{what}: not seen in {timeout_ms} ms; last events:\n  "
                                     + "\n  ".join(self.history))
            # Return at the next frame (or after a bounded wait, to check again): this waits on
            # the page's own traffic, it does not sleep a guessed time.
            step = min(remaining_ms, 1_000)
            try:
                if self.ws is not None and not self.ws.is_closed():
                    self.ws.wait_for_event("framereceived", timeout=step)
                else:
                    self.page.wait_for_event("websocket", timeout=step)
            except (PwTimeout, Error):
                pass


_RUNS: dict[int, AppRuns] = {}


def track(page) -> AppRuns:
    """Start reading `page`'s Streamlit traffic; call before the page opens the app."""
    runs = _RUNS.get(id(page))
    if runs is None or runs.page is not page:
        runs = _RUNS[id(page)] = AppRuns(page)
    return runs


def runs_of(page) -> AppRuns:
    runs = _RUNS.get(id(page))
    if runs is None or runs.page is not page:
        raise RuntimeError("this page is not tracked: open it with the `page` fixture or call track(page) "
                           "before page.goto")
    return runs


# --- helpers: every input goes through these ----------------------------------------

# Every chart: st.plotly_chart's, and ui.views.live_chart's (updated in place); each holds a .js-plotly-plot.
CHARTS = '[data-testid="stPlotlyChart"], [data-testid="ittLiveChart"]'


# Two animation frames: what the last change moved has been laid out, and the intersection
# observers (ui/views/follow.py's followers) have been told what came into sight.
# Two frames, or 5 s at most: a page the browser stops drawing (a renderer that froze, a tab it
# throttles) gives no frame, and Playwright's evaluate has no timeout of its own.
_FRAMES = """() => new Promise(r => {
  requestAnimationFrame(() => requestAnimationFrame(() => r(true)));
  setTimeout(() => r(false), 5000);
})"""


def frames(page) -> bool:
    """Wait for the page's next two frames (False: none came in 5 s)."""
    return page.evaluate(_FRAMES)
# No follower (ui/views/follow.py) is about to ask for its section's rerun (it waits 250 ms after coming
# into sight) or has asked with no run seen since.
_FOLLOWERS_IDLE = """() => !(window.__ittAskedAt && Date.now() - window.__ittAskedAt < 2000)
  && ![...document.querySelectorAll('div.itt-follow')].some(b => b.__ittWaiting)"""


def settle(page, timeout: int = APP_TIMEOUT_MS, sections: bool = False) -> None:
    """Wait until the app has settled: connected, no script run going or owed, drawn as such, and no
    section about to ask for a run of its own.

    The websocket says when the last run ended (see AppRuns); the DOM must agree (the root
    element's data-test-script-state is "notRunning", its connection "CONNECTED"). A section that
    follows a choice, or is worked out when reached (ui/views/follow.py), asks for its own rerun a
    moment after it comes into sight: an input sent in that moment would race that run (a click
    landing on a page redrawn under it, or a run taken for the input's). Settled means none is
    waiting to ask, after the frames that let them see what is in sight; when one asks, its run
    is waited for too: with `sections=True`, as every input sent through `_send` does. By default
    the websocket and the DOM only, as before (what the walk through every page, tests/e2e/walk.py,
    and the browser benchmark, scripts/bench_ui.py, were measured with).
    """
    runs = runs_of(page)
    deadline = time.monotonic() + timeout / 1000
    while True:
        left = max(1, int((deadline - time.monotonic()) * 1000))
        runs.wait(lambda: runs.quiet, left, "the app settling (the input's run started and ended)")
        if not sections:
            break
        before = runs.mark()
        frames(page)
        page.wait_for_function(_FOLLOWERS_IDLE, polling="raf", timeout=left)
        if runs.sent == before and runs.quiet:
            break
    state = '[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
    if runs.settled():  # nothing going: the page must show it (a ticking fragment may not pause)
        state += '[data-test-script-state="notRunning"]'
    page.wait_for_selector(state, timeout=timeout)


def wait_for_app(page, text: str | None = None, timeout: int = APP_TIMEOUT_MS) -> None:
    """Settle (see `settle`), then wait for `text` to be visible."""
    from playwright.sync_api import expect

    settle(page, timeout)
    if text is not None:
        expect(page.get_by_text(text).first).to_be_visible(timeout=timeout)


def _send(page, target, action, shows=None, rerun: bool = True, sends=None,
          timeout: int = APP_TIMEOUT_MS) -> None:
    """The one way a test sends an input.

    Before: `target` is attached and scrolled into view, then the app has settled (see `settle`:
    a section the scroll brought into sight has had its own run) and `target` is visible and
    enabled (an input sent during a redraw can land on an element about to be replaced). After:
    `shows()` checks the input is in the DOM (the widget's new value), then Streamlit is seen to
    receive it: the browser sent a rerun request (`sends`: one whose widget states, {widget id:
    value}, satisfy `sends(states)`, not any request), a run started after it, and every run has
    ended.
    """
    from playwright.sync_api import expect

    runs = runs_of(page)
    expect(target).to_be_attached(timeout=timeout)
    _still(page, target, timeout, sized=False)
    target.evaluate(_LET_GO)
    target.scroll_into_view_if_needed(timeout=timeout)
    settle(page, timeout, sections=True)
    expect(target).to_be_visible(timeout=timeout)
    expect(target).to_be_enabled(timeout=timeout)
    _still(page, target, timeout)
    before = runs.mark()
    action()
    if shows is not None:
        shows()
    if sends is not None:
        runs.wait(lambda: any(sends(states) for states in runs.requests[before:]), timeout,
                  "the browser sending this input to Streamlit (a request carrying it)")
        settle(page, timeout, sections=True)
    elif rerun:
        runs.wait(lambda: runs.sent > before, timeout, "the browser sending the input to Streamlit")
        settle(page, timeout, sections=True)


def selects(key: str, check) -> Callable[[dict], bool]:
    """For `click(sends=...)`: the request carries the selection of the chart with widget key `key`
    (st.plotly_chart's `on_select`), and `check(points)` holds for its selected points.

    Example: click(page, marker, at_center=True, sends=selects("attention.overview",
                   lambda points: [p["customdata"][:2] for p in points] == [[2, 7]]))
    """
    import json

    def sent(states: dict) -> bool:
        for wid, value in states.items():
            if wid.endswith(f"-{key}") and isinstance(value, str):
                try:
                    points = json.loads(value).get("selection", {}).get("points", [])
                except (ValueError, AttributeError):
                    continue
                if points and check(points):
                    return True
        return False

    return sent


# True on the second of two animation frames in a row where the element's box is the same and
# nothing around it is animating (an expander opening, closing, or following its content's height:
# Streamlit animates a <details>'s height for half a second). A detached element is left to the
# action, which finds the element anew.
_STILL = """([e, sized]) => {
  if (!e.isConnected) return true;
  for (let n = e; n; n = n.parentElement) {
    if (n.getAnimations().some(a => a.playState === 'running'
        && isFinite(a.effect.getComputedTiming().endTime))) { e.__ittBox = undefined; return false; }
  }
  const r = e.getBoundingClientRect(); const k = [r.x, r.y, r.width, r.height].join();
  const same = e.__ittBox === k; e.__ittBox = k; return same && (!sized || (r.width > 0 && r.height > 0)); }"""
# The box being typed in, when it is in a form and is not the target: it lets go of the focus first.
# A form's text box commits its text when it loses the focus (as when the learner presses the
# form's button) and its "Press Enter to submit form" line goes, which makes the expander around it
# follow the new height: that happens now, before the button's place is taken, not between the
# press and the release of the click (where it moved the button away from under the pointer).
_LET_GO = """(e) => { const a = document.activeElement;
  if (a && a !== e && a.closest('[data-testid="stForm"]') && /^(INPUT|TEXTAREA)$/.test(a.tagName)) a.blur(); }"""


def _still(page, target, timeout: int, sized: bool = True) -> None:
    """Wait until `target` has stayed in place for two frames, with nothing around it animating
    (`sized`: and it has a size, so it is drawn)."""
    page.wait_for_function(_STILL, arg=[target.element_handle(timeout=timeout), sized], polling="raf",
                           timeout=timeout)


def loose(text: str) -> re.Pattern:
    """`text` as a pattern that also matches it wrapped over lines: a chart title broken at spaces to
    the chart's width (ui.views.figures.wrap) reads in the page's text with its lines run together.

    Example: loose("every layer and position") matches "every layerand position"
    """
    return re.compile(r"\s*".join(re.escape(word) for word in text.split()))


def click(page, target, rerun: bool = True, at_center: bool = False, sends=None,
          timeout: int = APP_TIMEOUT_MS) -> None:
    """Click `target` once the app has settled; wait for the run the click causes.

    `at_center`: click the page at the element's centre (for chart markers under plotly's drag
    layer, which a plain element click would find covered); like every input, it is sent once the
    element has stayed in place for two frames (see `_send`).
    `sends`: what the browser's request must carry (see `_send`, `selects`); a click at
    coordinates that missed would otherwise pass on any section's rerun. `rerun=False` for clicks
    Streamlit does not hear (a tab).
    """
    def action() -> None:
        if at_center:
            box = target.bounding_box()
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        else:
            target.click(timeout=timeout)

    _send(page, target, action, rerun=rerun, sends=sends, timeout=timeout)


def _value_is(target, value: str, timeout: int) -> None:
    """`target` shows `value`: an input's value, or a slider's aria-valuetext (a select slider's
    label, such as "16K") or aria-valuenow."""
    target.page.wait_for_function(
        "([e, v]) => e.isConnected && (e.value === v || e.getAttribute('aria-valuetext') === v"
        " || e.getAttribute('aria-valuenow') === v)",
        arg=[target.element_handle(timeout=timeout), value], timeout=timeout)


def press(page, target, key: str, value: str | None = None, rerun: bool = True,
          timeout: int = APP_TIMEOUT_MS) -> None:
    """Focus `target`, press `key`; `value`: what the widget must then show (a slider's number)."""
    def action() -> None:
        target.focus(timeout=timeout)
        page.keyboard.press(key)

    shows = (lambda: _value_is(target, value, timeout)) if value is not None else None
    _send(page, target, action, shows=shows, rerun=rerun, timeout=timeout)


def slide(page, slider, key: str, value: str, timeout: int = APP_TIMEOUT_MS) -> None:
    """Move a slider by one key press (ArrowRight, Home, End...) to `value`, acknowledged."""
    press(page, slider, key, value=value, timeout=timeout)


def type_text(page, target, text: str, submit: str | None = "Enter", timeout: int = APP_TIMEOUT_MS) -> None:
    """Replace the text of an input or text area, then submit it with the key `submit`
    (`Enter`, `Control+Enter`), acknowledged as any input. The text is checked in the box first.

    `submit=None`: only fill the box (an input inside a form, sent by the form's button).
    """
    from playwright.sync_api import expect

    settle(page, timeout)
    expect(target).to_be_editable(timeout=timeout)
    target.fill(text, timeout=timeout)
    expect(target).to_have_value(text, timeout=timeout)
    if submit is not None:
        press(page, target, submit, value=None, timeout=timeout)
        expect(target).to_have_value(text, timeout=timeout)


def goto(page, url: str, text: str | None = None, timeout: int = APP_TIMEOUT_MS) -> None:
    """Open `url` and wait until its first run is over (and `text` shows)."""
    runs_of(page).reset()
    page.goto(url)
    wait_for_app(page, text, timeout)
    # A new session of app.py asks the browser once for the progress it kept (ui/learner/persist.py), and
    # that answer reruns the script: wait for it, or the test's first input races that rerun
    # (a lesson link clicked then was undone by it). The component marks the page when done.
    if page.locator('[data-testid="stSidebarNav"]').count():
        page.wait_for_function("document.documentElement.dataset.ittProgress === 'ready'",
                               timeout=timeout)
        settle(page, timeout)


def share_link(page, label: str, carries: str, timeout: int = APP_TIMEOUT_MS) -> str:
    """Open the share dialog by its button `label`, wait until its link (finished in the browser by
    static/views/link.js with what only the views know) matches the pattern `carries`, close the
    dialog; return the link.

    Example: link = share_link(page, en["share.button"], r"temperature=2(&|$)")
    """
    from playwright.sync_api import expect

    click(page, page.get_by_role("button", name=label))
    url = page.locator('[data-testid="app.share.url"]')
    expect(url).to_have_value(re.compile(carries), timeout=timeout)
    link = url.input_value()
    page.keyboard.press("Escape")
    expect(url).to_have_count(0)
    return link


# Whatever of a browser view is wider than the window: its charts redraw at the window's width, its
# tables scroll inside their own box, its chips wrap.
_TOO_WIDE = """() => {
  const w = document.documentElement.clientWidth;
  const out = [];
  for (const v of document.querySelectorAll('[data-testid="ittView"]')) {
    for (const e of [v, ...v.querySelectorAll('.itt-chart svg.main-svg, .itt-table-box, .tok-chips')]) {
      const r = e.getBoundingClientRect();
      if (r.width > 0 && r.right > w + 1) out.push(`${v.dataset.view} ${e.className.baseVal ?? e.className} ${Math.round(r.right)} > ${w}`);
    }
  }
  return out;
}"""


def views_fit(page, timeout: int = 10_000) -> None:
    """Wait until no browser view, nor any chart, table box or chips in one, reaches past the
    window's right edge (after the window narrowed, the charts redraw); fail naming what does."""
    from playwright.sync_api import TimeoutError as PwTimeout

    try:
        page.wait_for_function(f"() => ({_TOO_WIDE})().length === 0", timeout=timeout)
    except PwTimeout:
        raise AssertionError(f"wider than the window: {page.evaluate(_TOO_WIDE)}") from None


def save_screenshot(page, name: str, tmp_path: Path) -> Path:
    """Save what the page shows as `name`, a picture of docs/ (e.g. "screenshot.png", the README's).

    Saved in the test's `tmp_path`: a test run never rewrites docs/, and tests running side by side
    (xdist's workers) never write the same file. UPDATE_SCREENSHOT=1 saves it in docs/ itself, for
    the run that refreshes the pictures (`UPDATE_SCREENSHOT=1 pytest -n 0` on the tests that take them).
    """
    folder = DOCS if os.environ.get("UPDATE_SCREENSHOT") == "1" else tmp_path
    path = folder / name
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
