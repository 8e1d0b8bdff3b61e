"""lib/serving/lens_service.py: the lens of a text, submitted ahead or waited for, is the lens worked out
here (lib/lessons/logit_lens.py), worked out once per key in the lens process or on the service's own
low-priority threads; urgent lenses go first, a learner's newer text replaces their older one, and
every failure is logged and reaches whoever waits.

The queue's tests run a service whose work is a function of the test's (`_Service`): what they
check is the order, the threads and the kept results, not the lens."""

from __future__ import annotations

import glob
import os
import threading
import time

import numpy as np
import pytest
import torch

from lib.lessons.logit_lens import logit_lens
from lib.model.capture import head_logits, run_capture
from lib.serving import lens_service
from lib.serving.lens_service import LensError, LensService, lens_check_diff, lens_request, thread_nice
from lib.serving.lens_worker import LensProcess, LensProcessError
from tests.ci import skip_or_fail

# Work runs at nice +10: on a machine the other test workers keep busy it may wait a long time for
# a core, so waits for it have a wide bound (a bound, not a timing assertion).
BOUND_S = 120


def _until(condition, bound_s: float = BOUND_S) -> None:
    """Wait until another thread has done its step (a bounded poll, not a timing assertion)."""
    deadline = time.monotonic() + bound_s
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "lib.serving.lens_service"]


# --- the lens itself ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def process():
    proc = LensProcess()
    yield proc
    proc.close()


def _same(a, b) -> None:
    assert (a.top_ids == b.top_ids).all() and (a.final_rank == b.final_rank).all()
    assert (a.positions == b.positions).all()
    assert np.abs(a.top_probs - b.top_probs).max() < 1e-5 and np.abs(a.final_prob - b.final_prob).max() < 1e-5


def test_a_lens_submitted_ahead_or_waited_for_is_the_lens_worked_out_here(process, tiny_llama):
    """Through the lens process (idle class ahead, nice +10 waited for), the same lens as
    `logit_lens` on the same rows, at the text's last positions, with the live check of the model's
    own output; a waited lens is kept and given again without another computation."""
    if not os.path.exists("/proc/self/task"):
        skip_or_fail("Linux's /proc: the lens process is Linux's")
    service = LensService(process, keep=8).start()
    _until(lambda: process.pid is not None)  # started with the service, before any lens
    for text, window in (("the cat sat on the mat, and then", 4), ("one two three", 24)):
        cap = run_capture(tiny_llama, text)
        request = lens_request("tiny_llama", tiny_llama, cap, window, k=3)
        here = logit_lens(tiny_llama, cap.resid, positions=request.positions, k=3)
        service.submit(text, lambda: request)  # ahead
        lens, gap = service.result(text, lambda: pytest.fail("asked twice"))
        _same(lens, here)
        assert list(lens.positions) == list(range(max(0, cap.n_tokens - window), cap.n_tokens))
        assert (lens.final_ids == cap.logits[lens.positions].argmax(-1)).all()  # the model's own prediction
        check = lens_check_diff(here, head_logits(tiny_llama, request.rows[-1]), tiny_llama.info.n_layers)
        assert gap < 1e-4 and gap == pytest.approx(check, abs=1e-6)
        assert service.ready(text) and service.result(text, lambda: pytest.fail("not kept"))[0] is lens
    assert process._model == "tiny_llama"  # the lenses went there: it holds the model's unembedding
    waited, _ = service.result("waited", lambda: lens_request("tiny_llama", tiny_llama, cap, 24, k=3))  # urgent first
    _same(waited, logit_lens(tiny_llama, cap.resid, k=3))
    service.close()


