"""A learner's progress as plain data: checked, merged, written as a short code or a file.

Progress is what the quizzes know about a learner, with no account and no name:

    {"v": 1,
     "results":   {lesson: {question: correct on the first answer}},
     "responses": {"<lesson>:<question>": last answer checked (option index or typed text)},
     "final":     {"seed": int or None, "answers": {"<lesson>:<question>": bool},
                   "responses": {"<lesson>:<question>": answer}}}

It travels two ways: `encode`/`decode` give a compact code (zlib, URL-safe base64) that the
browser keeps in its local storage; `to_file`/`from_file` give a small JSON file the learner can
download and load back. Anything read from outside is checked entry by entry: a malformed entry
is dropped and counted, a malformed whole raises ProgressError, nothing else ever escapes.

Where the browser keeps it: one local-storage entry per learner of the browser profile
(`entries`). A learner with no name (the default) uses `inside-transformer.progress`; on a
computer shared by a class each learner may give a nickname (`nickname`), and their progress and
text live in entries of their own, `inside-transformer.progress.<nickname>`. The learner's own
text is kept beside the progress, as it was typed, up to MAX_KEPT_TEXT characters
(`text_to_keep`, `text_to_restore`); it never leaves the browser except to the app itself.

Deliberately left out: talking to the browser (ui/learner/persist.py) and grading (lib/course/quiz.py).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import unicodedata
import zlib
from typing import Any, Mapping

VERSION = 1
CODE_PREFIX = "itt1."
FILE_KIND = "inside-transformer-progress"
MAX_BYTES = 256_000  # a code or file larger than this is not progress (a few KB at most)
MAX_ENTRIES = 2_000  # questions in all banks together are ~100
MAX_TEXT = 64  # a typed numeric answer
ID = re.compile(r"^[a-z0-9_]{1,64}$")
QKEY = re.compile(r"^[a-z0-9_]{1,64}:[a-z0-9_]{1,64}$")
STORAGE_PREFIX = "inside-transformer"
LEARNER_ENTRY = f"{STORAGE_PREFIX}.learner"  # the nickname in use on this browser profile, if any
PROGRESS_ENTRY = f"{STORAGE_PREFIX}.progress"
TEXT_ENTRY = f"{STORAGE_PREFIX}.text"
MAX_KEPT_TEXT = 20_000  # characters of the learner's own text kept in the browser (the box takes more)
MAX_NICKNAME = 24
_NICKNAME = re.compile(r"^[\w.\- ]+$")


class ProgressError(ValueError):
    """The code or file is not progress at all (not JSON, not ours, a newer version, too big)."""


def empty() -> dict[str, Any]:
    """Progress of a learner who has answered nothing.

    Example: empty()["results"] -> {}
    """
    return {"v": VERSION, "results": {}, "responses": {}, "final": {"seed": None, "answers": {}, "responses": {}}}


def _response(value: object) -> int | str | None:
    """An answer as kept: an option index (0..99) or a short text; None if neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 0 <= value < 100:
        return value
    if isinstance(value, str) and 0 < len(value) <= MAX_TEXT:
        return value
    return None


def _responses(raw: object, dropped: list[int]) -> dict[str, int | str]:
    out: dict[str, int | str] = {}
    if not isinstance(raw, Mapping):
        dropped[0] += raw is not None
        return out
    for key, value in list(raw.items())[:MAX_ENTRIES]:
        r = _response(value)
        if isinstance(key, str) and QKEY.match(key) and r is not None:
            out[key] = r
        else:
            dropped[0] += 1
    return out


