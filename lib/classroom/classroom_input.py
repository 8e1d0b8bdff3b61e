"""What a learner or a teacher types, made safe before the class store keeps it: class codes,
pseudonyms, answers, short texts, spreadsheet cells, and how many wrong codes a session may try.

Pure functions (no database, no streamlit); `lib/classroom/classroom.py` re-exports them.
An answer is kept as a number only (`canonical_answer`): a choice's option index or a numeric
answer's value, one spelling for "4096", "4,096" and "4096 numbers", and none of the words a
learner typed after it ("4096 Mario Rossi via Roma" arrives as "4096").
Deliberately left out: HTML escaping and Markdown (the pages show a pseudonym only through elements
that render neither) and any judgement of what a pseudonym says (a teacher sees the class and can
remove a learner).
"""

from __future__ import annotations

import math
import re
import time
import unicodedata
from collections import deque
from typing import Callable

from lib.course.quiz import parse_number

# No 0/O, 1/I/L: a code read off a projector is typed right.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
MAX_PSEUDONYM = 32


class ClassError(Exception):
    """Anything the class store refuses or cannot do; the page shows a message, never a trace."""


class BadPseudonym(ClassError):
    """Nothing is left of the pseudonym once cleaned."""


class PseudonymTooLong(BadPseudonym):
    """The pseudonym has more than MAX_PSEUDONYM characters once cleaned (it is refused, not cut:
    a cut name may not be the one the learner meant)."""


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
    trimmed, at most 32 characters. Markup is kept as the characters typed (pages show it as text).

    Raises BadPseudonym when nothing is left, PseudonymTooLong when more than 32 characters are.
    Example: clean_pseudonym("  Ada\\u202e  Lovelace\\n") -> "Ada Lovelace"
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
    text = " ".join("".join(kept).split())
    if not text:
        raise BadPseudonym("empty pseudonym")
    if len(text) > MAX_PSEUDONYM:
        raise PseudonymTooLong(f"{len(text)} characters")
    return text


def clean_text(text: str, limit: int) -> str:
    """A short stored string (class name, answer): printable, single-line, at most `limit`."""
    text = unicodedata.normalize("NFC", str(text))
    text = "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in text
                   if ord(c) not in _BIDI_AND_INVISIBLE and unicodedata.category(c) not in ("Cs", "Co"))
    return " ".join(text.split())[:limit]


def number_text(value: float) -> str:
    """A number in the one spelling the class keeps: an integer without a decimal part, otherwise
    Python's shortest round-trip form (a "." for the decimal mark, whatever the learner's language).

    Example: number_text(4096.0) -> "4096"; number_text(0.5) -> "0.5"; number_text(-0.0) -> "0"
    """
    value = float(value)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def canonical_answer(text: object) -> str:
    """A first answer as the class keeps it: the number read from it (lib.course.quiz.parse_number, the
    same reading that graded it) in `number_text`'s spelling; "" when there is no number to read
    (the answer is then counted, its text not kept). Words typed after the number never pass.

    Example: canonical_answer("4096 Mario Rossi via Roma") -> "4096"; canonical_answer("4,096")
    -> "4096"; canonical_answer(2) -> "2"; canonical_answer("again") -> ""
    """
    if isinstance(text, bool):
        return ""
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        try:
            value = parse_number(str(text if text is not None else ""))
        except ValueError:
            return ""
    try:
        return number_text(value)
    except ValueError:
        return ""


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
