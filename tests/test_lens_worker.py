"""lib/serving/lens_worker.py: the logit lens worked out in a process of its own, in Linux's idle class, is
the lens worked out in the server (lib/lessons/logit_lens.py), and a process that dies is replaced."""

import os

import numpy as np
import pytest
import torch

from lib.lessons.logit_lens import lens_positions, logit_lens, logit_lens_elsewhere
from lib.model.capture import run_capture
from lib.serving.lens_worker import LensProcess, LensProcessError, lens_tables, scheduling

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="Linux's /proc is read")


@pytest.fixture(scope="module")
def process():
    proc = LensProcess()
    yield proc
    proc.close()


def _rows(loaded, text: str, window: int = 5) -> np.ndarray:
    cap = run_capture(loaded, text)
    return np.ascontiguousarray(cap.resid[:, lens_positions(cap.n_tokens, window)])


def _same(a, b) -> None:
    assert (a.top_ids == b.top_ids).all() and (a.final_ids == b.final_ids).all()
    assert (a.final_rank == b.final_rank).all()
    assert np.abs(a.top_probs - b.top_probs).max() < 1e-5 and np.abs(a.final_prob - b.final_prob).max() < 1e-5


@pytest.mark.parametrize("family", ["tiny_llama", "tiny_gpt2", "tiny_gemma"])
def test_the_lens_from_the_process_is_the_lens_worked_out_here(process, family, request):
    """Each family's own final norm (RMSNorm, LayerNorm, Gemma's 1 + gain) is applied in the server;
    the process has only the unembedding."""
    loaded = request.getfixturevalue(family)
    rows = _rows(loaded, "the cat sat on the mat, and then")
    here = logit_lens(loaded, rows, k=3)
    there = logit_lens_elsewhere(process, family, loaded, rows, k=3)
    _same(here, there)
    # Oracle apart from both: at the last layer the lens is the model's own prediction.
    cap = run_capture(loaded, "the cat sat on the mat, and then")
    assert (there.final_ids == cap.logits[-rows.shape[1]:].argmax(-1)).all()


def test_the_process_runs_in_the_idle_class_and_is_raised_for_a_learner_waiting(process, tiny_llama):
    logit_lens_elsewhere(process, "tiny_llama", tiny_llama, _rows(tiny_llama, "one two three"))
    pid = process.pid
    with open(f"/proc/{pid}/comm") as f:
        assert f.read().strip() == "itt-lens"  # benchmarks count its CPU apart by this name
    policies = scheduling(pid)
    assert len(policies) >= 1
    if hasattr(os, "SCHED_IDLE"):
        assert all(policy == os.SCHED_IDLE for policy, _ in policies)
    if process.promote():  # allowed to raise a priority (root or CAP_SYS_NICE): normal class, nice 10
        assert all(policy == os.SCHED_OTHER and nice == 10 for policy, nice in scheduling(pid))
    # The next lens puts it back where it was.
    logit_lens_elsewhere(process, "tiny_llama", tiny_llama, _rows(tiny_llama, "four five six"))
    if hasattr(os, "SCHED_IDLE"):
        assert all(policy == os.SCHED_IDLE for policy, _ in scheduling(pid))


@pytest.fixture
def turns(monkeypatch):
    """A LensProcess whose process is stood in for, to watch its turns: `calls` lists the classes
    it was put in ("idle", "normal"), `order` the requests it worked out (rows[0, 0] marks each),
    and a request marked 1 holds its turn until `gate` is set."""
    import threading
    import types

    from lib.serving import lens_worker

    calls, order, gate = [], [], threading.Event()
    monkeypatch.setattr(lens_worker, "set_idle", lambda pid: calls.append("idle") or True)
    monkeypatch.setattr(lens_worker, "set_normal", lambda pid: calls.append("normal") or True)
    proc = LensProcess()
    proc.idle_class = True
    stand_in = types.SimpleNamespace(pid=-1, poll=lambda: None)
    monkeypatch.setattr(proc, "_start", lambda: stand_in)
    proc._proc, proc._model = stand_in, "m"

    def ask(_, message):
        order.append(message["rows"][0, 0])
        if message["rows"][0, 0] == 1:
            gate.wait(10)
        return {"ok": True, "tables": message["rows"][0, 0]}
    monkeypatch.setattr(proc, "_ask", ask)
    yield types.SimpleNamespace(proc=proc, calls=calls, order=order, gate=gate)
    gate.set()
    proc._proc = None  # the stand-in has nothing to end
    proc.close()


def test_a_waited_lens_goes_before_those_started_ahead_and_raises_the_one_in_the_way(turns):
    """The process's turns, with the process stood in for: one request at a time; a waited one goes
    before an earlier one started ahead, raises the one being worked out, and runs raised itself."""
    import threading

    proc, calls, order, gate = turns.proc, turns.calls, turns.order, turns.gate

    def send(mark, waited):
        return threading.Thread(target=proc.tables, args=("m", None, np.full((1, 2), mark), 1, 1, waited))
    first = send(1, False)
    first.start()
    while order != [1]:
        gate.wait(0.01)
    ahead, waited = send(2, False), send(3, True)
    ahead.start()  # queued behind the first (before or after the waited one: it goes after it either way)
    waited.start()
    while proc._waiting == 0 and waited.is_alive():
        gate.wait(0.01)
    assert calls[-1] == "normal"  # the lens being worked out was raised
    gate.set()
    for t in (first, ahead, waited):
        t.join(10)
    assert order == [1, 3, 2]
    assert calls == ["idle", "normal", "normal", "idle"]  # first ahead, raised, the waited one, the next ahead


