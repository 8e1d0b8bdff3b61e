"""lib/background.py: low-priority work returns the same result, computed on another thread that
the OS schedules after the others, as are the threads torch starts from it."""

import threading
import time

import pytest
import torch

from lib import background


def _where():
    return threading.current_thread().name, background.thread_nice(), background.thread_idle()


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
    name, nice, idle = jobs.get("where", lambda: _where)
    assert name.startswith("itt-low") and name != threading.current_thread().name
    assert nice >= min(19, here_nice + background.LOW_NICE) and not idle  # Linux: someone waits: niced
    jobs.prefetch("ahead", lambda: _where)
    _until(lambda: jobs.kept("ahead"))
    name, nice, idle = jobs.get("ahead", lambda: pytest.fail)
    assert name.startswith("itt-low") and nice >= min(19, here_nice + background.LOW_NICE)
    assert idle == (background.USE_IDLE_CLASS and hasattr(os, "SCHED_IDLE"))  # ahead: idle class if used
    if os.path.exists("/proc/self/task"):  # named so benchmarks can tell its CPU apart
        comm = background.Jobs(keep=4).get("comm", lambda: lambda: open(
            f"/proc/self/task/{threading.get_native_id()}/comm").read().strip())
        assert comm == "itt-low-jobs"
    # The caller's own settings are untouched.
    assert background.thread_nice() == here_nice and not background.thread_idle()


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
        pytest.skip("one torch thread: no team to start")
    w, x = torch.randn(4096, 576), torch.randn(256, 576)
    jobs = background.Jobs(keep=4)
    jobs.get("matmul", lambda: lambda: [x @ w.T for _ in range(3)])  # on a worker for the waited
    jobs.prefetch("ahead", lambda: lambda: [x @ w.T for _ in range(3)])  # on one for work ahead
    _until(lambda: jobs.kept("ahead"))
    low, idle = set(), set()
    for task in glob.glob("/proc/self/task/*"):
        with open(f"{task}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # from field 3 (state) on: see proc(5)
        tid, nice, policy = int(task.rsplit("/", 1)[1]), int(fields[16]), int(fields[38])
        if nice >= background.LOW_NICE:
            (idle if policy == getattr(os, "SCHED_IDLE", None) else low).add(tid)
    waited = {t.native_id for t in jobs._pools[background.WAITED]}
    ahead = {t.native_id for t in jobs._pools[background.AHEAD]}
    assert waited <= low and low - waited, "no torch thread at the waited workers' priority"
    if hasattr(os, "SCHED_IDLE") and background.USE_IDLE_CLASS:
        assert ahead <= idle and idle - ahead, "no torch thread in the idle class"
    else:
        assert ahead <= low


# --- Jobs: kept per key, started ahead, the waited-for first ----------------------------------


# Work started ahead runs in the idle class: on a machine the other test workers keep busy it may
# wait a long time for a core, so waits for it have a wide bound (a bound, not a timing assertion).
IDLE_BOUND_S = 120


def _until(condition, bound_s: float = IDLE_BOUND_S) -> None:
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
        release.wait(IDLE_BOUND_S)
        return key

    if waited:
        threading.Thread(target=lambda: jobs.get(key, lambda: hold), daemon=True).start()
    else:
        jobs.prefetch(key, lambda: hold)
    assert started.wait(IDLE_BOUND_S)
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


def test_a_job_waited_for_while_it_runs_ahead_leaves_the_idle_class(monkeypatch):
    import os

    if not hasattr(os, "SCHED_IDLE") or not background.USE_IDLE_CLASS:
        pytest.skip("no idle class here")
    jobs = background.Jobs(keep=4, workers=1)
    started, release = threading.Event(), threading.Event()

    def run():
        started.set()
        release.wait(IDLE_BOUND_S)
        return background.thread_idle()

    jobs.prefetch("lens", lambda: run)
    assert started.wait(IDLE_BOUND_S)
    tid = jobs._jobs["lens"].tid
    assert os.sched_getscheduler(tid) == os.SCHED_IDLE
    got = []
    waiter = threading.Thread(target=lambda: got.append(jobs.get("lens", lambda: pytest.fail)))
    waiter.start()
    _until(lambda: jobs._jobs["lens"].priority == background.WAITED)
    release.set()
    waiter.join(IDLE_BOUND_S)
    if os.geteuid() == 0:  # allowed to raise a priority: out of the idle class (at nice +10 still)
        assert got == [False]
    # The worker goes back to the idle class for its next job started ahead.
    jobs.prefetch("next", lambda: background.thread_idle)
    _until(lambda: jobs.kept("next"))
    assert jobs.get("next", lambda: pytest.fail) is True


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
    closer.join(IDLE_BOUND_S)
    assert not closer.is_alive() and jobs.kept("hold") and not jobs.known("queued")
    assert jobs.get("after", lambda: lambda: "inline") == "inline"  # computed in the caller's thread
