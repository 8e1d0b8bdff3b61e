"""Work a learner waits for while reading: done on a few worker threads at a lower CPU priority.

A class shares one server. Some results are big and only wanted once the learner scrolls to them
(the logit lens: 31 layers × 24 positions × 49,152 logits). Computed in the session's own thread,
they compete on equal terms with every other learner's slider move and new text, and a class that
reaches them together queues everything behind them. `Jobs` computes them on threads of its own
at nice +10, which the operating system schedules after the others (the threads torch starts from
them for its parallel loops inherit it). A quiet server gives them every core; a busy one serves
the other learners' inputs first. The result is the same function's result: only *when* and
*where* the CPU works on it changes.

What a class needs on top: results kept per key, each computed once, started ahead of time
(`prefetch`: as soon as a learner's text is known, so the CPU a class leaves idle while they
read works it out; one queued per learner, of their latest text), and a learner who is waiting
is served by workers of their own, never behind a prefetch still queued.

Work started ahead may go further down: a job whose function has an `ahead()` runs that instead,
one at a time, such as the logit lens handed to a process of its own in Linux's idle class
(lib/lens_worker.py: a core only when nobody else wants one). Not a thread of the server in the
idle class: a starved one that holds Python's lock (the GIL) stalls every thread of the server.
When someone starts waiting for such a job, its `promote()` is called.

`ITT_LOW_PRIORITY=off` runs everything in the caller's thread, as before (for comparisons).
Where the OS refuses a per-thread priority (not Linux), the workers run at normal priority.
"""

from __future__ import annotations

import atexit
import ctypes
import heapq
import itertools
import logging
import os
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable, TypeVar

from lib.log import failure

T = TypeVar("T")
log = logging.getLogger(__name__)

LOW_NICE = 10  # added to the process's nice value: about a tenth of a normal thread's share of a core
WORKERS = 2  # threads for work someone waits for
AHEAD_WORKERS = 1  # threads for work started ahead: one at a time, behind everything else


def enabled() -> bool:
    """False when ITT_LOW_PRIORITY is off/0/false/no."""
    return os.environ.get("ITT_LOW_PRIORITY", "on").strip().lower() not in ("off", "0", "false", "no")


def _name_this_thread(name: bytes) -> None:
    """The thread's name as the OS shows it (/proc/<pid>/task/<tid>/comm, top -H), so a benchmark
    can tell these workers' CPU from the learners' runs (scripts/load_driver.py)."""
    try:
        ctypes.CDLL(None).prctl(15, ctypes.c_char_p(name[:15]), 0, 0, 0)  # 15: PR_SET_NAME
    except (AttributeError, OSError, TypeError):
        pass  # not Linux: the name is only for benchmarks


def _lower_this_thread() -> None:
    """nice +10 for this thread, and the name benchmarks look for."""
    _name_this_thread(b"itt-low-jobs")
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + LOW_NICE)
    except (AttributeError, OSError):
        pass  # no per-thread priority here: the work runs at normal priority


def thread_nice() -> int:
    """The calling thread's nice value (for tests and benchmarks)."""
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


WAITED, AHEAD = 0, 1  # a job's priority: someone waits for it, or it was started ahead of time


