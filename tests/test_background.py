"""lib/background.py: low-priority work returns the same result, computed on another thread that
the OS schedules after the others, as are the threads torch starts from it; work started ahead
runs the function's `ahead()` where it has one, and `promote()` when someone starts waiting."""

import threading
import time

import pytest
import torch

from lib import background
from tests.ci import skip_or_fail


def _where():
    return threading.current_thread().name, background.thread_nice()


def test_result_and_exceptions_come_back():
    jobs = background.Jobs(keep=4)
    assert jobs.get("sum", lambda: lambda: sum([1, 2, 3])) == 6
    with pytest.raises(ZeroDivisionError):
        jobs.get("bad", lambda: lambda: 1 / 0)


def test_runs_on_a_low_priority_single_torch_thread(monkeypatch):
    import os

    monkeypatch.delenv("ITT_LOW_PRIORITY", raising=False)
    here_nice = background.thread_nice()
    jobs = background.Jobs(keep=4)
    name, nice = jobs.get("where", lambda: _where)
    assert name.startswith("itt-low") and name != threading.current_thread().name
    assert nice >= min(19, here_nice + background.LOW_NICE)  # Linux: niced
    jobs.prefetch("ahead", lambda: _where)
    _until(lambda: jobs.kept("ahead"))
    name, nice = jobs.get("ahead", lambda: pytest.fail)
    assert name.startswith("itt-low-jobs-ahead") and nice >= min(19, here_nice + background.LOW_NICE)
    if os.path.exists("/proc/self/task"):  # named so benchmarks can tell its CPU apart
        comm = background.Jobs(keep=4).get("comm", lambda: lambda: open(
            f"/proc/self/task/{threading.get_native_id()}/comm").read().strip())
        assert comm == "itt-low-jobs"
    # The caller's own settings are untouched.
    assert background.thread_nice() == here_nice


def test_nested_and_switched_off_run_inline(monkeypatch):
    me = threading.current_thread().name
    jobs = background.Jobs(keep=4)
    inner = jobs.get("outer", lambda: lambda: jobs.get("inner", lambda: _where))  # no deadlock
    assert inner[0].startswith("itt-low")
    monkeypatch.setenv("ITT_LOW_PRIORITY", "off")
    assert background.Jobs(keep=4).get("here", lambda: _where)[0] == me


def test_same_lens_on_the_workers(tiny_llama):
    from lib.capture import run_capture
    from lib.logit_lens import logit_lens
    cap = run_capture(tiny_llama, "the cat sat on the mat")
    here = logit_lens(tiny_llama, cap.resid, k=3)
    there = background.Jobs(keep=4).get("lens", lambda: lambda: logit_lens(tiny_llama, cap.resid, k=3))
    assert (here.top_ids == there.top_ids).all()
    assert abs(here.top_probs - there.top_probs).max() < 1e-5


