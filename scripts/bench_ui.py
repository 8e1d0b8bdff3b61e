"""How fast the app answers in the real browser: lesson switches, widget moves, bytes sent.

Starts `streamlit run app.py` on a free port, warms it (the model, and one visit of every lesson
so the default text's captures and cached results exist: a warm server), then one learner in
Debian's Chromium (Playwright):
- opens the app: time to the first lesson's title, and until the run is over;
- switches to each lesson from the sidebar: time to the lesson's title (first screen) and until
  the page has settled; bytes the server sent over the websocket for it;
- moves each view-only widget one step, `--moves` times (up, down, up...: a slider's arrow keys,
  a number input's + and - buttons, a select box's next option): p50/p95 of the
  time from the key press until the run it caused is over and the page is drawn as not running,
  and the bytes sent per move. A widget in a section computed when reached is moved after the page
  has been scrolled down to its end, as a learner reading on would.

"Over" is what Streamlit's websocket says (drivers/browser.py's AppRuns: the rerun request,
then the start and finish of its run), then the DOM's script state "notRunning": the learner's
wait, not the script's time. It prints a markdown table with PASS/MISS against the speed goals
(widget <= 300 ms p95, switch first screen <= 1.5 s and settled <= 3 s, open <= 5 s). A
benchmark, not a test: numbers vary with the machine's load; run it on a quiet machine.

Run: .venv/bin/python scripts/bench_ui.py [--lessons attention,block] [--moves 20] [--sweep]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lib.course import i18n  # noqa: E402
from drivers.axe import scroll_to_end  # noqa: E402
from drivers.browser import (  # noqa: E402
    CHROMIUM, CHROMIUM_ARGS, SERVER_WARM_TIMEOUT_MS, runs_of, serve, settle, track,
)

GOAL_MOVE_MS = 300
GOAL_SWITCH_FIRST_MS = 1500
GOAL_SWITCH_SETTLED_MS = 3000
GOAL_OPEN_MS = 5000
TIMEOUT_MS = 120_000

LESSONS = ("numbers", "tokenization", "embeddings", "position", "attention", "block", "sampling", "kvcache")


@dataclass(frozen=True)
class Spec:
    """A view-only widget: its key, how a learner moves it one step, and what must be done first.

    kind "slider": a slider or select slider, moved with the arrow keys; "number": a number input,
    its + and - buttons; "select": a select box, the next or previous option clicked in its list.
    `prepare`: a button clicked once before the moves (the generation whose steps the slider reads).
    """
    key: str
    kind: str = "slider"
    prepare: str = ""


# The view-only widgets of each lesson.
WIDGETS: dict[str, tuple[Spec, ...]] = {
    "numbers": (Spec("numbers.layer"),),
    # The merge steps, play, the target size, raw/ids and the paragraph are the browser views' (no run).
    "tokenization": (),
    "embeddings": (Spec("embeddings.dims"), Spec("embeddings.k"), Spec("embeddings.depth")),
    # m, the pair, n, k, the shift, the live head, pair and vectors are the browser view's (no run); the
    # layer sends its own vectors.
    "position": (Spec("position.layer"),),
    "attention": tuple(Spec(k) for k in ("attention.layer", "attention.head", "attention.dh", "attention.block",
                                         "attention.step")),
    # The norm's token, the token of the contributions and the lens's layer and position are the
    # browser views' (no run); the norm's and the MLP's layers are the server's.
    "block": (Spec("block.norm_layer"), Spec("block.mlp_layer")),
    "sampling": (Spec("sampling.temperature"), Spec("sampling.top_k", "number"), Spec("sampling.top_p"),
                 Spec("sampling.seed", "number"), Spec("sampling.gen_step", prepare="sampling.generate")),
    # The calculator, the variants, training, serving and the experts are the browser view's (no run).
    "kvcache": (),
}


@dataclass
class Bytes:
    """Bytes of the websocket frames the server sent to this page."""
    total: int = 0

    def attach(self, page) -> None:
        def on_ws(ws) -> None:
            if "/_stcore/stream" in ws.url:
                ws.on("framereceived", self._add)
        page.on("websocket", on_ws)

    def _add(self, payload) -> None:
        self.total += len(payload) if payload is not None else 0


@dataclass
class Widget:
    lesson: str
    spec: Spec
    ms: list[float] = field(default_factory=list)
    bytes: list[int] = field(default_factory=list)
    note: str = ""


def pct(values: list[float], q: float) -> float:
    """The q-quantile, nearest rank: the ceil(q * n)-th smallest. p95 of 20 moves is the 19th
    (the slowest but one), of 10 moves the slowest.

    Example: pct([5, 1, 4, 2, 3], 0.5) -> 3
    """
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s) - 1e-9) - 1))]


def until_settled(page) -> None:
    settle(page, TIMEOUT_MS)


def title_of(page, en: dict, lesson: str):
    return page.locator("h1", has_text=en[f"lesson.{lesson}.title"]).first


def switch(page, en: dict, lesson: str, counter: Bytes) -> tuple[float, float, int]:
    """Click the lesson in the sidebar: (ms to its title, ms to settled, bytes)."""
    from playwright.sync_api import expect

    until_settled(page)
    link = page.locator('[data-testid="stSidebarNav"] a', has_text=en[f"lesson.{lesson}.title"]).first
    runs = runs_of(page)
    before_bytes, before = counter.total, runs.mark()
    t0 = time.perf_counter()
    link.click()
    expect(title_of(page, en, lesson)).to_be_visible(timeout=TIMEOUT_MS)
    first = time.perf_counter() - t0
    runs.wait(lambda: runs.sent > before, TIMEOUT_MS, "the switch's rerun")
    until_settled(page)
    settled = time.perf_counter() - t0
    return first * 1000, settled * 1000, counter.total - before_bytes


class Control:
    """One widget on the page, as the learner handles it: `value()` what it shows, `prepare(up)`
    what comes before the input (False at a bound), `step(up)` the input that moves it one step,
    `changed(before)` waits until it shows something else (the widget's own answer, before the
    server's)."""

    SHOWN_JS = {
        "slider": "e => `${e.getAttribute('aria-valuetext')}|${e.getAttribute('aria-valuenow')}`",
        "number": "e => e.value",
        "select": "e => e.value",  # the combo box's input shows the chosen option
    }

    def __init__(self, page, box, kind: str):
        self.page, self.box, self.kind = page, box, kind
        if kind == "slider":
            self.el = box.get_by_role("slider").first
        else:
            self.el = box.locator("input").first

    def value(self) -> str:
        return self.el.evaluate(self.SHOWN_JS[self.kind])

    def prepare(self, up: bool) -> bool:
        """Everything before the timed input, found out with as many round trips to the browser as
        it takes: the slider focused; the number input's button, or the select box's list opened
        (a click the browser answers alone, no server involved) and the row one step away, each
        at a point to click. False when the widget stands at a bound that way (nothing to do)."""
        self.point = None
        if self.kind == "slider":
            self.el.focus()
            return True
        if self.kind == "number":
            target = self.box.get_by_test_id("stNumberInputStepUp" if up else "stNumberInputStepDown")
            if target.is_disabled():
                return False
        else:  # Streamlit 1.67's select box: a react-aria combo box
            self.box.locator('button[aria-haspopup="listbox"]').click()
            self.page.get_by_role("option").first.wait_for(timeout=5_000)
            # The list is virtual (only the rows in its view exist); each row's data-key is its index.
            chosen = self.page.locator('[role="option"][aria-selected="true"]')
            i = int(chosen.first.get_attribute("data-key") or 0) + (1 if up else -1) if chosen.count() else 0
            target = self.page.locator(f'[role="option"][data-key="{i}"]')
            if target.count() == 0:
                self.page.keyboard.press("Escape")
                return False
            target = target.first
        target.scroll_into_view_if_needed()
        r = target.bounding_box()
        self.point = (r["x"] + r["width"] / 2, r["y"] + r["height"] / 2)
        return True

    def step(self, up: bool) -> None:
        """The timed input, one message to the browser: a key press on the slider, a click where
        `prepare` found the button or the row (Playwright's own click would put its checks of the
        element, several round trips, inside the time)."""
        if self.kind == "slider":
            self.page.keyboard.press("ArrowRight" if up else "ArrowLeft")
        else:
            self.page.mouse.click(*self.point)

    def changed(self, before: str) -> bool:
        try:
            self.page.wait_for_function(f"([e, v]) => ({self.SHOWN_JS[self.kind]})(e) !== v",
                                        arg=[self.el.element_handle(), before], timeout=2_000)
            return True
        except Exception:
            return False


def move(page, w: Widget, moves: int, counter: Bytes, sweep: bool = False) -> None:
    """Move the widget one step `moves` times, timing each from the input to settled.

    By default the moves alternate (up, down, up...) between two neighbouring values, so
    results cached per value are found from the third move on; with `sweep` the widget keeps going
    the same way until its end, then turns back: mostly values not shown before (a learner
    stepping through the heads, each one new)."""
    runs = runs_of(page)
    if w.spec.prepare:  # e.g. generate first: the step slider reads the generation
        button = page.locator(f".st-key-{w.spec.prepare.replace('.', '-')} button")
        if button.count() == 0:
            w.note = "not on the page"
            return
        until_settled(page)
        before = runs.mark()
        button.first.click()
        runs.wait(lambda: runs.sent > before, TIMEOUT_MS, "the preparing click's rerun")
        until_settled(page)
    box = page.locator(f".st-key-{w.spec.key.replace('.', '-')}")
    if box.count() == 0:  # in a section computed when reached: the learner scrolls down to it
        scroll_to_end(page, TIMEOUT_MS)
    if box.count() == 0:
        w.note = "not on the page"
        return
    box.first.scroll_into_view_if_needed(timeout=TIMEOUT_MS)
    control = Control(page, box.first, w.spec.kind)
    up, tries = True, 0
    while len(w.ms) < moves and tries < 2 * moves + 2:
        tries += 1
        until_settled(page)
        value = control.value()
        if not control.prepare(up):  # it stands at a bound: turn round
            up = not up
            continue
        before_bytes, before = counter.total, runs.mark()
        t0 = time.perf_counter()
        control.step(up)
        if not control.changed(value):  # nothing moved (a bound the widget did not tell): turn round
            up = not up
            continue
        runs.wait(lambda: runs.sent > before, TIMEOUT_MS, "the move's rerun")
        until_settled(page)
        w.ms.append((time.perf_counter() - t0) * 1000)
        w.bytes.append(counter.total - before_bytes)
        if not sweep:
            up = not up
    if len(w.ms) < moves:
        w.note = f"{len(w.ms)} of {moves} moves"


def new_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, service_workers="block")
    page = context.new_page()
    track(page)
    counter = Bytes()
    counter.attach(page)
    return context, page, counter