def test_a_lens_process_that_fails_is_logged_once_and_the_lens_worked_out_here(monkeypatch, caplog, tiny_llama):
    def refused(*_, **__):
        raise LensProcessError("not allowed to raise the lens process (test)")

    monkeypatch.setattr(lens_service, "logit_lens_elsewhere", refused)
    service = LensService(LensProcess(), keep=8).start()
    with caplog.at_level("WARNING", logger="lib.serving.lens_service"):
        for text in ("a b c d", "e f g h"):
            cap = run_capture(tiny_llama, text)
            lens, gap = service.result(text, lambda: lens_request("tiny_llama", tiny_llama, cap, 24))
            _same(lens, logit_lens(tiny_llama, cap.resid))
            assert gap < 1e-4
    assert _messages(caplog) == [  # the same cause: one line
        "the logit lens in its own process failed: LensProcessError: not allowed to raise the lens process (test)"]
    service.close()


def test_a_lens_process_that_cannot_start_is_logged_and_the_lenses_worked_out_here(monkeypatch, caplog, tiny_llama):
    from lib.serving import lens_worker

    def no_fork(*_, **__):
        raise OSError("no fork (test)")

    monkeypatch.setattr(lens_worker.subprocess, "Popen", no_fork)
    with caplog.at_level("WARNING", logger="lib.serving.lens_service"):
        service = LensService(LensProcess(), keep=8).start()
        cap = run_capture(tiny_llama, "i j k l")
        lens, gap = service.result("ijkl", lambda: lens_request("tiny_llama", tiny_llama, cap, 24))
        _until(lambda: len(_messages(caplog)) == 2)
    _same(lens, logit_lens(tiny_llama, cap.resid))
    assert gap < 1e-4
    cause = "LensProcessError: the lens process did not start: no fork (test)"
    assert sorted(_messages(caplog)) == [f"starting the lens process failed: {cause}",
                                         f"the logit lens in its own process failed: {cause}"]
    service.close()


def test_the_service_must_be_started_where_the_lens_is_needed(tiny_llama):
    service = LensService(None)
    with pytest.raises(RuntimeError, match="not started"):
        service.submit("k", lambda: pytest.fail("built"))
    with pytest.raises(RuntimeError, match="not started"):
        service.result("k", lambda: pytest.fail("built"))
    assert service.start() is service and service.start() is service and len(service._threads) == 3
    cap = run_capture(tiny_llama, "no process")
    lens, gap = service.result("k", lambda: lens_request("m", tiny_llama, cap, 24))  # on its own threads
    _same(lens, logit_lens(tiny_llama, cap.resid))
    service.close()


# --- the queue --------------------------------------------------------------------------------------


class _Task:
    """What `_Service` runs for a key: `fn(urgent)`, urgent the job's Event."""

    def __init__(self, fn, model_key="test-model") -> None:
        self.fn, self.model_key = fn, model_key


class _Service(LensService):
    def _compute(self, request, urgent):
        return request.fn(urgent)


def _task(fn):
    return lambda: _Task(lambda urgent: fn())


def _where():
    return threading.current_thread().name, thread_nice()


def _blocker(service: LensService, key="hold", urgent=False):
    """Occupy the service's one thread for lenses ahead (or, `urgent`, one for lenses waited for)
    until the returned event is set."""
    started, release = threading.Event(), threading.Event()

    def hold(_urgent):
        started.set()
        release.wait(BOUND_S)
        return key

    service.submit(key, lambda: _Task(hold), urgent=urgent)
    assert started.wait(BOUND_S)
    return release


def test_results_come_back_and_failures_are_logged_raised_and_not_kept(caplog):
    service = _Service(None, keep=4, threads=2).start()
    assert service.result("sum", _task(lambda: sum([1, 2, 3]))) == 6
    with caplog.at_level("WARNING", logger="lib.serving.lens_service"):
        with pytest.raises(LensError, match="ZeroDivisionError") as failed:
            service.result("bad", _task(lambda: 1 / 0))
    assert isinstance(failed.value.__cause__, ZeroDivisionError)
    assert _messages(caplog) == ["the logit lens of a text on test-model failed: ZeroDivisionError: division by zero"]
    assert not service.known("bad")
    assert service.result("bad", _task(lambda: "fixed")) == "fixed"  # the next one tries again
    service.close()


