"""How many learners one server holds: K simulated learners on the real server, each on their own
websocket session, doing a lesson's flow; per action the wait (p50/p95) and the server's memory.

    .venv/bin/python scripts/load_driver.py                      # K = 5, 10, 20, 30 on one server
    .venv/bin/python scripts/load_driver.py --learners 10 --replicas 3   # 3 replicas behind nginx
    .venv/bin/python scripts/load_driver.py --url http://host:8501 --learners 5   # a running server

Each learner is a `drivers.stclient.Learner`: it speaks Streamlit's own protocol, like the browser,
without drawing (thirty Chromium tabs on a 2-core machine would measure Chromium, not the server).
The flow, the same for every learner, with a think time between actions (seeded; `--think 0.5 2`
by default, a stress test: a learner who reads the lesson between inputs takes far longer):

    open   the lesson link the teacher shared (/attention?lang=it), as a fresh tab
    text   type their own sentence in the sidebar (a new capture: the model's forward pass)
    slide  move the lesson's view slider where the server answers it;
           none where a browser view answers the moves (sampling; attention's head; block's lens)
    layer  attention: a layer the browser view was not sent (the view's trigger, one run)
    answer answer the lesson's first multiple-choice question (its form's Check button)
    next   go to the next lesson (attention -> block -> sampling), then slide and answer there
    reach  scroll down to a section computed when reached (the block's logit lens)
    share  the sidebar's "share this view" button (its dialog builds the link)
    download  the capture of the text as CSV (built on the server when clicked)

A wait is from the input sent to the end of the run it caused (the server's `script_finished`):
what the learner waits for, minus the browser's drawing (scripts/bench_ui.py measures that for
one learner). The learners start within 1 s of each other, as a class following the teacher.

Every learner is checked, and any failure is printed and counted (exit status 1):
- no exception box on any page and no protocol error;
- their own text comes back: the attention heatmap's labels carry their own word and no other
  learner's word; their quiz answer gets its feedback.

The server's memory is read from /proc: RSS after each round and the peak (VmHWM) so far, summed
over replicas. Rounds use distinct texts, so every round computes new captures.
Deliberately left out: drawing time in the browser, network latency, reconnections.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "deploy" / "nginx"))
sys.path.insert(0, str(REPO / "scripts"))

from lib.serving.settings import replica_env  # noqa: E402
from measure_rss import status_mb  # noqa: E402  (scripts/measure_rss.py)
from render import healthy  # noqa: E402  (deploy/nginx/render.py: the one health probe)
from drivers.browser import stop_process  # noqa: E402
from drivers.stclient import Learner, StreamlitProtocolError, heatmap_tokens  # noqa: E402

GOAL_P95_S = 2.0
GOAL_P95_BY_ACTION_S = {"text": 3.0}  # a new text runs the model's forward pass: 3 s


def goal_p95(action: str) -> float:
    """The p95 wait a class may see for `action`. Example: goal_p95("text") -> 3.0"""
    return GOAL_P95_BY_ACTION_S.get(action, GOAL_P95_S)
# (url path, widget key, the value it goes to, the section it sits in if not on the first screen, and
# the browser view's event when the key is a view's: its trigger, sent only for what the view was not
# given). A key of None: the lesson's view-only moves are all answered by its browser view
# (static/views), which sends the server nothing, so the learner sends nothing for them.
# attention: the head is the view's; a layer not yet sent is one run of the view's section ("layer").
# block: the lens's layer and position are the view's (the learner still reaches the lens: it is computed then).
# sampling: temperature, top-k, top-p and the seed are the view's.
LESSONS: list[tuple[str, str | None, Any, str | None, str | None]] = [
    ("attention", "attention.view", {"layer": 3, "head": 3}, None, "layer"),
    ("block", None, None, "block.lens_box", None),
    ("sampling", None, None, None, None),
]
# One short word per learner, each a single token with its leading space in SmolLM2's vocabulary
# (tests/test_stclient.py checks it): a learner must find their own among their tokens, and no other.
WORDS = ["cat", "dog", "fox", "owl", "bee", "cow", "pig", "rat", "bat", "ant", "hen", "ram",
         "elk", "eel", "ape", "ox", "crab", "deer", "duck", "frog", "goat", "hare", "lion", "mole",
         "mule", "seal", "toad", "wolf", "bear", "moth", "horse", "mouse", "sheep", "tiger", "zebra",
         "camel", "eagle", "shark", "whale", "snake", "lamb", "calf", "bull", "hawk", "dove", "crow",
         "fish", "bird"]
PLACES = ["garden", "kitchen", "river", "forest", "station", "library", "market", "harbour"]


# --- servers -----------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Servers:
    """Replicas of the app (and nginx in front when there are several, or when asked)."""
    url: str = ""
    procs: list[subprocess.Popen] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)   # the replicas' pids, for memory
    tmp: Path | None = None

    def start(self, replicas: int, nginx: bool) -> "Servers":
        self.tmp = Path(tempfile.mkdtemp(prefix="itt-load-"))
        env = replica_env(dict(os.environ, PYTHONUNBUFFERED="1",
                               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))),
                          replicas)
        streamlit = Path(sys.executable).with_name("streamlit")
        ports = [free_port() for _ in range(replicas)]
        for i, port in enumerate(ports):
            log = (self.tmp / f"replica-{i}.log").open("w")
            proc = subprocess.Popen(
                [str(streamlit), "run", "app.py", "--server.port", str(port),
                 "--server.address", "127.0.0.1", "--server.headless", "true",
                 "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
            self.procs.append(proc)
            self.pids.append(proc.pid)
        for port, proc in zip(ports, self.procs):
            deadline = time.monotonic() + 120
            while not healthy(f"http://127.0.0.1:{port}"):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"replica on {port} did not start: see {self.tmp}")
                time.sleep(0.2)  # polling a starting server
        if replicas == 1 and not nginx:
            self.url = f"http://127.0.0.1:{ports[0]}"
            return self
        import render  # deploy/nginx/render.py

        nginx_bin = shutil.which("nginx") or "/usr/sbin/nginx"
        front = free_port()
        conf = render.write_standalone(self.tmp / "nginx", ports, listen=f"127.0.0.1:{front}")
        self.procs.append(subprocess.Popen([nginx_bin, "-c", str(conf), "-p", str(conf.parent)],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", front)) == 0:
                    break
            if time.monotonic() > deadline:
                raise SystemExit("nginx did not start")
            time.sleep(0.1)
        self.url = f"http://127.0.0.1:{front}"
        return self

    def memory_mb(self) -> tuple[float, float]:
        """RSS now and the peak so far, summed over the replicas and their lens processes."""
        now = peak = 0.0
        for pid in self.pids + lens_processes(self.pids):
            mb = status_mb(pid)
            r, h = mb["VmRSS"], mb["VmHWM"]
            now, peak = now + r, peak + h
        return now, peak

    def stop(self) -> None:
        for proc in reversed(self.procs):
            stop_process(proc)
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


def affinity_cookie(url: str, path: str) -> str:
    """The first HTTP request of a tab; behind nginx its answer names the learner's replica."""
    with urllib.request.urlopen(f"{url}/{path}", timeout=60) as r:
        cookies = [h.split(";", 1)[0] for k, h in r.headers.items() if k.lower() == "set-cookie"]
    return "; ".join(cookies)


