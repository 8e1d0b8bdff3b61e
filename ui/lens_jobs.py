"""The logit lens of a learner's text, worked out once per text on the low-priority threads.

A lens is 31 layers × 24 positions × 49,152 logits for the built-in model: about 2.5 CPU-seconds,
six forward passes' worth. A class reaches it within a minute of each other, so it is started
ahead of time: as soon as a page has the capture of a new text (`core.capture`, the block lesson's
included), while the learner still reads the lessons before the block lesson. The lesson then
finds it ready (`get_lens`), or waits at the front of the queue (lib/background.py).

A lens's big products are worked out in a process of its own (lib/lens_worker.py): in Linux's idle
class when started ahead, so a class typing its texts has the CPU first, and at nice +10 when
someone waits for it; never in the server's own threads, where the lens would hold Python's lock.

Each learner has at most one lens started ahead and not begun: a newer text of theirs takes its
place, so a learner trying ten sentences queues one lens, not ten.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from typing import Hashable

import numpy as np

from lib.background import Jobs
from lib.capture import DEFAULT_MAX_TOKENS, head_logits
from lib.lens_worker import LensProcess, LensProcessError
from lib.log import failure
from lib.logit_lens import Lens, lens_positions, logit_lens, logit_lens_elsewhere
from ui.cache import get_capture, get_model

log = logging.getLogger(__name__)
LENS_WINDOW = 24  # positions the lens reads (the end of the text): 31 × 24 × 49152 logits
LENS_TOP_K = 5

# Lenses by (model, text, max_tokens, window): a few KB each (top-k per layer and position), so a
# class's worth is kept.
LENSES = Jobs(keep=128)
# Lenses started ahead are worked out there, in Linux's idle class (lib/lens_worker.py).
LENS_PROCESS = LensProcess()


class _LensWork:
    """One lens's computation and its live check, holding only the rows they read (not the whole
    capture). Its big products are worked out in the lens process: called (someone waits), at nice
    +10 before any lens started ahead; `ahead()`, in the idle class. Where that cannot be done, here
    (`here()`). The check reads the model's own last step at these positions (Capture.logits_at)
    here, apart from the lens."""

    def __init__(self, model_name: str, text: str, max_tokens: int, window: int) -> None:
        # The capture is read here, in the caller's thread, so a low-priority worker never runs a
        # forward pass (it would hold the model's lock).
        self.model_name = model_name
        self.lm, cap = get_model(model_name), get_capture(model_name, text, max_tokens)
        self.pos = lens_positions(cap.n_tokens, window)
        self.rows = np.ascontiguousarray(cap.resid[:, self.pos])
        self.wanted = threading.Event()  # set once someone waits for this lens started ahead

    def _checked(self, lens: Lens) -> tuple[Lens, float]:
        lens = dataclasses.replace(lens, positions=self.pos)
        return lens, lens_check_diff(lens, head_logits(self.lm, self.rows[-1]), self.lm.info.n_layers)

    def here(self) -> tuple[Lens, float]:
        return self._checked(logit_lens(self.lm, self.rows, k=LENS_TOP_K))

    def _there(self, waited: bool | threading.Event) -> tuple[Lens, float]:
        try:
            lens = logit_lens_elsewhere(LENS_PROCESS, self.model_name, self.lm, self.rows, k=LENS_TOP_K,
                                        waited=waited)
        except LensProcessError as e:
            if LENS_PROCESS.closed:  # the server is ending: no lens worked out here now
                raise
            # Worked out here instead; logged once per cause (a server not allowed to raise the
            # process's priority meets the same cause at every lens).
            failure(log, "the logit lens in its own process", e, once=True)
            return self.here()
        return self._checked(lens)

    def __call__(self) -> tuple[Lens, float]:
        return self._there(waited=True)

    def ahead(self) -> tuple[Lens, float]:
        return self._there(waited=self.wanted)

    def promote(self) -> None:
        self.wanted.set()
        LENS_PROCESS.promote()


def _lens_job(model_name: str, text: str, max_tokens: int, window: int) -> _LensWork:
    return _LensWork(model_name, text, max_tokens, window)


def lens_check_diff(lens: Lens, logits: np.ndarray, n_layers: int) -> float:
    """The oracle, live: at the last layer the lens must be the model itself. The largest gap
    between the lens's top probabilities there and the model's own from `logits` [P, V] (its last
    step at the lens's positions)."""
    logits = np.asarray(logits, dtype=np.float64)
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    model_top = np.take_along_axis(probs, lens.top_ids[n_layers], axis=-1)
    return float(np.abs(model_top - lens.top_probs[n_layers]).max())


def lens_key(model_name: str, text: str, max_tokens: int = DEFAULT_MAX_TOKENS, window: int = LENS_WINDOW) -> tuple:
    return (model_name, text, int(max_tokens), int(window))


def lens_and_check(model_name: str, text: str, max_tokens: int = DEFAULT_MAX_TOKENS,
                   window: int = LENS_WINDOW) -> tuple[Lens, float]:
    """(the lens, its live check's largest gap): kept, or computed now at the front of the queue."""
    return LENSES.get(lens_key(model_name, text, max_tokens, window),
                      lambda: _lens_job(model_name, text, max_tokens, window))


def get_lens(model_name: str, text: str, max_tokens: int = DEFAULT_MAX_TOKENS, window: int = LENS_WINDOW) -> Lens:
    return lens_and_check(model_name, text, max_tokens, window)[0]


def prefetch_lens(model_name: str, text: str, max_tokens: int = DEFAULT_MAX_TOKENS, window: int = LENS_WINDOW,
                  owner: Hashable | None = None) -> None:
    """Start the lens of this text now, at low priority, without waiting for it; `owner` (a
    session) keeps one such lens queued at a time, the one of their latest text."""
    LENSES.prefetch(lens_key(model_name, text, max_tokens, window),
                    lambda: _lens_job(model_name, text, max_tokens, window), owner=owner)