def clean(raw: object) -> tuple[dict[str, Any], int]:
    """Check progress read from outside; return (progress, number of entries dropped).

    Raises ProgressError if `raw` is not a progress object of a version this code reads.

    Example: clean({"v": 1, "results": {"numbers": {"d_head": True, "bad id!": True}}})
             -> ({"v": 1, "results": {"numbers": {"d_head": True}}, ...}, 1)
    """
    if not isinstance(raw, Mapping):
        raise ProgressError("not an object")
    if raw.get("v") != VERSION:
        raise ProgressError(f"version {raw.get('v')!r}")
    dropped = [0]
    out = empty()
    results = raw.get("results", {})
    if not isinstance(results, Mapping):
        results, dropped[0] = {}, dropped[0] + 1
    for lesson, answers in list(results.items())[:MAX_ENTRIES]:
        if not (isinstance(lesson, str) and ID.match(lesson) and isinstance(answers, Mapping)):
            dropped[0] += 1
            continue
        kept = {q: v for q, v in list(answers.items())[:MAX_ENTRIES]
                if isinstance(q, str) and ID.match(q) and isinstance(v, bool)}
        dropped[0] += len(answers) - len(kept)
        if kept:
            out["results"][lesson] = kept
    out["responses"] = _responses(raw.get("responses", {}), dropped)
    final = raw.get("final", {})
    if not isinstance(final, Mapping):
        final, dropped[0] = {}, dropped[0] + 1
    seed = final.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 10**9:
        out["final"]["seed"] = seed
    elif seed is not None:
        dropped[0] += 1
    answers = final.get("answers", {})
    if isinstance(answers, Mapping):
        for key, value in list(answers.items())[:MAX_ENTRIES]:
            if isinstance(key, str) and QKEY.match(key) and isinstance(value, bool):
                out["final"]["answers"][key] = value
            else:
                dropped[0] += 1
    else:
        dropped[0] += 1
    out["final"]["responses"] = _responses(final.get("responses", {}), dropped)
    return out, dropped[0]