# --- the server's CPU, shared out among the actions in flight ------------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of the processes (their threads included, finished ones too), in s.
    Reads fields 14 and 15 of /proc/<pid>/stat (clock ticks: 10 ms here)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])   # utime, stime (fields 14, 15 counted from 1)
    return total / CLK_TCK


def steal_seconds() -> float:
    """CPU time the machine's hypervisor gave to others while this machine wanted it (the 'steal'
    column of /proc/stat, all cores): a noisy host makes every figure here worse. 0 if unknown."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return 0.0


def lens_processes(pids: list[int]) -> list[int]:
    """The servers' lens processes (lib/serving/lens_worker.py, named "itt-lens"): their children by that name."""
    found = []
    for pid in pids:
        for children in glob.glob(f"/proc/{pid}/task/*/children"):
            try:
                with open(children) as f:
                    kids = [int(c) for c in f.read().split()]
            except OSError:
                continue
            for kid in kids:
                try:
                    with open(f"/proc/{kid}/comm") as f:
                        if f.read().startswith("itt-lens"):
                            found.append(kid)
                except OSError:
                    continue
    return found


def low_threads(pids: list[int]) -> list[str]:
    """The /proc stat files of the servers' low-priority workers (lib/serving/lens_service.py names them
    "itt-low-lens"): the logit lenses, started ahead of the learners or waited for."""
    found = []
    for pid in pids:
        for task in glob.glob(f"/proc/{pid}/task/*"):
            try:
                with open(f"{task}/comm") as f:
                    if f.read().startswith("itt-low"):
                        found.append(f"{task}/stat")
            except OSError:
                continue
    return found


