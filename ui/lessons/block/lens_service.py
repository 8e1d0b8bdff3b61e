"""The block lesson's logit lens, through the server's one lens service (lib/serving/lens_service.py).

The block lesson calls `start()`, then `submit`s the lens of the learner's text as its first screen
is drawn (only where the lens's section waits to be reached: in a browser); the lens's section asks
for the `result` when the learner reaches it, urgent: kept by then, as a rule, or worked out first.
The model and the capture are read here, in the page's thread, from ui.shell.cache.
"""

from __future__ import annotations

from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from lib.lessons.logit_lens import Lens
from lib.model.capture import DEFAULT_MAX_TOKENS
from lib.serving.lens_service import LensError, LensService, lens_request
from lib.serving.lens_worker import LensProcess
from ui.shell.cache import get_capture, get_model

__all__ = ["LENS_WINDOW", "LensError", "SERVICE", "key", "result", "start", "submit"]

LENS_WINDOW = 24  # positions the lens reads (the end of the text): 31 × 24 × 49152 logits
LENS_TOP_K = 5
# One per server: lenses by (model, text, cut, window), a few KB each, so a class's worth is kept.
SERVICE = LensService(LensProcess(), keep=128)


def key(model_name: str, text: str, max_tokens: int = DEFAULT_MAX_TOKENS, window: int = LENS_WINDOW) -> tuple:
    return (model_name, text, int(max_tokens), int(window))


def _make(model_name: str, text: str, max_tokens: int, window: int):
    return lambda: lens_request(model_name, get_model(model_name), get_capture(model_name, text, max_tokens),
                                window, LENS_TOP_K)


def start() -> None:
    """The service's threads and its lens process, once per server (the block lesson calls it on
    every run; only the first call starts anything)."""
    SERVICE.start()


def submit(model_name: str, text: str, max_tokens: int = DEFAULT_MAX_TOKENS, window: int = LENS_WINDOW) -> None:
    """Start this text's lens now, not urgent, without waiting: one queued per session, its latest."""
    ctx = get_script_run_ctx()
    SERVICE.submit(key(model_name, text, max_tokens, window), _make(model_name, text, max_tokens, window),
                   owner=ctx.session_id if ctx else None)


def result(model_name: str, text: str, max_tokens: int = DEFAULT_MAX_TOKENS,
           window: int = LENS_WINDOW) -> tuple[Lens, float]:
    """(the lens, its live check's largest gap), waited for. Raises LensError (logged already)."""
    return SERVICE.result(key(model_name, text, max_tokens, window), _make(model_name, text, max_tokens, window))
