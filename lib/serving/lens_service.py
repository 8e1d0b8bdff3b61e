"""The logit lens as a service: `submit` a text's lens, ask for its `result`; `urgent` when a learner waits.

A lens is 31 layers × 24 positions × 49,152 logits for the built-in model, nearly all of it one
matrix product through the unembedding: about a CPU-second on a 2-core server (the figures are in
docs/architecture.md). Worked out in a learner's run, thirty learners reaching it together would
hold every other learner's slider, answer and new text behind theirs. So the block lesson submits
its text's lens as it opens, and the service works it out while the learner reads down to it:

- not urgent (submitted ahead): one at a time, in the lens process (lib/serving/lens_worker.py) in Linux's
  idle class, where it takes only a core nobody else wants;
- urgent (someone waits: `result`, or `submit(urgent=True)`): before every lens not urgent, in the
  lens process at nice +10; a lens not urgent that someone starts waiting for is raised where it is.
  Where the process cannot take a lens (no process, an unembedding it does not hold, a priority the
  OS will not raise), the service's own threads work it out at nice +10 (never the learner's run).

Each key is computed once, whoever asks and however often; the last `keep` results are kept. A
learner (an `owner`) has at most one lens not urgent queued: a newer text of theirs takes its place,
so a learner trying ten sentences queues one lens, not ten. A failure is logged (one line with its
cause, lib/serving/log.py), reaches whoever waits as a `LensError`, and is not kept: the next `result` tries
again.

The service is started explicitly where the lens is needed (`start`: its threads and the lens
process); `submit` and `result` on a service not started raise.

Deliberately left out: streamlit (ui/lessons/block/lens_service.py reads the model and the capture and holds the
server's one service) and the lens's arithmetic (lib/lessons/logit_lens.py).
"""

from __future__ import annotations

import atexit
import ctypes
import dataclasses
import heapq
import itertools
import logging
import os
import threading
from collections import OrderedDict
from typing import Callable, Hashable

import numpy as np

from lib.lessons.logit_lens import Lens, lens_positions, logit_lens, logit_lens_elsewhere
from lib.model.capture import Capture, head_logits
from lib.model.models import LoadedModel
from lib.serving.lens_worker import LensProcess, LensProcessError
from lib.serving.log import cause, failure

log = logging.getLogger(__name__)
LOW_NICE = 10  # added to the server's nice value: about a tenth of a normal thread's share of a core
THREADS = 3  # the service's threads; at most one of them on a lens not urgent at a time
THREAD_NAME = b"itt-low-lens"  # as the OS shows it (top -H): the load driver counts its CPU apart
URGENT, AHEAD = 0, 1  # queue order: someone waits for it, or it was submitted ahead


class LensError(RuntimeError):
    """A lens could not be worked out (its cause is the exception's __cause__, logged already)."""


@dataclasses.dataclass(frozen=True)
class LensRequest:
    """One lens to work out: a model's residual stream at the lens's positions. Built in the
    caller's thread from its capture, so the service never runs a forward pass (it would hold the
    model's lock)."""

    model_key: Hashable  # names the model to the lens process
    loaded: LoadedModel
    rows: np.ndarray  # [L+1, P, D] the residual stream at `positions`
    positions: np.ndarray  # [P] their positions in the text
    k: int = 5


def lens_request(model_key: Hashable, loaded: LoadedModel, cap: Capture, window: int, k: int = 5) -> LensRequest:
    """The request for the lens of `cap`'s last `window` positions.

    Example: lens_request("m", lm, cap, 24).rows.shape == (L + 1, min(24, cap.n_tokens), D)
    """
    pos = lens_positions(cap.n_tokens, window)
    return LensRequest(model_key, loaded, np.ascontiguousarray(cap.resid[:, pos]), pos, k)


def lens_check_diff(lens: Lens, logits: np.ndarray, n_layers: int) -> float:
    """The oracle, live: at the last layer the lens must be the model itself. The largest gap
    between the lens's top probabilities there and the model's own from `logits` [P, V] (its last
    step at the lens's positions).

    Example: lens_check_diff(lens, head_logits(lm, rows[-1]), L) < 1e-4
    """
    logits = np.asarray(logits, dtype=np.float64)
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    model_top = np.take_along_axis(probs, lens.top_ids[n_layers], axis=-1)
    return float(np.abs(model_top - lens.top_probs[n_layers]).max())


def thread_nice() -> int:
    """The calling thread's nice value (for tests and benchmarks)."""
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def _lower_this_thread() -> None:
    """This thread at nice +10 (the threads torch starts from it inherit it), named for the OS."""
    try:
        ctypes.CDLL(None).prctl(15, ctypes.c_char_p(THREAD_NAME), 0, 0, 0)  # 15: PR_SET_NAME
    except (AttributeError, OSError, TypeError):
        pass  # not Linux: the name is only for benchmarks
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + LOW_NICE)
    except (AttributeError, OSError):
        pass  # no per-thread priority here: the lens runs at normal priority