def thread_cpu_seconds(stat_files: list[str]) -> float:
    total = 0
    for path in stat_files:
        try:
            with open(path) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


class CpuMeter:
    """Samples the servers' CPU time every `every_s` seconds on a thread, from start() to stop():
    (clock, the CPU of everything but the low-priority work, the low-priority work's CPU: the
    workers' threads, and the lens processes, which are not in their server's own count)."""

    def __init__(self, pids: list[int], every_s: float = 0.01):
        import threading

        self.pids, self.every_s = pids, every_s
        self.samples: list[tuple[float, float, float]] = []
        self._low: list[str] = []
        self._lens: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> tuple[float, float, float]:
        low = thread_cpu_seconds(self._low)
        return time.perf_counter(), cpu_seconds(self.pids) - low, low + thread_cpu_seconds(self._lens)

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            if n % 100 == 0:  # workers start when first needed: look for them every second
                self._find()
            self.samples.append(self._sample())
            n += 1
            self._stop.wait(self.every_s)

    def _find(self) -> None:
        self._low = low_threads(self.pids)
        self._lens = [f"/proc/{pid}/stat" for pid in lens_processes(self.pids)]  # live as long as its server

    def start(self) -> "CpuMeter":
        self._find()
        self._thread.start()
        return self

    def stop(self) -> list[tuple[float, float, float]]:
        self._stop.set()
        self._thread.join()
        self.samples.append(self._sample())
        return self.samples


def share_cpu(samples: list[tuple[float, float]], spans: list[tuple[float, float]]) -> tuple[list[float], float]:
    """Share the CPU the samples measured among the spans (start, end) in flight: each sampling
    interval's CPU goes to the spans overlapping it, in proportion to the overlap; an interval no
    span overlaps counts as background. Returns each span's CPU seconds and the background's.
    With one learner, one span is in flight at a time and its share is the CPU its input caused
    (plus whatever the server did meanwhile on its own).

    Example: share_cpu([(0, 0), (1, 0.4), (2, 0.6)], [(0, 2), (1, 2)]) -> ([0.5, 0.1], 0.0)"""
    cpu = [0.0] * len(spans)
    background = 0.0
    order = sorted(range(len(spans)), key=lambda i: spans[i][0])
    active: list[int] = []
    nxt = 0
    for (t0, c0), (t1, c1) in zip(samples, samples[1:]):
        d = c1 - c0
        if t1 <= t0:
            background += d
            continue
        while nxt < len(order) and spans[order[nxt]][0] < t1:
            active.append(order[nxt])
            nxt += 1
        active = [i for i in active if spans[i][1] > t0]
        weights = [(i, min(t1, spans[i][1]) - max(t0, spans[i][0])) for i in active]
        weights = [(i, w) for i, w in weights if w > 0]
        total = sum(w for _i, w in weights)
        if total <= 0:
            background += d
            continue
        for i, w in weights:
            cpu[i] += d * w / total
    return cpu, background


# --- one learner -----------------------------------------------------------------------

@dataclass
class Outcome:
    waits: dict[str, list[float]] = field(default_factory=dict)
    bytes_in: int = 0
    spans: list[tuple[str, float, float, int]] = field(default_factory=list)  # kind, start, end, bytes
    failures: list[str] = field(default_factory=list)


def learner_text(word: str, n: int) -> str:
    """Learner n's own sentence, with their word three times."""
    place = PLACES[n % len(PLACES)]
    return (f"The {word} walked into the {place} and sat down. Everyone looked at the {word}, "
            f"and the {word} looked back, calm and curious.")


