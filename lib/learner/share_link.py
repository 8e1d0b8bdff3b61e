"""Links to a view: a lesson's widget values, the language, the model and the text, in a URL.

A teacher who wants the class on "layer 15, head 8 of this sentence" sends one link:

    /attention?lang=en&model=gpt2&text=eJzz...&layer=15&head=8

Widget values travel as readable parameters, typed by a per-lesson table the UI gives
(`Param`: parameter name -> session key and kind). The text travels compressed (zlib, URL-safe
base64) up to TEXT_LIMIT characters of parameter; a longer text is left out of the link, and
the caller says so. Reading a link never raises: each parameter that is unknown, malformed or
out of its choices is skipped and reported as a notice `(code, parameter)` for the page to show.

Deliberately left out: ranges that depend on the model (layer < n_layers...): the widgets and
their views already bring a stale or impossible value back in range, with their own notice.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import zlib
from dataclasses import dataclass
from typing import Any, Mapping

TEXT_LIMIT = 6_000  # characters of the compressed text parameter (URLs stay well under 8 KB)
MAX_TEXT_CHARS = 50_000  # what the app's text box accepts
MAX_STR = 400  # a widget's text (a sentence, a word list)
MAX_ITEMS = 16
RESERVED = ("lang", "model", "text")
KINDS = ("int", "float", "bool", "str", "strs")
_INT = re.compile(r"^-?\d{1,10}$")
_ITEM = re.compile(r"^[A-Za-z0-9_.\-]{1,32}$")
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}(/[A-Za-z0-9][A-Za-z0-9_.\-]{0,95})?$")


class ShareError(ValueError):
    """A text parameter that cannot be read back."""


@dataclass(frozen=True)
class Param:
    """One shareable widget: its session key, its kind, and the values it may take.

    `choices`: the only values allowed (if fixed). `lo`/`hi`: bounds of a number, either fixed or
    `(size, offset)`, a size of the model read when the link is opened (("layers", -1): the last
    layer). A value outside them is left out with a notice (a widget would refuse it).
    """

    key: str
    kind: str
    choices: tuple = ()
    lo: float | None = None
    hi: float | tuple[str, int] | None = None


@dataclass(frozen=True)
class View:
    """What a link asks for; `notices` lists `(code, parameter)` for every part left out."""

    lang: str | None
    model: str | None
    text: str | None
    values: dict[str, Any]
    notices: tuple[tuple[str, str], ...]


def encode_text(text: str, limit: int = TEXT_LIMIT) -> str | None:
    """The text as a URL-safe parameter, or None if even compressed it is longer than `limit`.

    Example: decode_text(encode_text("Ciao, mondo! 👋")) -> "Ciao, mondo! 👋"
    """
    packed = zlib.compress(text.encode("utf-8"), 9)
    code = base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")
    return code if len(code) <= limit else None


def decode_text(code: str, limit: int = TEXT_LIMIT) -> str:
    """The text back from `encode_text`; raises ShareError for anything else (or a zip bomb)."""
    if not isinstance(code, str) or not code or len(code) > limit:
        raise ShareError("missing or too long")
    try:
        packed = base64.urlsafe_b64decode(code + "=" * (-len(code) % 4))
        d = zlib.decompressobj()
        raw = d.decompress(packed, 4 * MAX_TEXT_CHARS + 1)
        if len(raw) > 4 * MAX_TEXT_CHARS or d.unconsumed_tail or not d.eof:
            raise ShareError("too large or truncated")
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError, zlib.error) as e:
        if isinstance(e, ShareError):
            raise
        raise ShareError("unreadable") from e
    if len(text) > MAX_TEXT_CHARS:
        raise ShareError("too long")
    return text


def format_value(value: Any, kind: str) -> str | None:
    """A widget value as a parameter; None if it is not of its kind.

    Example: format_value(0.7000000000000001, "float") -> "0.7"
    """
    if kind == "bool":
        return ("1" if value else "0") if isinstance(value, bool) else None
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            return None
        return str(int(value))
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None
        return format(float(value), ".10g")
    if kind == "str":
        return value if isinstance(value, str) and len(value) <= MAX_STR else None
    if kind == "strs":
        if not isinstance(value, (list, tuple)) or len(value) > MAX_ITEMS:
            return None
        if not all(isinstance(x, str) and _ITEM.match(x) for x in value):
            return None
        return ",".join(value)
    raise ValueError(f"unknown kind {kind!r}")


def parse_value(raw: str, kind: str) -> Any:
    """A parameter back to a widget value; raises ValueError if malformed.

    Example: parse_value("15", "int") -> 15;  parse_value("1e400", "float") raises ValueError
    """
    if kind == "bool":
        if raw in ("1", "true"):
            return True
        if raw in ("0", "false"):
            return False
        raise ValueError(raw)
    if kind == "int":
        if not _INT.match(raw):
            raise ValueError(raw)
        return int(raw)
    if kind == "float":
        if len(raw) > 24:
            raise ValueError(raw)
        value = float(raw)
        if not math.isfinite(value):
            raise ValueError(raw)
        return value
    if kind == "str":
        if len(raw) > MAX_STR or any(ord(c) < 32 and c not in "\t\n" for c in raw):
            raise ValueError(raw)
        return raw
    if kind == "strs":
        items = raw.split(",") if raw else []
        if len(items) > MAX_ITEMS or not all(_ITEM.match(x) for x in items):
            raise ValueError(raw)
        return items
    raise ValueError(f"unknown kind {kind!r}")


def build(lang: str, model: str | None, text: str | None, values: Mapping[str, Any],
          spec: Mapping[str, Param], limit: int = TEXT_LIMIT) -> tuple[dict[str, str], bool]:
    """The query of a link to this view, and whether the text had to be left out (too long).

    `values` maps session keys to their current values; keys outside `spec`, and values not of
    their kind, are left out. `model=None`: the built-in model (no parameter).

    Example: build("en", None, "Hi", {"attention.layer": 15}, {"layer": Param("attention.layer", "int")})
             -> ({"lang": "en", "text": "eNrzyAQAAPsAsg", "layer": "15"}, False)
    """
    query: dict[str, str] = {"lang": lang}
    if model:
        query["model"] = model
    too_long = False
    if text:
        code = encode_text(text, limit)
        if code is None:
            too_long = True
        else:
            query["text"] = code
    for name, p in spec.items():
        if p.key in values:
            shown = format_value(values[p.key], p.kind)
            if shown is not None and (not p.choices or values[p.key] in p.choices):
                query[name] = shown
    return query, too_long


def _bound(b: float | tuple[str, int] | None, sizes: Mapping[str, int]) -> float | None:
    if isinstance(b, tuple):
        name, offset = b
        return sizes[name] + offset if name in sizes else None
    return b


def in_range(value: Any, p: Param, sizes: Mapping[str, int]) -> bool:
    """Whether a parsed value fits its widget's bounds (numbers only; a size not given is no bound).

    Example: in_range(30, Param("attention.layer", "int", lo=0, hi=("layers", -1)), {"layers": 30}) -> False
    """
    if p.kind not in ("int", "float"):
        return True
    lo, hi = _bound(p.lo, sizes), _bound(p.hi, sizes)
    return (lo is None or value >= lo) and (hi is None or value <= hi)


def _is_builtin(name: str) -> bool:
    """Whether `name` is a built-in model's id ("embedded:gemma-3-270m"), which a hub id can never be."""
    if not name.startswith("embedded:"):
        return False
    from lib.model.models import EMBEDDED_MODELS  # late: the link's own parsing needs no torch

    return name in EMBEDDED_MODELS