def test_lenses_run_on_named_low_priority_threads_and_the_callers_own_is_untouched():
    here = thread_nice()
    service = _Service(None, keep=4).start()
    name, nice = service.result("where", _task(_where))
    assert name.startswith("itt-low-lens") and name != threading.current_thread().name
    assert nice >= min(19, here + lens_service.LOW_NICE)
    service.submit("ahead", _task(_where))
    _until(lambda: service.ready("ahead"))
    assert service.result("ahead", lambda: pytest.fail("not kept"))[1] >= min(19, here + lens_service.LOW_NICE)
    if os.path.exists("/proc/self/task"):  # named so benchmarks can tell its CPU apart
        comm = service.result("comm", _task(lambda: open(
            f"/proc/self/task/{threading.get_native_id()}/comm").read().strip()))
        assert comm == "itt-low-lens"
    assert thread_nice() == here
    service.close()


def test_torch_threads_started_from_the_service_inherit_its_priority():
    """torch's parallel loops run on a team of threads started by the calling thread; started from
    the service's threads, they are low-priority too (Linux threads inherit their creator's nice value)."""
    if torch.get_num_threads() < 2 or not hasattr(os, "getpriority"):
        skip_or_fail("one torch thread: no team to start")
    w, x = torch.randn(4096, 576), torch.randn(256, 576)
    service = _Service(None, keep=4).start()
    service.result("matmul", _task(lambda: [x @ w.T for _ in range(3)]))
    low = set()
    for task in glob.glob("/proc/self/task/*"):
        with open(f"{task}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # from field 3 (state) on: see proc(5)
        if int(fields[16]) >= lens_service.LOW_NICE:
            low.add(int(task.rsplit("/", 1)[1]))
    threads = {t.native_id for t in service._threads}
    assert threads <= low and low - threads, "no torch thread at the service's priority"
    service.close()


def test_a_lens_is_computed_once_whoever_asks_and_however_often():
    service = _Service(None, keep=4, threads=2).start()
    calls = []
    release = _blocker(service)  # the one thread for lenses ahead is busy
    make = _task(lambda: calls.append(1) or 42)
    service.submit("a", make)
    service.submit("a", make)
    results = []
    waiters = [threading.Thread(target=lambda: results.append(service.result("a", make))) for _ in range(3)]
    for waiter in waiters:
        waiter.start()
    for waiter in waiters:
        waiter.join(BOUND_S)
    assert results == [42, 42, 42] and calls == [1]  # urgent: worked out while the lens ahead still runs
    release.set()
    assert service.result("a", make) == 42 and calls == [1]  # kept
    service.close()


def test_an_urgent_lens_never_waits_behind_the_ones_submitted_ahead():
    service = _Service(None, keep=8, threads=2).start()
    order = []
    release = _blocker(service)  # the one thread for lenses ahead is busy
    for key in ("ahead-1", "ahead-2"):
        service.submit(key, _task(lambda key=key: order.append(key)))
    service.result("ahead-2", _task(lambda: order.append("x")))  # waited for: moved to the front
    service.result("waited", _task(lambda: order.append("waited")))
    assert order == ["ahead-2", "waited"]  # both while the lens ahead is still running
    release.set()
    service.result("ahead-1", _task(lambda: order.append("x")))
    assert order == ["ahead-2", "waited", "ahead-1"]  # each queued lens joined, none computed twice
    service.close()


class _Process:
    """Stands for the lens process where only its raising is watched."""

    def __init__(self, fails: bool = False) -> None:
        self.fails, self.promoted, self.closed, self.started = fails, [], False, 0

    def start(self):
        self.started += 1
        self.started_by = threading.current_thread().name

    def promote(self):
        self.promoted.append(threading.current_thread().name)
        if self.fails:
            raise OSError("not permitted")
        return True


@pytest.mark.parametrize("fails", [False, True])
def test_a_lens_running_ahead_is_raised_once_when_someone_waits_for_it(caplog, fails):
    process = _Process(fails)
    service = _Service(process, keep=8, threads=2).start()
    started, release, seen = threading.Event(), threading.Event(), []

    def running(urgent):
        seen.append(urgent.is_set())
        started.set()
        release.wait(BOUND_S)
        seen.append(urgent.is_set())  # what the lens process reads to raise its own priority
        return "ahead"

    _until(lambda: process.started == 1)  # the service starts its process with itself, once,
    assert process.started_by.startswith("itt-low-lens")  # from a thread that lives as long as it does
    service.start()
    assert process.started == 1
    service.submit("running", lambda: _Task(running))
    assert started.wait(BOUND_S)
    got = []
    with caplog.at_level("WARNING", logger="lib.serving.lens_service"):
        waiters = [threading.Thread(target=lambda: got.append(service.result("running", pytest.fail)))
                   for _ in range(2)]
        for waiter in waiters:
            waiter.start()
        _until(lambda: process.promoted)
        release.set()
        for waiter in waiters:
            waiter.join(BOUND_S)
    assert got == ["ahead", "ahead"] and seen == [False, True]
    assert len(process.promoted) == 1  # raised once, by the first who waited
    assert _messages(caplog) == (["raising a lens started ahead failed: OSError: not permitted"] if fails else [])
    service.close()


def test_a_learners_newer_text_takes_the_place_of_their_lens_still_queued():
    """One lens ahead per owner: a newer key of the same owner drops their older one from the queue,
    unless another owner asked for it too, someone waits for it, or it has begun."""
    service = _Service(None, keep=8, threads=2).start()
    ran = []
    release = _blocker(service)

    def job(key):
        return _task(lambda: ran.append(key) or key)

    service.submit("anna-1", job("anna-1"), owner="anna")
    service.submit("anna-2", job("anna-2"), owner="anna")  # anna typed again: her first lens leaves
    assert not service.known("anna-1") and service.known("anna-2")
    service.submit("shared", job("shared"), owner="anna")
    service.submit("shared", job("shared"), owner="bruno")  # the teacher's example text, say
    service.submit("anna-3", job("anna-3"), owner="anna")
    assert service.known("shared")  # bruno still wants it
    held = _blocker(service, "hold-urgent", urgent=True)  # and the one thread for lenses waited for
    service.submit("carla-1", job("carla-1"), owner="carla")
    waiter = threading.Thread(target=lambda: service.result("carla-1", job("x")))
    waiter.start()
    _until(lambda: service._jobs["carla-1"].urgent.is_set())
    service.submit("carla-2", job("carla-2"), owner="carla")
    assert service.known("carla-1")  # carla is waiting for it
    service.submit("anna-3", job("anna-3"), owner="anna")  # the same text again changes nothing
    release.set()
    held.set()
    waiter.join(BOUND_S)
    for key in ("anna-3", "shared", "carla-2"):
        assert service.result(key, job("x")) == key
    assert sorted(ran) == ["anna-3", "carla-1", "carla-2", "shared"]  # anna-1 and anna-2 never ran
    assert service._owned == {}  # nothing queued: nobody is remembered
    service.close()


def test_only_the_last_results_are_kept():
    service = _Service(None, keep=2, threads=2).start()
    for key in "abc":
        service.result(key, _task(lambda key=key: key))
    assert not service.ready("a") and service.ready("b") and service.ready("c")
    assert service.result("a", _task(lambda: "again")) == "again"
    service.close()


def test_closing_waits_for_the_running_lens_and_starts_no_other():
    service = _Service(None, keep=4, threads=2).start()
    release = _blocker(service)
    service.submit("queued", _task(lambda: pytest.fail("started after closing")))
    closer = threading.Thread(target=service.close)
    closer.start()
    _until(lambda: service._closing)
    assert closer.is_alive()  # waiting for the running lens
    release.set()
    closer.join(BOUND_S)
    assert not closer.is_alive() and service.ready("hold") and not service.known("queued")
    with pytest.raises(RuntimeError, match="closed"):
        service.result("after", _task(lambda: "late"))