async def learner_flow(url: str, n: int, word: str, others: list[str], lang: str, rng: random.Random,
                       lessons: int, out: Outcome, think_s: tuple[float, float] = (0.5, 2.0)) -> None:
    text = learner_text(word, n)
    first = LESSONS[0][0]
    await asyncio.sleep(rng.uniform(0, 1.0))

    def note(action) -> None:
        kind = action.name.split(" ")[0]
        out.waits.setdefault(kind, []).append(action.wait_s)
        out.bytes_in += action.bytes_in
        out.spans.append((kind, action.start, action.start + action.wait_s, action.bytes_in))

    async def think() -> None:
        await asyncio.sleep(rng.uniform(*think_s))

    cookie = await asyncio.to_thread(affinity_cookie, url, f"{first}?lang={lang}")
    async with Learner(url, first, f"lang={lang}", cookie=cookie) as me:
        try:
            note(await me.open())
            await think()
            note(await me.set_text(text))
            labels = heatmap_tokens(me)
            if f" {word}" not in labels:
                out.failures.append(f"learner {n}: own word {word!r} not in the attention heatmap")
            strangers = sorted({o for o in others if o != word and f" {o}" in labels})
            if strangers:
                out.failures.append(f"learner {n} sees other learners' words {strangers}")
            for i, (lesson, key, value, section, event) in enumerate(LESSONS[:lessons]):
                if i:
                    await think()
                    action = await me.goto(lesson)
                    action.name = "next " + lesson
                    note(action)
                if section:  # the learner scrolls down to the slider: its section is computed then
                    await think()
                    note(await me.reach(section, name="reach"))
                if key is not None:
                    await think()
                    if event is None:
                        action = await me.slide(key, value)
                        action.name = "slide"
                    else:  # a view asking for data it was not sent (attention: another layer)
                        action = await me.trigger(key, event, value, name=event)
                    note(action)
                await think()
                answered = await answer_first_choice(me, lesson)
                if answered is None:
                    out.failures.append(f"learner {n}: no multiple-choice question on {lesson}")
                else:
                    note(answered)
            await think()
            note(await me.click("app.share", name="share"))
            await think()
            note(await me.download("app.export.csv", name="download"))
            if me.widget("app.text").kind != "text_area":
                out.failures.append(f"learner {n}: the text box is gone")
        except (StreamlitProtocolError, KeyError) as e:
            out.failures.append(f"learner {n}: {type(e).__name__}: {e}")
        for exc in me.exceptions:
            out.failures.append(f"learner {n}: exception box: {exc}")


def verdicts(me: Learner) -> int:
    """How many quiz verdicts ('Right!...' or 'Not quite...', in any language) the page shows."""
    from lib.course import i18n

    starts = tuple(x for lang in i18n.LANGS for x in
                   (i18n.ui(lang)["quiz.right"], i18n.ui(lang)["quiz.wrong"].split("{")[0]))
    return sum(1 for _p, (kind, proto) in me.elements.items()
               if kind == "alert" and proto.body.startswith(starts))


async def answer_first_choice(me: Learner, lesson: str):
    for key in me.keys(f"quiz.{lesson}."):
        if key.endswith(".answer") and me.widget(key).kind == "radio":
            form = key[: -len(".answer")] + ".form"
            await me.set_value(key, 0)
            before = verdicts(me)
            action = await me.submit(form, name="answer")
            return action if verdicts(me) > before else None
    return None


# --- a round of K learners -------------------------------------------------------------

