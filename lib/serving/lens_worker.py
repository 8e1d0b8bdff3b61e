"""The logit lens's big products, in a process of its own that runs only on a core nobody else wants.

A lens is 31 layers × 24 positions × 49,152 logits for the built-in model, nearly all of it one
matrix product (the rows through the unembedding). The lens service (lib/serving/lens_service.py) submits
a class's lenses ahead, as each learner opens the block lesson, so they are worked out while the
class reads; they must then take only the CPU the class leaves idle.

Linux's idle class (SCHED_IDLE) gives exactly that, but not to a thread of the server: a starved
thread that holds Python's lock (the GIL) when the machine is busy stalls every other thread of
the server with it. In a process of its own a starved lens holds up nothing but itself. So the
server keeps its own threads and sends this process the rows, already through the final norm; the
process works out the tables (`lens_tables`) and sends them back, a few KB.

- `LensProcess` is the server's side: one process per server, started with the lens service or
  with its first lens (torch's import: a few seconds), given the model's unembedding once (113 MB for the built-in model, a
  copy: the cost of not sharing the server's memory; one model at a time, and none bigger than
  `MAX_UNEMBEDDING_MB`), one request at a time.
- A lens someone waits for is worked out here too, before any started ahead, with the process
  raised to the normal class at nice +10 (`set_normal`; the lens in its way is raised as well),
  where the OS allows it (root, CAP_SYS_NICE, or RLIMIT_NICE: the systemd unit's `LimitNICE=+10`);
  where it does not, the lens service works that lens out itself. The next lens started ahead
  puts the process back in the idle class.
- A process that dies or cannot start raises `LensProcessError`: the caller works the lens out in
  the server, as without it.

Deliberately light: numpy, torch and the standard library, not transformers (its import alone
would double this process's memory). `python -m lib.serving.lens_worker` runs the process's side.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
PROCESS_NAME = b"itt-lens"  # as the OS shows it (/proc/<pid>/comm): benchmarks count its CPU apart
MAX_UNEMBEDDING_MB = 256  # a bigger one (Gemma 3's: 671 MB) is not copied: its lenses stay in the server
NICE_WITHOUT_IDLE = 19  # where the idle class is refused: the lowest normal priority
PROMOTED_NICE = 10  # a lens someone waits for: as the server's own workers for waited work


class LensProcessError(RuntimeError):
    """The lens process could not do the work (it died, or could not start)."""


def lens_tables(logits_of: Callable[[np.ndarray], np.ndarray], rows: np.ndarray, p: int, k: int,
                chunk_rows: int = 256) -> dict[str, np.ndarray]:
    """What the lens keeps of rows [R, D] (R = layers × p, layer-major: row = layer * p + i; the
    last p rows are the model's last layer) turned into logits by `logits_of`, chunk by chunk:
    the top k tokens and their probabilities per row, the model's own prediction at each position
    (the last layer's top token), and that prediction's probability and rank in every row.

    Example: tables = lens_tables(lambda x: x @ W.T, rows, p=24, k=5); tables["top_ids"].shape == (R, 5)
    """
    n = rows.shape[0]
    final_ids = (np.asarray(logits_of(rows[n - p:])).argmax(axis=-1) if p else np.zeros(0, dtype=np.int64))
    want = np.tile(final_ids, n // p if p else 0)  # [R] the final prediction, per row
    top_ids = np.zeros((n, k), dtype=np.int64)
    top_probs = np.zeros((n, k), dtype=np.float64)
    final_prob = np.zeros(n, dtype=np.float64)
    final_rank = np.zeros(n, dtype=np.int64)
    for start in range(0, n, chunk_rows):
        stop = min(start + chunk_rows, n)
        logits = torch.from_numpy(np.asarray(logits_of(rows[start:stop])))  # [r, V]
        vals, ids = logits.topk(k, dim=-1)
        target = logits.gather(1, torch.from_numpy(want[start:stop]).view(-1, 1))  # [r, 1]
        # numpy counts a comparison's True values 5× faster than torch's bool sum on this CPU.
        final_rank[start:stop] = np.count_nonzero(logits.numpy() > target.numpy(), axis=-1)
        # The softmax's normaliser, log-sum-exp with the row's maximum (the top value) taken out, worked
        # in place: [r, V] logits are no longer needed after this, and no [r, V] copy is made.
        top = vals[:, :1]
        lse = top + logits.sub_(top).exp_().sum(dim=-1, keepdim=True).log()
        top_ids[start:stop] = ids.numpy()
        top_probs[start:stop] = torch.exp(vals - lse).double().numpy()
        final_prob[start:stop] = torch.exp(target - lse).double().numpy()[:, 0]
    return {"top_ids": top_ids, "top_probs": top_probs, "final_ids": np.asarray(final_ids, dtype=np.int64),
            "final_prob": final_prob, "final_rank": final_rank}


def linear_logits(weight: torch.Tensor, bias: torch.Tensor | None) -> Callable[[np.ndarray], np.ndarray]:
    """rows [n, D] (through the final norm already) -> [n, V] logits: the unembedding, a linear map."""
    def logits_of(x: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return torch.nn.functional.linear(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)),
                                              weight, bias).numpy()
    return logits_of


# --- scheduling ---------------------------------------------------------------------------------

def _tids(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return [pid]


def set_idle(pid: int) -> bool:
    """Every thread of process `pid` into the idle class (the threads it starts later inherit it);
    where that is refused, nice 19. True if the idle class was taken."""
    idle = True
    for tid in _tids(pid):
        try:
            os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
        except (AttributeError, OSError):
            idle = False
            try:
                os.setpriority(os.PRIO_PROCESS, tid, NICE_WITHOUT_IDLE)
            except (AttributeError, OSError):
                pass
    return idle


def set_normal(pid: int, nice: int = PROMOTED_NICE) -> bool:
    """Every thread of process `pid` back to the normal class at `nice`. Leaving the idle class
    needs the right to that nice value: root, CAP_SYS_NICE, or an RLIMIT_NICE that allows it
    (systemd's `LimitNICE=+10`); the nice value is set first, so the limit needed is +10, not 0.
    False where refused (the process stays where it was)."""
    ok = True
    for tid in _tids(pid):
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
            os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0))
        except (AttributeError, OSError):
            ok = False
    return ok


def raise_allowed() -> bool:
    """Whether this process may take another out of the idle class to nice `PROMOTED_NICE`:
    CAP_SYS_NICE (root, as a rule), or an RLIMIT_NICE of at least 20 - PROMOTED_NICE (systemd's
    `LimitNICE=+10`). Where it may not, a lens started ahead could not be raised once someone waits
    for it, so the lens process never enters the idle class there (it runs at nice +10)."""
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_NICE)[0]
        if soft == resource.RLIM_INFINITY or soft >= 20 - PROMOTED_NICE:
            return True
    except (ImportError, AttributeError, OSError, ValueError):
        pass
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> 23 & 1)  # bit 23: CAP_SYS_NICE
    except (OSError, ValueError):
        pass
    return False


def scheduling(pid: int) -> list[tuple[int, int]]:
    """(policy, nice) of every thread of `pid` (for tests and benchmarks)."""
    out = []
    for tid in _tids(pid):
        try:
            out.append((os.sched_getscheduler(tid), os.getpriority(os.PRIO_PROCESS, tid)))
        except (AttributeError, OSError):
            continue
    return out


# --- the server's side --------------------------------------------------------------------------

class LensProcess:
    """The lens process seen from the server: `tables(...)` sends one lens's rows and waits for its
    tables (the calling thread waits on a pipe: it holds no lock the server needs).

    One request at a time, a learner's first: a lens someone waits for (`waited=True`, or a
    `threading.Event` set once someone does) goes before any started ahead, raises the one being
    worked out (it is in the way), and is worked out at nice +10 instead of the idle class. The
    class is chosen and changed under one lock, so a lens someone waits for is never put back in
    the idle class. Where the OS refuses to raise it, a waited lens raises LensProcessError at
    once: the caller works it out in the server, never in the idle class; where it would refuse
    (`raise_allowed`), the process never enters the idle class at all."""

    def __init__(self) -> None:
        self._turn = threading.Condition()  # the process, one request at a time
        self._busy = False
        self._waiting = 0  # waited-for requests queued for the process
        self._proc: subprocess.Popen | None = None
        self._model = None  # the model whose unembedding the process holds (one at a time)
        self.closed = False
        self.idle_class = raise_allowed()  # lenses started ahead in the idle class, where they can be raised
        # At exit, before the server's job threads are waited for (atexit runs the last registered
        # first): a starved process would keep the server from ending.
        atexit.register(self.close)

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def start(self) -> None:
        """Start the process now rather than with the first lens (torch's import takes a few
        seconds, in the idle class: CPU nobody else wants). Call it from a thread that lives as long
        as the server: the process ends with the thread that started it. Raises LensProcessError
        if it cannot start."""
        with self._turn:
            if self.closed:
                raise LensProcessError("the lens process is closed: the server is ending")
            self._start()

    def _start(self) -> subprocess.Popen:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE", PYTHONPATH=str(ROOT),
                   ITT_LENS_IDLE="1" if self.idle_class else "0")
        try:
            self._proc = subprocess.Popen([sys.executable, "-m", "lib.serving.lens_worker"], cwd=str(ROOT), env=env,
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as e:
            raise LensProcessError(f"the lens process did not start: {e}") from e
        self._model = None
        self._lower(self._proc.pid)
        return self._proc

    def _lower(self, pid: int) -> None:
        if self.idle_class:
            set_idle(pid)
        else:
            for tid in _tids(pid):
                try:
                    os.setpriority(os.PRIO_PROCESS, tid, PROMOTED_NICE)
                except OSError:
                    pass

    def _ask(self, proc: subprocess.Popen, message: dict, *more) -> dict:
        try:
            for part in (message, *more):
                pickle.dump(part, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            proc.stdin.flush()
            answer = pickle.load(proc.stdout)
        except (OSError, EOFError, pickle.UnpicklingError) as e:
            self._stop(proc)
            raise LensProcessError(f"the lens process ended: {e}") from e
        if not answer.get("ok"):
            raise LensProcessError(answer.get("error", "the lens process failed"))
        return answer

    def tables(self, model_key, unembedding: Callable[[], tuple[np.ndarray, np.ndarray | None]],
               rows: np.ndarray, p: int, k: int, waited: bool | threading.Event = False) -> dict[str, np.ndarray]:
        """`lens_tables` of rows [R, D] (through the final norm) with the model's unembedding,
        worked out in the lens process: in the idle class, or, once someone waits (`waited` True,
        or an Event set), at nice +10 and before any lens started ahead. `unembedding()` gives
        (weight [V, D], bias [V] or None), asked when the process does not hold this model's already."""
        def now_waited() -> bool:
            return waited is True or (not isinstance(waited, bool) and waited.is_set())

        with self._turn:
            counted = waited is True
            if counted:
                self._waiting += 1
                if self._busy:
                    self._raise()  # the lens ahead of it is in the way
            try:
                while not self.closed and (self._busy or (not now_waited() and self._waiting)):
                    self._turn.wait()
            finally:
                if counted:
                    self._waiting -= 1
            if self.closed:
                raise LensProcessError("the lens process is closed: the server is ending")
            self._busy = True
            try:
                proc = self._start()
                # Under the lock, as `promote`: a waiter who came a moment ago is not undone here.
                if now_waited():
                    if not set_normal(proc.pid):
                        raise LensProcessError("not allowed to raise the lens process")
                else:
                    self._lower(proc.pid)  # a lens someone waited for may have raised it
            except BaseException:
                self._busy = False
                self._turn.notify_all()
                raise
        try:
            if self._model != model_key:
                # Sent after the header: the process lets go of the model it holds first.
                self._model = None
                self._ask(proc, {"op": "model", "key": model_key}, unembedding())
                self._model = model_key
            answer = self._ask(proc, {"op": "lens", "key": model_key, "rows": np.ascontiguousarray(rows, np.float32),
                                      "p": int(p), "k": int(k)})
            return answer["tables"]
        finally:
            with self._turn:
                self._busy = False
                self._turn.notify_all()

    def promote(self) -> bool:
        """Someone waits for the lens being worked out (or about to be: set its Event first):
        raise the process, where the OS allows it."""
        with self._turn:
            self._turn.notify_all()  # a queued request whose Event was set goes before those ahead
            return self._raise()

    def _raise(self) -> bool:  # under self._turn
        pid = self.pid
        return pid is not None and self._busy and set_normal(pid)

    def _stop(self, proc: subprocess.Popen) -> None:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if self._proc is proc:
            self._proc = None

    def close(self) -> None:
        """End the process now, and any request with it (the server is ending; a request waiting
        for its answer gets LensProcessError). It also ends by itself when the server does."""
        with self._turn:
            self.closed = True
            self._turn.notify_all()
        proc = self._proc
        if proc is not None:
            self._stop(proc)


# --- the process's side -------------------------------------------------------------------------

def _this_process_lowest() -> None:
    """Named for the OS, ended with the thread that started it (PR_SET_PDEATHSIG: the lens service's
    own, which lives as long as the server), in the idle class before torch
    starts its threads (they inherit it)."""
    try:
        libc = ctypes.CDLL(None)
        libc.prctl(15, ctypes.c_char_p(PROCESS_NAME), 0, 0, 0)  # PR_SET_NAME
        libc.prctl(1, 15, 0, 0, 0)  # PR_SET_PDEATHSIG: SIGTERM when the starting thread ends
    except (AttributeError, OSError, TypeError):
        pass
    if os.environ.get("ITT_LENS_IDLE", "1") == "1":
        set_idle(os.getpid())
    else:
        os.setpriority(os.PRIO_PROCESS, 0, PROMOTED_NICE)


def main() -> None:
    _this_process_lowest()
    reply = os.fdopen(os.dup(1), "wb")  # the answers; stray prints go to stderr
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    models: dict = {}
    while True:
        try:
            message = pickle.load(requests)
        except EOFError:
            return  # the server closed the pipe: it is ending
        try:
            if message["op"] == "model":  # one model at a time: the last one sent
                models = {}
                weight, bias = pickle.load(requests)
                models[message["key"]] = linear_logits(torch.from_numpy(weight),
                                                       None if bias is None else torch.from_numpy(bias))
                answer = {"ok": True}
            else:
                logits_of = models[message["key"]]
                answer = {"ok": True, "tables": lens_tables(logits_of, message["rows"], message["p"], message["k"])}
        except Exception as e:  # told to the server, which works the lens out itself
            answer = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        pickle.dump(answer, reply, protocol=pickle.HIGHEST_PROTOCOL)
        reply.flush()


if __name__ == "__main__":
    main()