class _Job:
    def __init__(self, request: LensRequest | None = None) -> None:
        self.request = request
        self.urgent = threading.Event()  # set once someone waits for it
        self.started = False
        self.owners: set[Hashable] = set()  # who submitted it ahead
        self.done = threading.Event()
        self.result: tuple[Lens, float] | None = None
        self.error: BaseException | None = None


class LensService:
    """Lenses by key, each worked out once, off the learners' runs (see the module's notes).

    `process`: the lens process the big products go to (None: always on the service's threads).

    Example: s = LensService(LensProcess()).start(); s.submit(key, make); lens, gap = s.result(key, make)
    """

    def __init__(self, process: LensProcess | None, keep: int = 128, threads: int = THREADS) -> None:
        self.process, self.keep, self.n_threads = process, keep, threads
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._kept: OrderedDict[Hashable, tuple[Lens, float]] = OrderedDict()
        self._jobs: dict[Hashable, _Job] = {}
        self._queue: list[tuple[int, int, Hashable]] = []  # (URGENT or AHEAD, order, key); stale ones skipped
        self._order = itertools.count()
        self._owned: dict[Hashable, Hashable] = {}  # owner -> the key they last submitted ahead
        self._ahead_running = 0
        self._threads: list[threading.Thread] = []
        self._closing = False

    # --- the interface -----------------------------------------------------------------------

    def start(self) -> "LensService":
        """Start the service's threads and, from the first of them, its lens process (once; calling
        it again changes nothing). A process that cannot start is logged; the lenses are then
        worked out on the threads."""
        with self._lock:
            if self._threads or self._closing:
                return self
            for i in range(self.n_threads):
                thread = threading.Thread(target=self._work, args=(i == 0,), daemon=True, name=f"itt-low-lens-{i}")
                self._threads.append(thread)
                thread.start()
        atexit.register(self.close)
        return self

    @property
    def started(self) -> bool:
        return bool(self._threads)

    def submit(self, key: Hashable, make: Callable[[], LensRequest], urgent: bool = False,
               owner: Hashable | None = None) -> None:
        """Queue the lens of `key` unless kept or queued already, and return at once. `make()`
        builds its request, in this thread, only when it is neither. `urgent`: someone waits for it
        (it goes first; queued or running ahead, it is raised). `owner`: who submits it ahead; their
        previous lens ahead leaves the queue if it has not begun and nobody else wants it."""
        self._submit(key, make, urgent, owner)

    def result(self, key: Hashable, make: Callable[[], LensRequest]) -> tuple[Lens, float]:
        """(the lens, its live check's largest gap): kept, or worked out now as urgent (the caller
        waits). Raises LensError if it could not be worked out."""
        job = self._submit(key, make, urgent=True, owner=None)
        job.done.wait()
        if job.error is not None:
            raise LensError(f"the logit lens failed: {cause(job.error)}") from job.error
        return job.result

    def ready(self, key: Hashable) -> bool:
        """Worked out and kept."""
        with self._lock:
            return key in self._kept

    def known(self, key: Hashable) -> bool:
        """Kept, queued or being worked out."""
        with self._lock:
            return key in self._kept or key in self._jobs

    def close(self, timeout_s: float = 60.0) -> None:
        """Start nothing more and wait for the lenses being worked out (at exit: a thread stopped in
        the middle of a torch operation while Python shuts down makes the process abort)."""
        with self._lock:
            self._closing = True
            self._queue.clear()
            running = [job for job in self._jobs.values() if job.started]
            for key, job in list(self._jobs.items()):
                if not job.started:  # whoever waits hears why
                    job.error = RuntimeError("the server is shutting down")
                    del self._jobs[key]
                    job.done.set()
            self._wake.notify_all()
        for job in running:
            job.done.wait(timeout_s)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout_s)

    # --- the queue ---------------------------------------------------------------------------

    def _submit(self, key: Hashable, make: Callable[[], LensRequest], urgent: bool,
                owner: Hashable | None) -> _Job:
        if not self._threads:
            raise RuntimeError("the lens service is not started: call start() where the lens is needed")
        with self._lock:
            found, raised = self._found(key, urgent, owner)
        if found is None:
            request = make()  # outside the lock: it reads the capture
            with self._lock:
                found, raised = self._found(key, urgent, owner)
                if found is None:
                    found = self._jobs[key] = _Job(request)
                    if urgent:
                        found.urgent.set()
                    elif owner is not None:
                        found.owners.add(owner)
                        self._owned[owner] = key
                    heapq.heappush(self._queue, (URGENT if urgent else AHEAD, next(self._order), key))
                    self._wake.notify_all()
        if raised and self.process is not None:
            try:  # only sooner: refused, the lens goes on where it is
                self.process.promote()
            except Exception as e:
                failure(log, "raising a lens started ahead", e)
        return found

    def _found(self, key: Hashable, urgent: bool, owner: Hashable | None) -> tuple[_Job | None, bool]:  # under the lock
        """The job of `key` (a finished one if kept; None if unknown), made urgent if asked, and
        whether that made a lens already running ahead urgent (its process is to be raised)."""
        if self._closing:
            raise RuntimeError("the lens service is closed: the server is ending")
        if owner is not None and not urgent:
            self._own(owner, key)
        if key in self._kept:
            self._kept.move_to_end(key)
            done = _Job()
            done.result = self._kept[key]
            done.done.set()
            return done, False
        job = self._jobs.get(key)
        if job is None or not urgent or job.urgent.is_set():
            return job, False
        job.urgent.set()
        if not job.started:  # to the front; its place among the lenses ahead is skipped
            heapq.heappush(self._queue, (URGENT, next(self._order), key))
            self._wake.notify_all()
        return job, job.started

    def _own(self, owner: Hashable, key: Hashable) -> None:  # under the lock
        """`owner` now wants `key` ahead: their previous lens ahead leaves the queue if nobody else
        asked for it, nobody waits for it, and it has not begun."""
        old = self._owned.pop(owner, None)
        if old is not None and old != key:
            previous = self._jobs.get(old)
            if previous is not None:
                previous.owners.discard(owner)
                if not previous.owners and not previous.started and not previous.urgent.is_set():
                    del self._jobs[old]  # its place in the queue is skipped
        job = self._jobs.get(key)
        if job is not None:
            job.owners.add(owner)
            self._owned[owner] = key

    def _next(self) -> tuple[Hashable, _Job] | None:  # under the lock
        """The first job to start: urgent ones in order, then one ahead if none ahead is running."""
        while self._queue:
            priority, _, key = self._queue[0]
            job = self._jobs.get(key)
            if job is None or job.started or (priority == AHEAD and job.urgent.is_set()):
                heapq.heappop(self._queue)  # stale: dropped, begun, or moved to the front
                continue
            if priority == AHEAD and self._ahead_running:
                return None
            heapq.heappop(self._queue)
            return key, job
        return None

    def _work(self, first: bool) -> None:
        _lower_this_thread()
        if first and self.process is not None:
            # Started now, so the first lens does not wait for torch's import; from this thread,
            # which lives as long as the server: the process is told to end when the thread that
            # started it does (PR_SET_PDEATHSIG), and a page's run ends within the second.
            try:
                self.process.start()
            except LensProcessError as e:
                failure(log, "starting the lens process", e)
        while True:
            with self._lock:
                found = None
                while found is None:
                    if self._closing:
                        return
                    found = self._next()
                    if found is None:
                        self._wake.wait()
                key, job = found
                job.started = True
                ahead = not job.urgent.is_set()
                self._ahead_running += ahead
            try:
                job.result = self._compute(job.request, job.urgent)
            except BaseException as e:  # logged, and handed to whoever waits; the thread goes on
                job.error = e
                failure(log, f"the logit lens of a text on {job.request.model_key}", e)
            with self._lock:
                self._jobs.pop(key, None)
                self._ahead_running -= ahead
                for owner in job.owners:  # done: nothing of theirs is queued any more
                    if self._owned.get(owner) == key:
                        del self._owned[owner]
                if job.error is None:
                    self._kept[key] = job.result
                    while len(self._kept) > self.keep:
                        self._kept.popitem(last=False)
                self._wake.notify_all()  # a lens ahead may start now
            job.request = None  # its rows are no longer needed
            job.done.set()

    def _compute(self, request: LensRequest, urgent: threading.Event) -> tuple[Lens, float]:
        """The lens and its live check: its products in the lens process (idle class until `urgent`
        is set), or here where the process cannot take it. The check reads the model's own last
        step at these positions, here, apart from the lens."""
        lens = None
        if self.process is not None:
            try:
                lens = logit_lens_elsewhere(self.process, request.model_key, request.loaded, request.rows,
                                            k=request.k, waited=True if urgent.is_set() else urgent)
            except LensProcessError as e:
                if self.process.closed:  # the server is ending: no lens worked out here now
                    raise
                # Worked out here instead; logged once per cause (a server not allowed to raise the
                # process's priority meets the same cause at every lens).
                failure(log, "the logit lens in its own process", e, once=True)
        if lens is None:
            lens = logit_lens(request.loaded, request.rows, k=request.k)
        lens = dataclasses.replace(lens, positions=request.positions)
        n_layers = request.loaded.info.n_layers
        return lens, lens_check_diff(lens, head_logits(request.loaded, request.rows[-1]), n_layers)
