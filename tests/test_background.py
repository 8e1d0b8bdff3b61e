"""lib/background.py: low-priority work returns the same result, computed on another thread that
the OS schedules after the others, as are the threads torch starts from it."""

import threading

import pytest
import torch

from lib import background


def _where():
    return threading.current_thread().name, background.thread_nice()


def test_result_and_exceptions_come_back():
    assert background.run_low(sum, [1, 2, 3]) == 6
    assert background.run_low(lambda a, b=0: a * b, 6, b=7) == 42
    with pytest.raises(ZeroDivisionError):
        background.run_low(lambda: 1 / 0)


def test_runs_on_a_low_priority_single_torch_thread(monkeypatch):
    monkeypatch.delenv("ITT_LOW_PRIORITY", raising=False)
    here_nice = background.thread_nice()
    name, nice = background.run_low(_where)
    assert name.startswith("itt-low") and name != threading.current_thread().name
    assert nice >= min(19, here_nice + background.LOW_NICE)  # Linux: the worker is niced
    # The caller's own settings are untouched.
    assert background.thread_nice() == here_nice


def test_nested_and_switched_off_run_inline(monkeypatch):
    me = threading.current_thread().name
    assert background.run_low(lambda: background.run_low(_where))[0].startswith("itt-low")  # no deadlock
    monkeypatch.setenv("ITT_LOW_PRIORITY", "off")
    assert background.run_low(_where)[0] == me


def test_same_lens_on_the_pool(tiny_llama):
    from lib.capture import run_capture
    from lib.logit_lens import logit_lens
    cap = run_capture(tiny_llama, "the cat sat on the mat")
    here = logit_lens(tiny_llama, cap.resid, k=3)
    there = background.run_low(logit_lens, tiny_llama, cap.resid, k=3)
    assert (here.top_ids == there.top_ids).all()
    assert abs(here.top_probs - there.top_probs).max() < 1e-5


def test_torch_threads_started_from_the_pool_inherit_its_priority():
    """torch's parallel loops run on a team of threads started by the calling thread; started from a
    low-priority worker, they are low-priority too (Linux threads inherit their creator's nice value)."""
    import glob
    import os

    if torch.get_num_threads() < 2 or not hasattr(os, "getpriority"):
        pytest.skip("one torch thread: no team to start")
    w, x = torch.randn(4096, 576), torch.randn(256, 576)
    background.run_low(lambda: [x @ w.T for _ in range(3)])
    workers = {t.native_id for t in background._get_pool()._threads}
    low = set()
    for task in glob.glob("/proc/self/task/*"):
        with open(f"{task}/stat") as f:
            nice = int(f.read().rsplit(")", 1)[1].split()[16])
        if nice >= background.LOW_NICE:
            low.add(int(task.rsplit("/", 1)[1]))
    assert workers <= low
    assert low - workers, "no torch thread at the workers' priority"
