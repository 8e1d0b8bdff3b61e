"""Replicas behind nginx, for real: two servers of the app on loopback ports, Debian's nginx in
front with the configuration of deploy/nginx/render.py, and several Chromium learners through it.

What it checks:
- the load spreads: new learners go round robin over the replicas (the itt_replica cookie
  names the one that served them);
- each learner stays on their replica: every request of theirs in nginx's log went to it, and their
  own text and quiz answer survive reruns (a lesson change is a rerun in the same session);
- when a replica stops, its learners reconnect through nginx to another one by themselves, the
  cookie follows them there, and the test states what they keep and lose on the way: a Streamlit
  session lives in one server's memory, so the new replica starts a fresh session, but their quiz
  answers and progress come back from their own browser's local storage (nginx is one
  origin for every replica); their text is back to the example. Learners on the other replicas
  lose nothing.

Marked slow: two model loads and four browser sessions share this machine's two cores. Two
replicas show all of it (a third added a model load and two browsers, and checked nothing more).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from lib.course import i18n
from lib.course.quiz import load_bank
from drivers import browser as e2e
from tests.ci import skip_or_fail

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = e2e.REPO
REPLICAS = 2
LEARNERS = 4
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
START_TIMEOUT_S = 90
EN = i18n.ui("en")
# The sidebar's count for lesson 1 once its d_head question is answered right: "answered 1/13 · right 1".
ONE_RIGHT = i18n.fill(EN["quiz.count"], answered="1", total=str(len(load_bank("en", "numbers"))), correct="1")

sys.path.insert(0, str(REPO / "deploy" / "nginx"))
import render  # noqa: E402  (deploy/nginx/render.py: the configuration under test)


def _wait(ready, what: str, proc: subprocess.Popen, log: Path) -> None:
    """Poll a starting process until `ready()`; fail with its log if it exits or times out."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready():
        if proc.poll() is not None:
            pytest.fail(f"{what} exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}",
                        pytrace=False)
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not ready after {START_TIMEOUT_S}s:\n{log.read_text(errors='replace')[-3000:]}",
                        pytrace=False)
        time.sleep(0.2)  # polling a process that is starting, not waiting on a page


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Cluster:
    url: str                                  # nginx, the only address learners use
    ports: list[int]                          # replica i listens on ports[i]; its cookie is r<i>
    procs: list[subprocess.Popen]
    access_log: Path
    logs: list[Path] = field(default_factory=list)

    def routes(self) -> list[tuple[str, str, str]]:
        """(cookie, request line, port of the replica that answered) for every logged request."""
        out = []
        for line in self.access_log.read_text().splitlines():
            m = re.search(r'"(.*?)" \d+ cookie=(\S*) upstream=(.*)$', line)
            if m and m.group(3) != "-":
                out.append((m.group(2), m.group(1), m.group(3).split(", ")[-1].rsplit(":", 1)[1]))
        return out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Cluster:
    if not (os.path.exists(NGINX) and os.access(NGINX, os.X_OK)):
        reason = f"{NGINX} not found: run `make test` (installs Debian's nginx as root) or `apt-get install nginx`"
        skip_or_fail(reason)
    tmp = tmp_path_factory.mktemp("replicas")
    ports = [e2e._free_port() for _ in range(REPLICAS)]
    env = dict(os.environ, PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    procs: list[subprocess.Popen] = []
    logs: list[Path] = []
    handles = []
    try:
        for i, port in enumerate(ports):
            log = tmp / f"replica-{i}.log"
            logs.append(log)
            handles.append(log.open("w"))
            procs.append(subprocess.Popen(
                [*e2e._streamlit(), "run", "app.py", "--server.port", str(port),
                 "--server.address", "127.0.0.1", "--server.headless", "true",
                 "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                cwd=REPO, env=env, stdout=handles[-1], stderr=subprocess.STDOUT))
        for i, (port, proc) in enumerate(zip(ports, procs)):
            _wait(lambda port=port: e2e.healthy(f"http://127.0.0.1:{port}"), f"replica {i}", proc, logs[i])

        front = e2e._free_port()
        conf = render.write_standalone(tmp / "nginx", ports, listen=f"127.0.0.1:{front}")
        nlog = tmp / "nginx" / "error.log"
        check = subprocess.run([NGINX, "-t", "-c", str(conf), "-p", str(conf.parent)],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        # In the foreground (daemon off in the rendered nginx.conf): this Popen is nginx itself.
        procs.append(subprocess.Popen([NGINX, "-c", str(conf), "-p", str(conf.parent)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        # A TCP connect only: a request would take a place in the round robin.
        _wait(lambda: _listening(front), "nginx", procs[-1], nlog)
        yield Cluster(f"http://127.0.0.1:{front}", ports, procs[:-1], conf.parent / "access.log", logs)
    finally:
        for proc in reversed(procs):
            e2e.stop_process(proc)
        for h in handles:
            h.close()


# --- learners ------------------------------------------------------------------------

@dataclass
class Learner:
    n: int
    context: object
    page: object
    text: str
    external: list[str]
    sockets: list = field(default_factory=list)   # Streamlit websockets, in order
    finished: list[int] = field(default_factory=list)  # script runs finished, per socket

    def replica(self) -> str:
        """The replica nginx keeps this learner on (their itt_replica cookie: r0, r1...)."""
        cookies = {c["name"]: c["value"] for c in self.context.cookies()}
        return cookies.get(render.COOKIE, "")

    @property
    def sidebar(self):
        return self.page.locator('[data-testid="stSidebar"]')

    def watch(self) -> None:
        """Count the page's Streamlit websockets and the script runs each one saw finish."""
        def on_socket(ws) -> None:
            if "/_stcore/stream" not in ws.url:
                return
            self.sockets.append(ws)
            self.finished.append(0)
            k = len(self.finished) - 1

            def on_frame(payload) -> None:
                if isinstance(payload, bytes):
                    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

                    if ForwardMsg.FromString(payload).WhichOneof("type") == "script_finished":
                        self.finished[k] += 1

            ws.on("framereceived", on_frame)

        self.page.on("websocket", on_socket)

    def send(self, action, timeout_ms: int = e2e.APP_TIMEOUT_MS) -> None:
        """Do `action` (an input Streamlit acts on) once the app is idle; wait for the run it causes.

        Idle first, so the next run that finishes on this socket is the one the input caused.
        """
        from playwright.sync_api import Error, TimeoutError as PwTimeout

        _ready(self.page)
        k, before = len(self.finished) - 1, self.finished[-1]
        action()
        deadline = time.monotonic() + timeout_ms / 1000
        while self.finished[k] <= before:
            left = (deadline - time.monotonic()) * 1000
            assert left > 0, f"learner {self.n}: no run finished after the input in {timeout_ms} ms"
            try:  # returns at the socket's next frame: its own traffic, not a sleep
                self.sockets[k].wait_for_event("framereceived", timeout=min(left, 1000))
            except (PwTimeout, Error):
                pass
        _ready(self.page)

    def wait_for_socket(self, after: int, timeout_ms: int = e2e.APP_TIMEOUT_MS) -> None:
        """Wait until the page has opened more than `after` Streamlit websockets."""
        from playwright.sync_api import Error, TimeoutError as PwTimeout

        deadline = time.monotonic() + timeout_ms / 1000
        while len(self.sockets) <= after:
            left = (deadline - time.monotonic()) * 1000
            assert left > 0, f"learner {self.n}: no new websocket after {timeout_ms} ms"
            try:  # returns at the page's next websocket: its own traffic, not a sleep
                self.page.wait_for_event("websocket", timeout=min(left, 1000))
            except (PwTimeout, Error):
                pass


def _new_learner(browser, n: int) -> Learner:
    external: list[str] = []
    # As the `page` fixture: nothing may leave this machine.
    context = e2e.offline_context(browser, external, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    learner = Learner(n, context, page, f"Learner {n} writes about otters and rivers, number {n}.", external)
    learner.watch()
    return learner


def _ready(page, text: str | None = None, timeout: int = e2e.APP_TIMEOUT_MS) -> None:
    """Connected to a server and no script run going, then `text` visible.

    The DOM's own flags (Streamlit 1.67's data-test-connection-state / -script-state), read
    here rather than through drivers/browser.py's websocket tracker: a learner whose replica stops gets a
    new websocket to another server mid-test, and every step below is followed by the evidence
    it must bring (a verdict, a heading, a URL), never by a fixed sleep.
    """
    from playwright.sync_api import expect

    page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
                           '[data-test-script-state="notRunning"]', timeout=timeout)
    if text is not None:
        expect(page.get_by_text(text).first).to_be_visible(timeout=timeout)



def _type_text(learner: Learner) -> None:
    """The learner's own text in the sidebar box (Ctrl+Enter sends a text area)."""
    from playwright.sync_api import expect

    box = learner.sidebar.locator("textarea").first

    def send() -> None:
        box.fill(learner.text)
        box.press("Control+Enter")

    learner.send(send)
    expect(box).to_have_value(learner.text, timeout=e2e.APP_TIMEOUT_MS)


def _answer_quiz(learner: Learner) -> None:
    """Answer lesson 1's d_head question right; the sidebar's progress then says so (ONE_RIGHT)."""
    from playwright.sync_api import expect

    page = learner.page
    q = next(x for x in load_bank("en", "numbers") if x.id == "live_d_head")
    form = page.locator('[data-testid="stForm"]').filter(has_text="576").filter(has=page.locator("input")).first
    form.scroll_into_view_if_needed()
    form.locator("input").fill(str(int(q.answer)))  # inside a form: no run until the button
    learner.send(lambda: form.get_by_role("button", name=EN["quiz.check"]).click())
    expect(page.get_by_text(EN["quiz.right"]).first).to_be_visible(timeout=e2e.APP_TIMEOUT_MS)
    expect(learner.sidebar.get_by_text(ONE_RIGHT)).to_be_visible(timeout=e2e.APP_TIMEOUT_MS)


def _go_to_lesson(learner: Learner, lesson_id: str) -> None:
    from playwright.sync_api import expect

    page = learner.page
    _ready(page)
    learner.sidebar.locator(f'[data-testid="stSidebarNavLink"][href$="/{lesson_id}"]').first.click()
    page.wait_for_url(re.compile(rf"/{lesson_id}(\?|$)"), timeout=e2e.APP_TIMEOUT_MS)
    expect(page.locator("h1").first).to_have_text(EN[f"lesson.{lesson_id}.title"], timeout=e2e.APP_TIMEOUT_MS)
    _ready(page)


def test_learners_stick_spread_and_fail_over(browser, cluster):
    from playwright.sync_api import expect

    learners: list[Learner] = []
    t0 = time.monotonic()
    lap = lambda what: print(f"[{time.monotonic() - t0:6.1f} s] {what}")  # noqa: E731
    try:
        # One after the other, so each first request takes the next place in the round robin.
        for n in range(LEARNERS):
            learner = _new_learner(browser, n)
            learners.append(learner)
            learner.page.goto(f"{cluster.url}/?lang=en")
            _ready(learner.page, EN["lesson.numbers.title"])
            assert learner.replica(), f"learner {n} got no {render.COOKIE} cookie"

        lap("learners open")
        # The load spreads: round robin gives every replica LEARNERS / REPLICAS learners.
        on = Counter(x.replica() for x in learners)
        assert sorted(on) == [f"r{i}" for i in range(REPLICAS)], on
        assert max(on.values()) - min(on.values()) <= 1, on

        # Each learner's own text and answer, then a lesson change (a rerun): both survive.
        for learner in learners:
            _type_text(learner)
            _answer_quiz(learner)
            _go_to_lesson(learner, "tokenization")
            expect(learner.sidebar.locator("textarea").first).to_have_value(learner.text)
            expect(learner.sidebar.get_by_text(ONE_RIGHT)).to_be_visible()

        lap("texts, answers, lesson change")
        # Every request a learner made went to the replica their cookie names.
        port_of = {f"r{i}": str(p) for i, p in enumerate(cluster.ports)}
        routed = [r for r in cluster.routes() if r[0] in port_of]
        assert len(routed) >= LEARNERS, routed  # every learner's page loaded assets with the cookie
        for cookie, request, port in routed:
            assert port == port_of[cookie], f"{request} with cookie {cookie} went to port {port}"

        # A replica stops (a crash, a rolling update). Streamlit's frontend reconnects by itself,
        # and nginx sends it to one of the other replicas (the backups of the learner's upstream,
        # round robin among them). The page keeps showing the old run until the learner's next
        # input, which runs in a new session there.
        gone = "r0"
        moved = [x for x in learners if x.replica() == gone]
        stayed = [x for x in learners if x.replica() != gone]
        sockets_before = {x.n: len(x.sockets) for x in moved}
        victim = cluster.procs[0]
        victim.terminate()
        victim.wait(timeout=30)
        for learner in moved:
            # The frontend's own reconnect first (an input sent before it would be lost), then
            # the learner's next input, which runs on the new socket.
            learner.wait_for_socket(sockets_before[learner.n])
            _go_to_lesson(learner, "embeddings")
            assert learner.finished[-1] > 0, f"learner {learner.n}: no run finished on the new socket"
            heir = learner.replica()
            assert heir in {f"r{i}" for i in range(1, REPLICAS)}, f"learner {learner.n} now on {heir!r}"
            assert learner.sockets[-1].url.startswith(cluster.url.replace("http", "ws"))
            # Kept: the lesson and the language (both in the URL), and the learner is served.
            assert "lang=en" in learner.page.url
            expect(learner.page.locator("h1").first).to_have_text(EN["lesson.embeddings.title"])
            # Kept: their quiz answers, progress and text, sent back by their own browser to
            # the new session.
            expect(learner.sidebar.get_by_text(f"{EN['lesson.numbers.title']}: {ONE_RIGHT}")).to_be_visible(
                timeout=e2e.APP_TIMEOUT_MS)
            expect(learner.sidebar.locator("textarea").first).to_have_value(learner.text, timeout=e2e.APP_TIMEOUT_MS)
        lap("failover")

        # The other replicas' learners lost nothing: same session, same text, same answers.
        for learner in stayed:
            assert learner.replica() != gone
            assert len(learner.sockets) == 1, f"learner {learner.n} reconnected"
            expect(learner.sidebar.locator("textarea").first).to_have_value(learner.text)
            expect(learner.sidebar.get_by_text(ONE_RIGHT)).to_be_visible()
        for learner in {x.replica(): x for x in stayed}.values():  # one input per surviving replica
            _go_to_lesson(learner, "embeddings")
            expect(learner.sidebar.locator("textarea").first).to_have_value(learner.text)
            expect(learner.sidebar.get_by_text(ONE_RIGHT)).to_be_visible()
        lap("other replicas untouched")
        for learner in learners:
            assert learner.page.locator('[data-testid="stException"]').count() == 0
            assert not learner.external, learner.external
    finally:
        for learner in learners:
            learner.context.close()