def parse(query: Mapping[str, str], spec: Mapping[str, Param], langs: tuple[str, ...] = ("it", "en"),
          limit: int = TEXT_LIMIT, sizes: Mapping[str, int] | None = None) -> View:
    """What a link asks for; never raises. Every parameter left out is named in `notices`:
    "unknown" (not a parameter of this lesson), "malformed" (not of its kind or choices),
    "text" (a text that cannot be read back), "model" (neither a hub id nor a built-in model's id). `sizes`: the model's sizes
    that bounds such as ("layers", -1) refer to.

    Example: parse({"layer": "15", "head": "x", "zoom": "2"}, spec).values -> {"attention.layer": 15}
             with notices (("malformed", "head"), ("unknown", "zoom"))
    """
    notices: list[tuple[str, str]] = []
    lang = model = text = None
    values: dict[str, Any] = {}
    for name, raw in query.items():
        raw = raw if isinstance(raw, str) else str(raw)
        if name == "lang":
            if raw in langs:
                lang = raw
            else:
                notices.append(("malformed", name))
        elif name == "model":
            if (_MODEL.match(raw) and ".." not in raw) or _is_builtin(raw):
                model = raw
            else:
                notices.append(("model", name))
        elif name == "text":
            try:
                text = decode_text(raw, limit)
            except ShareError:
                notices.append(("text", name))
        elif name in spec:
            p = spec[name]
            try:
                value = parse_value(raw, p.kind)
            except ValueError:
                notices.append(("malformed", name))
                continue
            if (p.choices and value not in p.choices) or not in_range(value, p, sizes or {}):
                notices.append(("malformed", name))
                continue
            values[p.key] = value
        else:
            notices.append(("unknown", name))
    return View(lang, model, text, values, tuple(notices))
