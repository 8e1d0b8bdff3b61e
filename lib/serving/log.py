"""The app's log: one line on stderr per failure the app survives, with its cause.

Every module logs through its own `logging.getLogger(__name__)`; `configure()` (called once by
app.py) gives the app's two packages, `lib` and `ui`, one handler and one format, so a failure
reads as

    2026-12-06 04:12:30 WARNING ui.shell.core: the lens ahead of time failed: OSError: [Errno 24] ...

What it leaves out: no file, no rotation (a server's stderr goes to journald, docker or
Kubernetes, which keep it), no tracebacks (a failure is one line; its cause is the exception's type
and message).
"""

from __future__ import annotations

import logging
import sys

PACKAGES = ("lib", "ui")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
_seen: set[tuple[str, str]] = set()


def configure(level: int = logging.INFO, stream=None) -> None:
    """One stderr handler on the `lib` and `ui` loggers, at `level`; calling it again changes
    nothing (Streamlit runs app.py once per rerun).

    Example: configure(); logging.getLogger("ui.shell.core").warning("x") -> one line on stderr
    """
    for name in PACKAGES:
        logger = logging.getLogger(name)
        logger.setLevel(level)
        if not any(getattr(h, "_itt_log", False) for h in logger.handlers):
            handler = logging.StreamHandler(stream or sys.stderr)
            handler.setFormatter(logging.Formatter(FORMAT, DATE_FORMAT))
            handler._itt_log = True
            logger.addHandler(handler)


def cause(error: BaseException) -> str:
    """An exception as one line: its type and its message, newlines folded.

    Example: cause(ValueError("bad\\nurl")) -> "ValueError: bad url"
    """
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def failure(logger: logging.Logger, what: str, error: BaseException, once: bool = False) -> None:
    """Log `what` failed, with its cause, as one WARNING line; `once`: only the first time this
    logger sees this cause (for a failure met on every rerun).

    Example: failure(log, "the lens ahead of time", OSError("no")) -> "the lens ahead of time failed: OSError: no"
    """
    line = cause(error)
    if once:
        if (logger.name, line) in _seen:
            return
        if len(_seen) > 1000:  # causes that vary (a path, a number) never grow it without bound
            _seen.clear()
        _seen.add((logger.name, line))
    logger.warning("%s failed: %s", what, line)
