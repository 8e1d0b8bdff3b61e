"""Work a learner waits for while reading: done on a few worker threads at a lower CPU priority.

A class shares one server. Some results are big and only wanted once the learner scrolls to them
(the logit lens: 31 layers × 24 positions × 49,152 logits). Computed in the session's own thread,
they compete on equal terms with every other learner's slider move and new text, and a class that
reaches them together queues everything behind them. `run_low(fn, ...)` runs `fn` on a small pool
of threads that the operating system schedules after the others (nice +10 on Linux; the threads
torch starts from them for its parallel loops inherit it), then returns its result to the caller,
which waits as before. A quiet server gives them every core, as before; a busy one serves the
other learners' inputs first. The result is the same function's result: only *when* the CPU works
on it changes.

`ITT_LOW_PRIORITY=off` runs everything in the caller's thread, as before (for comparisons).
Where the OS refuses a nice value (not Linux), the pool still runs, at normal priority.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

T = TypeVar("T")

LOW_NICE = 10  # added to the process's nice value; the kernel gives such a thread ~1/10 of a normal one's share
WORKERS = 2

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def enabled() -> bool:
    """False when ITT_LOW_PRIORITY is off/0/false/no."""
    return os.environ.get("ITT_LOW_PRIORITY", "on").strip().lower() not in ("off", "0", "false", "no")


def _lower_this_thread() -> None:
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + LOW_NICE)
    except (AttributeError, OSError):
        pass  # no per-thread priority here: the work runs at normal priority


def thread_nice() -> int:
    """The calling thread's nice value (for tests and benchmarks)."""
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="itt-low",
                                       initializer=_lower_this_thread)
        return _pool


def run_low(fn: Callable[..., T], *args, **kwargs) -> T:
    """fn(*args, **kwargs), computed on a low-priority worker thread; exceptions propagate.

    Example: run_low(sum, [1, 2, 3]) -> 6
    """
    if not enabled() or threading.current_thread().name.startswith("itt-low"):
        return fn(*args, **kwargs)
    return _get_pool().submit(fn, *args, **kwargs).result()