class _Job:
    def __init__(self, fn: Callable[[], Any], priority: int) -> None:
        self.fn, self.priority = fn, priority
        self.started = False
        self.owners: set[Hashable] = set()  # who started it ahead (see Jobs.prefetch)
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class Jobs:
    """Results by key, each computed once on low-priority threads of its own.

    `get(key, make)` returns the result: kept, being computed (it waits), queued (it moves the job
    to the waited-for queue and waits) or new (queued there). `prefetch(key, make)` queues it
    ahead and returns at once. `make()` returns the function to run; it is called in the caller's
    thread, only when the key is neither kept nor queued. The last `keep` results are kept; a
    failed job is not (the next `get` tries again, its waiters get the exception).

    Two sets of threads at nice +10, started when first needed: up to `workers` for waited-for
    jobs, so someone waiting is never behind work started ahead, and `AHEAD_WORKERS` for jobs
    started ahead, which run `fn.ahead()` where the function has one (see the module's notes).

    Example: jobs = Jobs(keep=8); jobs.prefetch("a", lambda: lambda: 6 * 7); jobs.get("a", ...) -> 42
    """

    def __init__(self, keep: int, workers: int = WORKERS) -> None:
        self.keep, self.workers = keep, workers
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, Any] = OrderedDict()
        self._jobs: dict[Hashable, _Job] = {}
        self._owned: dict[Hashable, Hashable] = {}  # owner -> the key they last started ahead
        # Per priority: a queue of (order, key), stale entries skipped, and its worker threads.
        self._queues: dict[int, list[tuple[int, Hashable]]] = {WAITED: [], AHEAD: []}
        self._pools: dict[int, list[threading.Thread]] = {WAITED: [], AHEAD: []}
        self._order = itertools.count()
        self._wake = threading.Condition(self._lock)
        self._closing = False
        atexit.register(self.close)

    @property
    def _threads(self) -> list[threading.Thread]:
        return self._pools[WAITED] + self._pools[AHEAD]

    def close(self, timeout_s: float = 60.0) -> None:
        """Start nothing more and wait for the jobs running now (at exit: a worker stopped in the
        middle of a torch operation while Python shuts down makes the process abort)."""
        with self._lock:
            self._closing = True
            for queue in self._queues.values():
                queue.clear()
            running = [job for job in self._jobs.values() if job.started]
            for key, job in list(self._jobs.items()):
                if not job.started:  # anyone waiting for it hears why
                    job.error = RuntimeError("the server is shutting down")
                    del self._jobs[key]
                    job.done.set()
            self._wake.notify_all()
        for job in running:
            job.done.wait(timeout_s)
        for thread in self._threads:  # idle workers return once woken: let them end before Python does
            if thread is not threading.current_thread():
                thread.join(timeout_s)

    def _push(self, key: Hashable, job: _Job) -> None:  # under the lock
        heapq.heappush(self._queues[job.priority], (next(self._order), key))
        pool = self._pools[job.priority]
        if len(pool) < (self.workers if job.priority == WAITED else AHEAD_WORKERS):
            kind = "waited" if job.priority == WAITED else "ahead"
            t = threading.Thread(target=self._work, args=(job.priority,), daemon=True,
                                 name=f"itt-low-jobs-{kind}-{len(pool)}")
            pool.append(t)
            t.start()
        self._wake.notify_all()  # workers of both kinds wait on this condition

    def _keep(self, key: Hashable, result: Any) -> None:  # under the lock
        self._kept[key] = result
        while len(self._kept) > self.keep:
            self._kept.popitem(last=False)

    def _work(self, priority: int) -> None:
        _lower_this_thread()
        queue = self._queues[priority]
        while True:
            with self._lock:
                while True:
                    while not queue and not self._closing:
                        self._wake.wait()
                    if self._closing:
                        return
                    _, key = heapq.heappop(queue)
                    job = self._jobs.get(key)
                    if job is not None and not job.started and job.priority == priority:
                        job.started = True
                        break
            run = getattr(job.fn, "ahead", job.fn) if priority == AHEAD else job.fn
            try:
                job.result = run()
            except BaseException as e:  # handed to whoever waits; the worker goes on
                job.error = e
            with self._lock:
                self._jobs.pop(key, None)
                for owner in job.owners:  # done: nothing of theirs is queued any more
                    if self._owned.get(owner) == key:
                        del self._owned[owner]
                if job.error is None:
                    self._keep(key, job.result)
            job.done.set()

    def prefetch(self, key: Hashable, make: Callable[[], Callable[[], Any]], owner: Hashable | None = None) -> None:
        """Queue the result of make()() behind every waited-for job, unless kept or queued already.

        An `owner` (say, a learner) has one job started ahead at a time: their previous one, if it
        has not begun and nobody else asked for it, leaves the queue."""
        if not enabled() or threading.current_thread().name.startswith("itt-low"):
            return
        with self._lock:
            if owner is not None:
                self._own(owner, key)
            if key in self._kept or key in self._jobs:
                return
        fn = make()
        with self._lock:
            if key not in self._kept and key not in self._jobs:
                self._jobs[key] = job = _Job(fn, AHEAD)
                if owner is not None:
                    job.owners.add(owner)
                    self._owned[owner] = key
                self._push(key, job)

    def _own(self, owner: Hashable, key: Hashable) -> None:  # under the lock
        """`owner` now wants `key` ahead: their previous job ahead leaves the queue if nobody else
        asked for it and it has not begun."""
        old = self._owned.pop(owner, None)
        if old is not None and old != key:
            previous = self._jobs.get(old)
            if previous is not None:
                previous.owners.discard(owner)
                if not previous.owners and not previous.started and previous.priority == AHEAD:
                    del self._jobs[old]  # its place in the queue is skipped
        job = self._jobs.get(key)
        if job is not None:
            job.owners.add(owner)
            self._owned[owner] = key

    def get(self, key: Hashable, make: Callable[[], Callable[[], T]]) -> T:
        """The result for key: kept, or computed now at the front of the queue (the caller waits)."""
        if not enabled() or self._closing or threading.current_thread().name.startswith("itt-low"):
            with self._lock:
                if key in self._kept:
                    return self._kept[key]
            result = make()()  # in this thread: switched off, or a job asking for another
            with self._lock:
                self._keep(key, result)
            return result
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
            job = self._jobs.get(key)
            if job is not None:
                self._wait_for(key, job)
        if job is None:
            fn = make()
            with self._lock:
                job = self._jobs.get(key)
                if job is None and key not in self._kept:
                    self._jobs[key] = job = _Job(fn, WAITED)
                    self._push(key, job)
                elif job is None:
                    return self._kept[key]
                else:
                    self._wait_for(key, job)
        job.done.wait()
        if job.error is not None:
            raise job.error
        return job.result

    def _wait_for(self, key: Hashable, job: _Job) -> None:  # under the lock, found in self._jobs
        """Someone waits for `job` (and no owner's newer text drops it now)."""
        if job.priority == WAITED:
            return
        job.priority = WAITED
        if not job.started:  # to the waited-for queue; its place in the other is skipped
            self._push(key, job)
        else:  # running ahead: raised, if it can be
            promote = getattr(job.fn, "promote", None)
            if promote is not None:
                try:
                    promote()
                except Exception as e:  # only sooner: the job goes on where it is, the failure logged
                    failure(log, "raising a job started ahead", e)

    def kept(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._kept

    def known(self, key: Hashable) -> bool:
        """Kept, queued or being computed."""
        with self._lock:
            return key in self._kept or key in self._jobs