def test_torch_threads_started_from_the_workers_inherit_their_priority():
    """torch's parallel loops run on a team of threads started by the calling thread; started from a
    low-priority worker, they are low-priority too (Linux threads inherit their creator's nice value
    and scheduling class)."""
    import glob
    import os

    if torch.get_num_threads() < 2 or not hasattr(os, "getpriority"):
        skip_or_fail("one torch thread: no team to start")
    w, x = torch.randn(4096, 576), torch.randn(256, 576)
    jobs = background.Jobs(keep=4)
    jobs.get("matmul", lambda: lambda: [x @ w.T for _ in range(3)])  # on a worker for the waited
    jobs.prefetch("ahead", lambda: lambda: [x @ w.T for _ in range(3)])  # on one for work ahead
    _until(lambda: jobs.kept("ahead"))
    low = set()
    for task in glob.glob("/proc/self/task/*"):
        with open(f"{task}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # from field 3 (state) on: see proc(5)
        if int(fields[16]) >= background.LOW_NICE:
            low.add(int(task.rsplit("/", 1)[1]))
    workers = {t.native_id for t in jobs._pools[background.WAITED] + jobs._pools[background.AHEAD]}
    assert workers <= low and low - workers, "no torch thread at the workers' priority"


# --- Jobs: kept per key, started ahead, the waited-for first ----------------------------------


# Work runs at nice +10: on a machine the other test workers keep busy it may wait a long time for
# a core, so waits for it have a wide bound (a bound, not a timing assertion).
BOUND_S = 120


def _until(condition, bound_s: float = BOUND_S) -> None:
    """Wait until the other thread has done its step (a bounded poll, not a timing assertion)."""
    deadline = time.monotonic() + bound_s
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _blocker(jobs: background.Jobs, key="hold", waited=False):
    """Occupy the jobs' only worker for jobs started ahead (or, `waited`, the only one for jobs
    someone waits for) until the returned event is set."""
    started, release = threading.Event(), threading.Event()

    def hold():
        started.set()
        release.wait(BOUND_S)
        return key

    if waited:
        threading.Thread(target=lambda: jobs.get(key, lambda: hold), daemon=True).start()
    else:
        jobs.prefetch(key, lambda: hold)
    assert started.wait(BOUND_S)
    return release


def test_a_job_is_computed_once_whoever_asks_and_however_often():
    jobs = background.Jobs(keep=4, workers=1)
    calls = []
    release = _blocker(jobs)

    def make():
        return lambda: calls.append(1) or 42

    jobs.prefetch("a", make)
    jobs.prefetch("a", make)
    results = []
    waiters = [threading.Thread(target=lambda: results.append(jobs.get("a", make))) for _ in range(3)]
    for w in waiters:
        w.start()
    release.set()
    for w in waiters:
        w.join(10)
    assert results == [42, 42, 42] and calls == [1]
    assert jobs.get("a", make) == 42 and calls == [1]  # kept


def test_a_waited_for_job_never_waits_behind_the_ones_started_ahead():
    jobs = background.Jobs(keep=8, workers=1)
    order = []
    release = _blocker(jobs)  # the one worker for jobs started ahead is busy
    for key in ("ahead-1", "ahead-2"):
        jobs.prefetch(key, lambda key=key: lambda: order.append(key))
    jobs.get("ahead-2", lambda: lambda: order.append("x"))  # waited for: moved to the other workers
    jobs.get("waited", lambda: lambda: order.append("waited"))
    assert order == ["ahead-2", "waited"]  # both while the worker ahead is still busy
    release.set()
    jobs.get("ahead-1", lambda: lambda: order.append("x"))
    assert order == ["ahead-2", "waited", "ahead-1"]  # each queued job joined, none computed twice


class _Work:
    """A job's function with an `ahead()`: the way it runs says which was called."""

    def __init__(self, hold: threading.Event | None = None) -> None:
        self.hold, self.started, self.promoted = hold, threading.Event(), []

    def __call__(self):
        return "called"

    def ahead(self):
        self.started.set()
        if self.hold is not None:
            self.hold.wait(BOUND_S)
        return "ahead"

    def promote(self):
        self.promoted.append(threading.current_thread().name)


def test_work_started_ahead_runs_its_ahead_and_is_promoted_when_someone_waits():
    jobs = background.Jobs(keep=8, workers=1)
    release = threading.Event()
    running = _Work(release)
    jobs.prefetch("running", lambda: running)
    assert running.started.wait(BOUND_S)
    queued = _Work()
    jobs.prefetch("queued", lambda: queued)  # behind it: the one worker ahead is busy
    assert jobs.get("queued", lambda: pytest.fail) == "called"  # waited for before it began: run here
    assert not queued.started.is_set() and not queued.promoted
    got = []
    waiter = threading.Thread(target=lambda: got.append(jobs.get("running", lambda: pytest.fail)))
    waiter.start()
    _until(lambda: running.promoted)  # waited for while it runs ahead: promoted, once
    release.set()
    waiter.join(BOUND_S)
    assert got == ["ahead"] and len(running.promoted) == 1
    assert jobs.get("running", lambda: pytest.fail) == "ahead" and len(running.promoted) == 1  # kept



def test_a_promotion_that_fails_is_logged_and_the_job_goes_on(caplog):
    class _Failing(_Work):
        def promote(self):
            raise OSError("not permitted")

    jobs = background.Jobs(keep=8, workers=1)
    release = threading.Event()
    running = _Failing(release)
    jobs.prefetch("running", lambda: running)
    assert running.started.wait(BOUND_S)
    got = []
    with caplog.at_level("WARNING", logger="lib.background"):
        waiter = threading.Thread(target=lambda: got.append(jobs.get("running", lambda: pytest.fail)))
        waiter.start()
        _until(lambda: caplog.records)
        release.set()
        waiter.join(BOUND_S)
    assert got == ["ahead"]
    assert [r.getMessage() for r in caplog.records] == ["raising a job started ahead failed: OSError: not permitted"]

def test_a_learners_newer_text_takes_the_place_of_their_lens_still_queued():
    """One job ahead per owner: a newer key of the same owner drops their older one from the queue,
    unless another owner asked for it too, someone waits for it, or it has begun."""
    jobs = background.Jobs(keep=8, workers=1)
    ran = []
    release = _blocker(jobs)

    def job(key):
        return lambda: lambda: ran.append(key) or key

    jobs.prefetch("anna-1", job("anna-1"), owner="anna")
    jobs.prefetch("anna-2", job("anna-2"), owner="anna")  # anna typed again: her first lens leaves
    assert not jobs.known("anna-1") and jobs.known("anna-2")
    jobs.prefetch("shared", job("shared"), owner="anna")
    jobs.prefetch("shared", job("shared"), owner="bruno")  # the teacher's example text, say
    jobs.prefetch("anna-3", job("anna-3"), owner="anna")
    assert jobs.known("shared")  # bruno still wants it
    held = _blocker(jobs, "hold-waited", waited=True)  # and the one for jobs waited for
    jobs.prefetch("carla-1", job("carla-1"), owner="carla")
    waiter = threading.Thread(target=lambda: jobs.get("carla-1", job("x")))
    waiter.start()
    _until(lambda: jobs._jobs["carla-1"].priority == background.WAITED)
    jobs.prefetch("carla-2", job("carla-2"), owner="carla")
    assert jobs.known("carla-1")  # carla is waiting for it
    jobs.prefetch("anna-3", job("anna-3"), owner="anna")  # the same text again changes nothing
    release.set()
    held.set()
    waiter.join(10)
    for key in ("anna-3", "shared", "carla-2"):
        assert jobs.get(key, job("x")) == key
    assert sorted(ran) == ["anna-3", "carla-1", "carla-2", "shared"]  # anna-1 and anna-2 never ran
    assert jobs._owned == {}  # nothing queued: nobody is remembered


def test_a_failed_job_reaches_its_waiters_and_is_not_kept():
    jobs = background.Jobs(keep=4, workers=1)
    with pytest.raises(ZeroDivisionError):
        jobs.get("bad", lambda: lambda: 1 / 0)
    assert not jobs.kept("bad")
    assert jobs.get("bad", lambda: lambda: "fixed") == "fixed"


def test_only_the_last_results_are_kept_and_the_workers_are_low_priority():
    jobs = background.Jobs(keep=2, workers=1)
    for key in "abc":
        jobs.get(key, lambda key=key: lambda: (key, background.thread_nice()))
    assert not jobs.kept("a") and jobs.kept("b") and jobs.kept("c")
    here = background.thread_nice()
    _, nice = jobs.get("c", lambda: None)
    assert nice >= min(19, here + background.LOW_NICE)


def test_switched_off_every_job_runs_in_the_callers_thread(monkeypatch):
    monkeypatch.setenv("ITT_LOW_PRIORITY", "off")
    jobs = background.Jobs(keep=2)
    jobs.prefetch("a", lambda: pytest.fail)  # nothing starts ahead of time
    assert not jobs.kept("a")
    assert jobs.get("a", lambda: lambda: threading.current_thread().name) == threading.current_thread().name
    assert jobs.get("a", lambda: pytest.fail) == threading.current_thread().name  # kept all the same


def test_closing_waits_for_the_running_job_and_starts_no_other():
    jobs = background.Jobs(keep=4, workers=1)
    release = _blocker(jobs)
    jobs.prefetch("queued", lambda: lambda: pytest.fail("started after closing"))
    closer = threading.Thread(target=jobs.close)
    closer.start()
    _until(lambda: jobs._closing)
    assert closer.is_alive()  # waiting for the running job
    release.set()
    closer.join(BOUND_S)
    assert not closer.is_alive() and jobs.kept("hold") and not jobs.known("queued")
    assert jobs.get("after", lambda: lambda: "inline") == "inline"  # computed in the caller's thread