def test_a_lens_started_ahead_that_someone_comes_to_wait_for_is_never_put_back_idle(turns):
    """A learner starts waiting for their lens while it is still queued behind another: its Event
    is set and the process promoted; when its turn comes it runs raised, not in the idle class."""
    import threading

    proc, calls, order, gate = turns.proc, turns.calls, turns.order, turns.gate
    wanted = threading.Event()
    first = threading.Thread(target=proc.tables, args=("m", None, np.full((1, 2), 1), 1, 1, False))
    first.start()
    while order != [1]:
        gate.wait(0.01)
    mine = threading.Thread(target=proc.tables, args=("m", None, np.full((1, 2), 2), 1, 1, wanted))
    mine.start()
    wanted.set()  # as _LensWork.promote does, before the process is raised
    assert proc.promote()  # the lens in its way is raised
    gate.set()
    for t in (first, mine):
        t.join(10)
    assert order == [1, 2]
    assert calls == ["idle", "normal", "normal"]  # first ahead, raised for the waiter, then mine raised


def test_where_a_lens_could_not_be_raised_the_process_never_enters_the_idle_class(monkeypatch, tiny_llama):
    """Without the right to raise a process (no CAP_SYS_NICE, RLIMIT_NICE under +10), a learner
    could wait on a lens starved in the idle class: the process runs at nice +10 instead."""
    from lib.serving import lens_worker

    monkeypatch.setattr(lens_worker, "raise_allowed", lambda: False)
    proc = LensProcess()
    try:
        logit_lens_elsewhere(proc, "tiny_llama", tiny_llama, _rows(tiny_llama, "seven eight nine"))
        policies = scheduling(proc.pid)
        assert policies and all(policy == os.SCHED_OTHER and nice == 10 for policy, nice in policies)
    finally:
        proc.close()


def test_closing_ends_the_process_and_the_requests_waiting_for_it(tiny_llama):
    """At the server's exit the process is ended at once, and a lens waiting for its turn is told
    (the server's job threads are waited for at exit: a starved process would hold it up)."""
    import threading

    proc = LensProcess()
    rows = _rows(tiny_llama, "closing time")
    logit_lens_elsewhere(proc, "tiny_llama", tiny_llama, rows)
    pid = proc.pid
    with proc._turn:
        proc._busy = True  # another request has the process
    errors = []

    def ask():
        try:
            logit_lens_elsewhere(proc, "tiny_llama", tiny_llama, rows)
        except LensProcessError as e:
            errors.append(e)
    waiter = threading.Thread(target=ask)
    waiter.start()
    proc.close()
    waiter.join(10)
    assert len(errors) == 1 and "closed" in str(errors[0])
    assert proc.pid is None and not os.path.exists(f"/proc/{pid}/cmdline")  # ended and reaped


def test_a_process_that_dies_is_told_and_replaced(process, tiny_llama):
    rows = _rows(tiny_llama, "a b c d e")
    logit_lens_elsewhere(process, "tiny_llama", tiny_llama, rows)
    old = process.pid
    os.kill(old, 9)
    with pytest.raises(LensProcessError):
        logit_lens_elsewhere(process, "tiny_llama", tiny_llama, rows)
    again = logit_lens_elsewhere(process, "tiny_llama", tiny_llama, rows)  # a new process, given the model again
    assert process.pid not in (None, old)
    _same(logit_lens(tiny_llama, rows), again)


def test_a_model_switch_sends_the_other_unembedding(process, tiny_llama, tiny_gpt2):
    for loaded, name in ((tiny_llama, "tiny_llama"), (tiny_gpt2, "tiny_gpt2"), (tiny_llama, "tiny_llama")):
        rows = _rows(loaded, "switching models")
        _same(logit_lens(loaded, rows), logit_lens_elsewhere(process, name, loaded, rows))


def test_an_unembedding_that_is_not_linear_stays_in_the_server(process, tiny_llama):
    import dataclasses

    odd = dataclasses.replace(tiny_llama, adapter=dataclasses.replace(
        tiny_llama.adapter, unembed=lambda m: torch.nn.Sequential(m.lm_head)))
    with pytest.raises(LensProcessError, match="not a linear map"):
        logit_lens_elsewhere(process, "odd", odd, _rows(tiny_llama, "x y"))


def test_an_unembedding_too_big_to_copy_stays_in_the_server(process, tiny_llama, monkeypatch):
    from lib.lessons import logit_lens as ll

    monkeypatch.setattr(ll, "MAX_UNEMBEDDING_MB", tiny_llama.model.lm_head.weight.numel() * 4 / 2**20 / 2)
    with pytest.raises(LensProcessError, match="not copied"):
        logit_lens_elsewhere(process, "big", tiny_llama, _rows(tiny_llama, "x y"))


def test_lens_tables_read_each_row_as_the_full_softmax_would():
    """The tables against a softmax of the full logits, worked out plainly."""
    gen = torch.Generator().manual_seed(0)
    w, rows = torch.randn(50, 8, generator=gen), torch.randn(3 * 4, 8, generator=gen)  # 3 layers × 4 positions
    logits = (rows @ w.T).double()
    probs = torch.softmax(logits, dim=-1)
    t = lens_tables(lambda x: torch.from_numpy(x) @ w.T, rows.numpy(), p=4, k=3, chunk_rows=5)
    final = logits[-4:].argmax(-1)
    assert (t["final_ids"] == final.numpy()).all()
    assert (t["top_ids"] == probs.topk(3, dim=-1).indices.numpy()).all()
    assert np.allclose(t["top_probs"], probs.topk(3, dim=-1).values.numpy(), atol=1e-6)
    want = final.repeat(3)
    assert np.allclose(t["final_prob"], probs[torch.arange(12), want].numpy(), atol=1e-6)
    assert (t["final_rank"] == (logits > logits[torch.arange(12), want][:, None]).sum(-1).numpy()).all()
