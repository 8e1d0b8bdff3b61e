"""lib/background.py: low-priority work returns the same result, computed on another thread that
the OS schedules after the others and that uses one torch thread."""

import threading

import pytest
import torch

from lib import background


def _where():
    return threading.current_thread().name, background.thread_nice(), torch.get_num_threads()


def test_result_and_exceptions_come_back():
    assert background.run_low(sum, [1, 2, 3]) == 6
    assert background.run_low(lambda a, b=0: a * b, 6, b=7) == 42
    with pytest.raises(ZeroDivisionError):
        background.run_low(lambda: 1 / 0)


def test_runs_on_a_low_priority_single_torch_thread(monkeypatch):
    monkeypatch.delenv("ITT_LOW_PRIORITY", raising=False)
    here_nice = background.thread_nice()
    name, nice, threads = background.run_low(_where)
    assert name.startswith("itt-low") and name != threading.current_thread().name
    assert threads == 1
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