def merge(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Progress `old` (kept earlier) with `new` (this session's) on top, as the quizzes count it.

    The first answer to a question is what counts, so `old`'s results win; the last answer checked
    is what the page shows, so `new`'s responses win. The final quiz is one sitting: `new`'s, unless
    `new` has no answer in it yet (a fresh session), then `old`'s; answers of one sitting merge.

    Example: merge({"results": {"numbers": {"a": False}}, ...}, {"results": {"numbers": {"a": True,
             "b": True}}, ...})["results"] -> {"numbers": {"a": False, "b": True}}
    """
    out = empty()
    for source in (new, old):  # old last: its first answers overwrite
        for lesson, answers in source.get("results", {}).items():
            out["results"].setdefault(lesson, {}).update(answers)
    out["responses"] = {**old.get("responses", {}), **new.get("responses", {})}
    f_old, f_new = old.get("final", {}), new.get("final", {})
    if not f_new.get("answers") and (f_old.get("answers") or f_new.get("seed") is None):
        chosen = f_old
    else:
        chosen = f_new
    out["final"] = {"seed": chosen.get("seed"), "answers": dict(chosen.get("answers", {})),
                    "responses": dict(chosen.get("responses", {}))}
    if chosen is f_new and f_old.get("seed") == f_new.get("seed"):
        out["final"]["answers"] = {**f_new.get("answers", {}), **f_old.get("answers", {})}
        out["final"]["responses"] = {**f_old.get("responses", {}), **f_new.get("responses", {})}
    return out


def is_empty(progress: Mapping[str, Any]) -> bool:
    """True when nothing has been answered (a seed alone is not progress).

    Example: is_empty(empty()) -> True
    """
    final = progress.get("final", {})
    return not (progress.get("results") or progress.get("responses") or final.get("answers"))


def _json(progress: Mapping[str, Any]) -> str:
    return json.dumps(progress, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def encode(progress: Mapping[str, Any]) -> str:
    """A compact, URL-safe code of `progress` (what the browser's local storage keeps).

    Example: decode(encode(p)) == clean(p)[0] for any progress p
    """
    packed = zlib.compress(_json(progress).encode("utf-8"), 9)
    return CODE_PREFIX + base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def _inflate(packed: bytes) -> bytes:
    """zlib data, refused if it would grow beyond MAX_BYTES (a small code may hide a huge text)."""
    d = zlib.decompressobj()
    out = d.decompress(packed, MAX_BYTES + 1)
    if len(out) > MAX_BYTES or d.unconsumed_tail:
        raise ProgressError("too large")
    if not d.eof:
        raise ProgressError("truncated")
    return out


def decode(code: str) -> tuple[dict[str, Any], int]:
    """Progress from a code made by `encode`: (progress, entries dropped). Raises ProgressError.

    Example: decode("hello") raises ProgressError
    """
    if not isinstance(code, str) or not code.startswith(CODE_PREFIX) or len(code) > MAX_BYTES:
        raise ProgressError("not a progress code")
    body = code[len(CODE_PREFIX):]
    try:
        packed = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        raw = json.loads(_inflate(packed).decode("utf-8"))
    except (binascii.Error, ValueError, zlib.error) as e:
        if isinstance(e, ProgressError):
            raise
        raise ProgressError("unreadable code") from e
    return clean(raw)


def to_file(progress: Mapping[str, Any], saved_at: str = "") -> bytes:
    """The downloadable file: indented JSON, readable by a person, with what it is and when.

    Example: from_file(to_file(p))[0] == clean(p)[0]
    """
    doc = {"kind": FILE_KIND, "saved_at": saved_at, **clean(dict(progress))[0]}
    return (json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")


def from_file(data: bytes) -> tuple[dict[str, Any], int]:
    """Progress from a downloaded file (or a pasted code): (progress, entries dropped).

    Raises ProgressError for anything that is not such a file.
    """
    if len(data) > MAX_BYTES:
        raise ProgressError("too large")
    try:
        text = data.decode("utf-8-sig").strip()
    except UnicodeDecodeError as e:
        raise ProgressError("not text") from e
    if text.startswith(CODE_PREFIX):
        return decode(text)
    try:
        raw = json.loads(text)
    except ValueError as e:
        raise ProgressError("not JSON") from e
    if not isinstance(raw, Mapping) or raw.get("kind") != FILE_KIND:
        raise ProgressError("not a progress file")
    return clean(raw)


# --------------------------------------------------------------------------- learners and text

def nickname(raw: object) -> str | None:
    """A learner's nickname as kept: trimmed, spaces collapsed, lower case; "" for none (blank);
    None if it cannot be one (too long, or characters other than letters, digits, space . - _).

    Example: nickname("  Anna  Rossi ") -> "anna rossi"
    Example: nickname("") -> ""
    Example: nickname("a/b") -> None
    """
    if not isinstance(raw, str):
        return None
    name = " ".join(unicodedata.normalize("NFKC", raw).split()).casefold()
    if not name:
        return ""
    if len(name) > MAX_NICKNAME or not _NICKNAME.match(name):
        return None
    return name


def entries(learner: str) -> dict[str, str]:
    """The local-storage entries of one learner: their progress code and their own text.

    The same names are built by the browser side (ui/learner/persist.py's script): prefix, then
    ".<nickname>" for a learner with a name.

    Example: entries("") -> {"progress": "inside-transformer.progress", "text": "inside-transformer.text"}
    Example: entries("anna")["progress"] -> "inside-transformer.progress.anna"
    """
    suffix = f".{learner}" if learner else ""
    return {"progress": PROGRESS_ENTRY + suffix, "text": TEXT_ENTRY + suffix}


def text_to_keep(text: object, examples: tuple[str, ...] = ()) -> str:
    """What the browser keeps of the learner's text: the text itself, or "" (nothing kept) when it
    is blank, one of the course's example sentences, or longer than MAX_KEPT_TEXT.

    Example: text_to_keep("La professoressa di Bologna") -> "La professoressa di Bologna"
    Example: text_to_keep("Il gatto.", examples=("Il gatto.",)) -> ""
    """
    if not isinstance(text, str) or not text.strip() or text in examples or len(text) > MAX_KEPT_TEXT:
        return ""
    return text


def text_to_restore(stored: object, current: object, examples: tuple[str, ...] = ()) -> str | None:
    """The text to put back in the box from what the browser kept, or None to leave the box alone.

    A kept text comes back only over an example sentence or an empty box: a text from a shared link,
    or one typed in this session, is never replaced.

    Example: text_to_restore("Ciao a tutti", "Il gatto.", examples=("Il gatto.",)) -> "Ciao a tutti"
    Example: text_to_restore("Ciao a tutti", "Un link", examples=("Il gatto.",)) -> None
    """
    kept = text_to_keep(stored)
    if not kept or kept == current:
        return None
    if isinstance(current, str) and current.strip() and current not in examples:
        return None
    return kept