def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile. Example: percentile([1, 2, 3, 4], 0.5) -> 2."""
    ordered = sorted(values)
    rank = max(1, int(-(-q * len(ordered) // 1)))
    return ordered[min(rank, len(ordered)) - 1]


async def one_round(url: str, k: int, lang: str, seed: int, lessons: int, offset: int,
                    think_s: tuple[float, float] = (0.5, 2.0)) -> Outcome:
    out = Outcome()
    words = [WORDS[(offset + i) % len(WORDS)] for i in range(k)]
    rngs = [random.Random(seed * 1000 + i) for i in range(k)]
    await asyncio.gather(*(learner_flow(url, offset + i, words[i], words, lang, rngs[i], lessons, out, think_s)
                           for i in range(k)))
    return out


ACTIONS = ("open", "text", "slide", "layer", "answer", "next", "reach", "share", "download")
# Goals for the server's CPU per action, one learner on a warm server (mean, in ms); a new text's
# goal is the forward pass plus 100 ms, printed beside it from the server's own figure.
CPU_GOAL_MS = {"answer": 30, "slide": 50, "next": 250}


def forward_pass_ms(text: str, lang: str = "it") -> float:
    """The CPU time of one capture of `text` on the default model (the forward pass with its hooks:
    what a new text must cost the server at least), measured in this process, median of 5."""
    from lib.model.capture import run_capture
    from lib.model.models import DEFAULT_MODEL, load_model

    lm = load_model(DEFAULT_MODEL)
    run_capture(lm, text)  # warm: first-call allocations
    times = []
    for _ in range(5):
        t0 = time.process_time()
        run_capture(lm, text)
        times.append((time.process_time() - t0) * 1000)
    return statistics.median(times)


def cpu_table(out: Outcome, samples: list[tuple[float, float]], k: int, elapsed: float,
              forward_ms: float | None = None) -> list[str]:
    """Markdown rows: per action type, the server CPU it caused (mean, p50, p95) and bytes sent."""
    spans = [(a, b) for _kind, a, b, _n in out.spans]
    cpu, background = share_cpu([(t, c) for t, c, _low in samples], spans)
    total = samples[-1][1] - samples[0][1] if len(samples) > 1 else 0.0
    low = samples[-1][2] - samples[0][2] if len(samples) > 1 else 0.0
    lines = []
    for action in ACTIONS:
        idx = [i for i, sp in enumerate(out.spans) if sp[0] == action]
        if not idx:
            continue
        ms = [cpu[i] * 1000 for i in idx]
        kb = [out.spans[i][3] / 1000 for i in idx]
        mean = statistics.fmean(ms)
        goal = CPU_GOAL_MS.get(action)
        if action == "text" and forward_ms is not None:
            goal = round(forward_ms + 100)
        verdict = "" if goal is None or k != 1 else ("PASS" if mean <= goal else "MISS")
        lines.append(f"| {k} | {action} | {len(idx)} | {mean:.0f} | {percentile(ms, 0.5):.0f} | "
                     f"{percentile(ms, 0.95):.0f} | {statistics.fmean(kb):.1f} | "
                     f"{f'<= {goal} ms ' if goal else ''}{verdict} |")
    lines.append(f"| {k} | (server CPU in all: {total + low:.1f} s in {elapsed:.0f} s of wall time; "
                 f"between actions {background:.1f} s; the low-priority work (logit lenses, ahead in the lens "
                 f"process's idle class or waited for) {low:.1f} s, not counted in the actions above) | | | | | | |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learners", type=int, nargs="+", default=[5, 10, 20, 30])
    ap.add_argument("--replicas", type=int, default=1)
    ap.add_argument("--nginx", action="store_true", help="nginx in front even for one replica")
    ap.add_argument("--url", help="drive a server already running (no memory figures)")
    ap.add_argument("--lang", default="it")
    ap.add_argument("--lessons", type=int, default=3, choices=range(1, len(LESSONS) + 1))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--think", type=float, nargs=2, default=[0.5, 2.0], metavar=("MIN", "MAX"),
                    help="seconds a learner waits between actions (uniform, seeded); 0.5-2 is a "
                         "stress test, a learner who reads the lesson takes 5-15 s or more")
    ap.add_argument("--rounds", type=int, default=1,
                    help="rounds per K (new learners, new texts each): more actions to measure, e.g. "
                         "--learners 1 --rounds 10 for the CPU per action of one learner")
    args = ap.parse_args()

    servers = Servers()
    if args.url:
        url = args.url
    else:
        servers.start(args.replicas, args.nginx)
        url = servers.url
    rows, cpu_rows, failures, held = [], [], 0, 0
    forward_ms = None
    try:
        # Warm every replica (model loaded, default capture) as a teacher would before class.
        warm = asyncio.run(one_round(url, max(1, args.replicas), args.lang, 999, 1, 1000))
        if warm.failures:
            print("warm-up failed:", *warm.failures, sep="\n  ")
            return 1
        offset = 0
        for k in args.learners:
            t0, steal0 = time.perf_counter(), steal_seconds()
            meter = CpuMeter(servers.pids).start() if servers.pids else None
            out = Outcome()
            for r in range(args.rounds):
                part = asyncio.run(one_round(url, k, args.lang, args.seed + k + 7919 * r, args.lessons, offset,
                                             tuple(args.think)))
                offset += k
                for kind, w in part.waits.items():
                    out.waits.setdefault(kind, []).extend(w)
                out.bytes_in += part.bytes_in
                out.spans += part.spans
                out.failures += part.failures
            elapsed = time.perf_counter() - t0
            if meter:
                if k == 1 and forward_ms is None:
                    forward_ms = forward_pass_ms(learner_text("cat", 0))
                cpu_rows += cpu_table(out, meter.stop(), k, elapsed, forward_ms)
            mem = servers.memory_mb() if servers.pids else (float("nan"), float("nan"))
            worst, missed = 0.0, []
            for action in ACTIONS:
                w = out.waits.get(action, [])
                if not w:
                    continue
                p95 = percentile(w, 0.95)
                worst = max(worst, p95)
                if p95 > goal_p95(action):
                    missed.append(action)
                rows.append((k, action, len(w), statistics.median(w), p95, max(w)))
            ok = not missed and not out.failures
            if ok:
                held = max(held, k)
            failures += len(out.failures)
            driver_cpu = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
            steal = steal_seconds() - steal0
            print(f"K={k}: {elapsed:.0f} s, {sum(len(v) for v in out.waits.values())} actions, "
                  f"{out.bytes_in / 1e6:.1f} MB sent to the learners, RSS {mem[0] / 1024:.2f} GB "
                  f"(peak {mem[1] / 1024:.2f} GB), worst p95 {worst:.2f} s -> "
                  f"{'PASS' if ok else 'MISS: ' + ', '.join(missed) if missed else 'MISS: failures'}; "
                  f"this driver's own CPU so far {driver_cpu:.0f} s (on the same cores); CPU taken by "
                  f"the virtual machine's host (steal) {steal:.1f} s", flush=True)
            for f in out.failures[:10]:
                print("   FAIL", f)
            rows.append((k, "_mem", 0, mem[0], mem[1], worst))
    finally:
        servers.stop()

    front = f"{args.replicas} replica{'s' if args.replicas > 1 else ''}" + (" behind nginx" if servers.url and (args.replicas > 1 or args.nginx) else "")
    print(f"\n### Load driver: {front}, {os.cpu_count()} cores, lesson flow x{args.lessons}, "
          f"think time {args.think[0]:g}-{args.think[1]:g} s, "
          f"goal p95 <= {GOAL_P95_S:.0f} s per action (a new text {goal_p95('text'):.0f} s)\n")
    print("| learners | action | n | p50 s | p95 s | max s | p95 goal |")
    print("|---:|---|---:|---:|---:|---:|---|")
    for k, action, n, p50, p95, mx in rows:
        if action == "_mem":
            print(f"| {k} | server RSS after / peak | | {p50 / 1024:.2f} GB | {p95 / 1024:.2f} GB | | |")
        else:
            print(f"| {k} | {action} | {n} | {p50:.2f} | {p95:.2f} | {mx:.2f} | "
                  f"{'PASS' if p95 <= goal_p95(action) else 'MISS'} (<= {goal_p95(action):g} s) |")
    if cpu_rows:
        print("\n### Server CPU per action (all replicas; CPU of each sampling interval shared among the "
              "actions in flight)\n")
        if forward_ms is not None:
            print(f"A new text's goal is the forward pass plus 100 ms; the forward pass (a capture of a "
                  f"learner's sentence on the default model, in this script's process): {forward_ms:.0f} ms CPU.\n")
        print("| learners | action | n | CPU mean ms | p50 ms | p95 ms | KB sent, mean | goal (1 learner) |")
        print("|---:|---|---:|---:|---:|---:|---:|---|")
        print(*cpu_rows, sep="\n")
    print(f"\nLearners held with every action's p95 within its goal and no failure: "
          f"{held if held else 'fewer than ' + str(min(args.learners))} "
          f"(of K = {', '.join(map(str, args.learners))}). Failures: {failures}.")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
