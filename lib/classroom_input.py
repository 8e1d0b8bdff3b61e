"""What a learner or a teacher types, made safe before the class store keeps it: class codes,
pseudonyms, short texts, spreadsheet cells, and how many wrong codes a session may try.

Pure functions (no database, no streamlit); `lib/classroom.py` re-exports them.
Deliberately left out: HTML escaping (the page that shows a pseudonym escapes it) and any
judgement of what a pseudonym says (a teacher sees the class and can remove a learner).
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections import deque
from typing import Callable

# No 0/O, 1/I/L: a code read off a projector is typed right.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
MAX_PSEUDONYM = 32


class ClassError(Exception):
    """Anything the class store refuses or cannot do; the page shows a message, never a trace."""


class BadPseudonym(ClassError):
    """Nothing is left of the pseudonym once cleaned."""


_BIDI_AND_INVISIBLE = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A)) | {
    0x200B, 0x200C, 0x200E, 0x200F, 0x2060, 0xFEFF}


def normalise_code(text: str) -> str:
    """A class code as typed or pasted, in its stored form: upper case, no spaces or dashes.

    A pasted join link works too. Example: normalise_code(" ab3-k7q ") -> "AB3K7Q";
    normalise_code("https://host/?class=ab3k7q&lang=it") -> "AB3K7Q"
    """
    text = str(text or "")
    m = re.search(r"[?&]class=([^&#\s]*)", text)
    if m:
        text = m.group(1)
    return re.sub(r"[\s\-_.]", "", text).upper()


def well_formed(code: str) -> bool:
    """Example: well_formed("AB3K7Q") -> True; well_formed("AB0K7Q") -> False (no 0)"""
    return len(code) == CODE_LENGTH and all(c in CODE_ALPHABET for c in code)


def clean_pseudonym(text: str) -> str:
    """The pseudonym as stored and shown: NFC, no control/bidi/invisible characters, single spaces,
    trimmed, at most 32 characters. HTML is kept as text (the page escapes it).

    Raises BadPseudonym when nothing is left. Example: clean_pseudonym("  Ada\\u202e  Lovelace\\n")
    -> "Ada Lovelace"
    """
    text = unicodedata.normalize("NFC", str(text or ""))
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ord(ch) in _BIDI_AND_INVISIBLE or cat in ("Cc", "Cs", "Co", "Cn"):
            # Tabs and newlines become spaces; the rest goes.
            kept.append(" " if ch in "\t\n\r\v\f" else "")
        elif cat == "Cf" and ch != "\u200d":  # the joiner of emoji sequences stays
            continue
        else:
            kept.append(ch)
    text = " ".join("".join(kept).split())[:MAX_PSEUDONYM].strip()
    if not text:
        raise BadPseudonym("empty pseudonym")
    return text


def clean_text(text: str, limit: int) -> str:
    """A short stored string (class name, answer): printable, single-line, at most `limit`."""
    text = unicodedata.normalize("NFC", str(text))
    text = "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in text
                   if ord(c) not in _BIDI_AND_INVISIBLE and unicodedata.category(c) not in ("Cs", "Co"))
    return " ".join(text.split())[:limit]


def csv_cell(value: object) -> object:
    """A cell a spreadsheet shows as text, never runs as a formula (OWASP's CSV injection advice).

    Example: csv_cell("=1+1") -> "'=1+1"; csv_cell("Ada") -> "Ada"; csv_cell(7) -> 7
    """
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


class JoinLimiter:
    """Wrong class codes allowed per session: at most `limit` in any `window` seconds.

    Pure (the clock is passed in); keep one per browser session.
    Example: lim = JoinLimiter(2, 60, clock=lambda: 0.0); lim.failed(); lim.failed();
    lim.allowed() -> False; lim.retry_after() -> 60.0
    """

    def __init__(self, limit: int = 10, window: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.limit, self.window, self._clock = limit, window, clock
        self._fails: deque[float] = deque()

    def _prune(self) -> float:
        now = self._clock()
        while self._fails and self._fails[0] <= now - self.window:
            self._fails.popleft()
        return now

    def allowed(self) -> bool:
        self._prune()
        return len(self._fails) < self.limit

    def failed(self) -> None:
        """Count one wrong code."""
        self._fails.append(self._prune())

    def retry_after(self) -> float:
        """Seconds until the next attempt is allowed (0 when it is now)."""
        now = self._prune()
        if len(self._fails) < self.limit:
            return 0.0
        return max(0.0, self._fails[len(self._fails) - self.limit] + self.window - now)