def mark(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def kb(n: float) -> str:
    return f"{n / 1024:,.0f} KB" if n >= 1024 else f"{n:.0f} B"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lessons", default=",".join(LESSONS), help="comma-separated lesson ids")
    parser.add_argument("--moves", type=int, default=20,
                        help="moves per widget (>= 10; at 20 the p95 is not the slowest move alone)")
    parser.add_argument("--widgets", default="", help="comma-separated widget keys (default: all of the lessons')")
    parser.add_argument("--no-warm", action="store_true", help="skip the warm-up visit of every lesson")
    parser.add_argument("--sweep", action="store_true",
                        help="move each widget the same way until its end (new values), not back and forth")
    args = parser.parse_args()
    lessons = [x for x in args.lessons.split(",") if x]
    unknown = [x for x in lessons if x not in LESSONS]
    if unknown:
        parser.error(f"unknown lessons {unknown}; choose from {','.join(LESSONS)}")
    chosen = {k for k in args.widgets.split(",") if k}

    from playwright.sync_api import sync_playwright

    en = i18n.ui("en")
    load_before = os.getloadavg()[0]  # the run itself keeps both cores busy: only the load before says
    started = time.perf_counter()     # whether other work shared the machine
    with serve(REPO / "app.py") as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        # Warm: the model, and each measured lesson once (its captures and cached results).
        context, page, counter = new_page(browser)
        runs_of(page).reset()
        page.goto(f"{url}/?lang=en")
        from playwright.sync_api import expect

        expect(title_of(page, en, "numbers")).to_be_visible(timeout=SERVER_WARM_TIMEOUT_MS)
        until_settled(page)
        if not args.no_warm:
            for lesson in lessons:
                if lesson != "numbers":
                    switch(page, en, lesson, counter)
        context.close()

        # The learner: open the app, then each lesson in turn, moving its widgets.
        context, page, counter = new_page(browser)
        runs_of(page).reset()
        t0 = time.perf_counter()
        page.goto(f"{url}/?lang=en")
        expect(title_of(page, en, "numbers")).to_be_visible(timeout=TIMEOUT_MS)
        open_first = (time.perf_counter() - t0) * 1000
        until_settled(page)
        open_settled = (time.perf_counter() - t0) * 1000
        open_bytes = counter.total

        switches: dict[str, tuple[float, float, int]] = {}
        widgets: list[Widget] = []
        for lesson in lessons:
            if lesson == "numbers":
                # already open: measure the switch from the next lesson back, below
                pass
            else:
                switches[lesson] = switch(page, en, lesson, counter)
            for spec in WIDGETS[lesson]:
                if chosen and spec.key not in chosen:
                    continue
                w = Widget(lesson, spec)
                move(page, w, args.moves, counter, sweep=args.sweep)
                widgets.append(w)
                print(f"  {spec.key}: " + (", ".join(f"{x:.0f}" for x in w.ms) or w.note), file=sys.stderr)
        if "numbers" in lessons:
            switches["numbers"] = switch(page, en, "numbers", counter)
        browser.close()

    total_s = time.perf_counter() - started
    quiet = load_before <= 1.0
    print(f"\nUI benchmark: Chromium, one learner, warm server, default text, {args.moves} moves per widget "
          f"({'sweeping to new values' if args.sweep else 'back and forth'}); "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, run took {total_s:.0f} s; "
          f"load average before it {load_before:.1f} on {os.cpu_count()} cores ("
          + ("quiet" if quiet else "other work was running: every time here is inflated") + ")\n")
    print("| what | first screen | settled | sent | goal | result |")
    print("|---|---:|---:|---:|---|---|")
    print(f"| open the app (first lesson) | {open_first:,.0f} ms | {open_settled:,.0f} ms | {kb(open_bytes)} "
          f"| ≤ {GOAL_OPEN_MS:,} ms | {mark(open_first <= GOAL_OPEN_MS)} |")
    for lesson in lessons:
        first, settled, sent = switches[lesson]
        ok = first <= GOAL_SWITCH_FIRST_MS and settled <= GOAL_SWITCH_SETTLED_MS
        print(f"| switch to {lesson} | {first:,.0f} ms | {settled:,.0f} ms | {kb(sent)} "
              f"| ≤ {GOAL_SWITCH_FIRST_MS:,} / {GOAL_SWITCH_SETTLED_MS:,} ms | {mark(ok)} |")
    print("\n| widget | moves | p50 | p95 | sent per move (median) | goal | result |")
    print("|---|---:|---:|---:|---:|---|---|")
    for w in widgets:
        if not w.ms:
            print(f"| {w.spec.key} | 0 | – | – | – | ≤ {GOAL_MOVE_MS} ms p95 | {w.note} |")
            continue
        p95 = pct(w.ms, 0.95)
        result = mark(p95 <= GOAL_MOVE_MS) + (f" ({w.note})" if w.note else "")
        print(f"| {w.spec.key} | {len(w.ms)} | {pct(w.ms, 0.5):,.0f} ms | {p95:,.0f} ms "
              f"| {kb(statistics.median(w.bytes))} | ≤ {GOAL_MOVE_MS} ms p95 | {result} |")


if __name__ == "__main__":
    main()
