"""Language choice and loading of the course's texts (UI labels and lesson prose).

Every user-facing sentence lives in `assets/` per language; this module finds the right file,
parses it and hands it over as plain dicts keyed by id:

- `assets/ui/<lang>.json`: a flat JSON object, label id -> text.
- `assets/lessons/<lang>/<lesson_id>.md`: Markdown split into sections by marker lines of the
  exact form `<!-- section: SECTION_ID -->`; a page asks for the sections it shows, by id.

`fill` puts live numbers into a text without touching the braces of LaTeX formulas.

Variants: a section or label id may carry the model features it needs in brackets,
`<!-- section: order[post_norms] -->` or `"block.history.gqa[single_kv_head]": ...`. `variant`
returns the first variant (in file order) whose features the loaded model has, else the plain id;
the feature names are those of `lib.model.features` ("!name" means the model lacks it).

Deliberately left out: formatting numbers (callers pass them already formatted for the
language), pluralisation rules and any Streamlit import; the page decides where text goes.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Iterable, Mapping

LANGS: tuple[str, ...] = ("it", "en")
DEFAULT_LANG: str = "en"

ASSETS: Path = Path(__file__).resolve().parents[2] / "assets"

# Ids are used to build file paths: keep them to lowercase words so no id can climb out of assets/.
_ID = re.compile(r"[a-z0-9_]+")
_SECTION_MARKER = re.compile(r"^<!-- section: ([a-z0-9_]+(?:\[[a-z0-9_!,]+\])?) -->[ \t]*$")
_VARIANT = re.compile(r"^(?P<base>[^\[\]]+)\[(?P<needs>[a-z0-9_!,]+)\]$")
# A placeholder is {name}; it is *not* a placeholder when the brace opens the argument of a
# LaTeX command (\frac{a}, \text{x}), a subscript or superscript (d_{model}, x^{2}) or follows
# another group (\frac{a}{b}, \sqrt[3]{x}): there the braces belong to the formula.
_PLACEHOLDER = re.compile(r"(?<![\\A-Za-z0-9_^}\]])\{([A-Za-z_][A-Za-z0-9_]*)\}")


def choose_language(query_lang: str | None, locale: str | None) -> str:
    """Pick the course language: a valid `?lang=` value wins, then the browser locale.

    Only the primary subtag of the locale counts ("it-IT" -> "it"); anything unknown falls back
    to DEFAULT_LANG.

    Example: choose_language("it", "en-US") -> "it"
    Example: choose_language("fr", "it-IT") -> "it"
    Example: choose_language(None, "de-DE") -> "en"
    """
    if query_lang is not None:
        candidate = query_lang.strip().lower()
        if candidate in LANGS:
            return candidate
    if locale:
        primary = re.split(r"[-_]", locale.strip().lower(), maxsplit=1)[0]
        if primary in LANGS:
            return primary
    return DEFAULT_LANG


def _check_lang(lang: str) -> None:
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; expected one of {LANGS}")


def _check_id(kind: str, value: str) -> None:
    if not _ID.fullmatch(value):
        raise ValueError(f"invalid {kind} id {value!r}: use lowercase letters, digits and _")


def ui_files(lang: str) -> list[Path]:
    """The label files of a language: the shell's `ui/<lang>.json`, then one per lesson in
    `ui/<lang>/<lesson>.json`, so lessons own their labels without editing a shared file.
    """
    folder = ASSETS / "ui" / lang
    return [ASSETS / "ui" / f"{lang}.json", *sorted(folder.glob("*.json"))]


@lru_cache(maxsize=None)
def _load_ui(lang: str) -> tuple[tuple[str, str], ...]:
    merged: dict[str, str] = {}
    for path in ui_files(lang):
        if not path.exists():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data.items()
        ):
            raise ValueError(f"{path} must be a flat JSON object of label id -> text")
        clash = merged.keys() & data.keys()
        if clash:
            raise ValueError(f"{path} repeats label ids defined in another file: {sorted(clash)}")
        merged.update(data)
    return tuple(merged.items())


def ui(lang: str) -> dict[str, str]:
    """Return the UI labels of a language, loaded once from `assets/ui/<lang>.json` and the
    lessons' `assets/ui/<lang>/*.json` (no id may appear in two files).

    Each call returns a fresh dict, so a caller cannot alter the cached copy that every browser
    session shares.

    Example: ui("en")["language"] -> "Language"   (whatever en.json says)
    """
    _check_lang(lang)
    return dict(_load_ui(lang))


@lru_cache(maxsize=None)
def _labels(lang: str) -> MappingProxyType:
    return MappingProxyType(dict(_load_ui(lang)))


def label(lang: str, key: str) -> str:
    """One UI label (the key itself when unknown), read from a read-only mapping built once per
    language: pages ask for hundreds of labels per run, and `ui()` copies the whole table.

    Example: label("en", "language") -> "Language"
    """
    _check_lang(lang)
    return _labels(lang).get(key, key)


def parse_sections(text: str, source: str = "<text>") -> dict[str, str]:
    """Split Markdown into sections at `<!-- section: ID -->` marker lines, keeping their order.

    Blank lines around a section are trimmed. Text before the first marker, or a repeated id,
    is an error: it would silently vanish from the page.

    Example: parse_sections("<!-- section: a -->\\nHi\\n<!-- section: b -->\\nBye\\n")
             -> {"a": "Hi", "b": "Bye"}
    """
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        match = _SECTION_MARKER.match(line)
        if match:
            section_id = match.group(1)
            if section_id in sections:
                raise ValueError(f"{source}:{lineno}: section {section_id!r} appears twice")
            current = sections[section_id] = []
        elif current is None:
            if line.strip():
                raise ValueError(f"{source}:{lineno}: text before the first section marker")
        else:
            current.append(line)
    return {sid: "\n".join(lines).strip("\n") for sid, lines in sections.items()}


@lru_cache(maxsize=None)
def _load_lesson(lang: str, lesson_id: str) -> tuple[tuple[str, str], ...]:
    path = ASSETS / "lessons" / lang / f"{lesson_id}.md"
    return tuple(parse_sections(path.read_text(encoding="utf-8"), str(path)).items())


def lesson(lang: str, lesson_id: str) -> dict[str, str]:
    """Return the sections of a lesson, in file order: {section_id: markdown}.

    Loaded once from `assets/lessons/<lang>/<lesson_id>.md`; each call returns a fresh dict.

    Example: list(lesson("en", "numbers"))[:2] -> ["intro", "relation"]
    """
    _check_lang(lang)
    _check_id("lesson", lesson_id)
    return dict(_load_lesson(lang, lesson_id))


def split_variant(key: str) -> tuple[str, str | None]:
    """(base id, feature conditions) of a section or label id; conditions are None for a plain id.

    Example: split_variant("order[post_norms]") -> ("order", "post_norms")
    Example: split_variant("order") -> ("order", None)
    """
    match = _VARIANT.match(key)
    return (match.group("base"), match.group("needs")) if match else (key, None)


def variant(texts: Mapping[str, str], key: str, have: Iterable[str] | None) -> str:
    """The text of `key` for a model with the features `have`: the first `key[...]` variant whose
    conditions all hold (file order), else `texts[key]` itself. `have=None` means "no model
    features known" and returns the plain text.

    Example: variant({"a": "x", "a[windowed]": "y"}, "a", {"windowed"}) -> "y"
    Example: variant({"a": "x", "a[windowed]": "y"}, "a", set()) -> "x"
    """
    from lib.model.features import satisfied

    if have is not None:
        have = frozenset(have)
        prefix = key + "["
        for k, text in texts.items():
            if k.startswith(prefix):
                base, needs = split_variant(k)
                if base == key and needs is not None and satisfied(needs, have):
                    return text
    return texts[key]


def variant_keys(texts: Mapping[str, str], key: str) -> list[str]:
    """Every id that `variant` may pick for `key`: the plain one first, then its variants.

    Example: variant_keys({"a": "x", "a[windowed]": "y", "b": "z"}, "a") -> ["a", "a[windowed]"]
    """
    return [key] + [k for k in texts if k.startswith(key + "[") and split_variant(k)[0] == key]


@lru_cache(maxsize=None)
def _label_bases_with_variants(lang: str) -> frozenset[str]:
    return frozenset(split_variant(k)[0] for k, _ in _load_ui(lang) if split_variant(k)[1] is not None)


def has_label(lang: str, key: str) -> bool:
    """Whether the language's labels define `key` (an optional label, asked for only if it exists).

    Example: has_label("en", "language") -> True
    """
    _check_lang(lang)
    return key in _labels(lang)


def has_label_variants(lang: str, key: str) -> bool:
    """Whether a label has feature variants (so the caller needs the model's features)."""
    return key in _label_bases_with_variants(lang)


def label_for(lang: str, key: str, have: Iterable[str] | None) -> str:
    """`label`, picking the feature variant that fits `have` (see `variant`).

    Example: label_for("en", "block.history.gqa", {"single_kv_head"}) -> the MQA sentence
    """
    _check_lang(lang)
    table = _labels(lang)
    if key not in table:
        return key
    return variant(table, key, have) if has_label_variants(lang, key) else table[key]


def fill(template: str, **values: object) -> str:
    """Replace `{name}` with `values[name]`, only for the names given; all other braces stay.

    LaTeX groups are left alone even when their content is a given name: a brace glued to a
    command or word (`\\frac{a}`), to `_` or `^` (`d_{model}`) or to another group (`{a}{b}`,
    `[3]{x}`) is part of a formula, so a placeholder needs a space, punctuation or `$` before
    it. Values are inserted with str(); format numbers before passing them.

    Example: fill("$d = {d_model}$, $\\frac{a}{b}$", d_model="576") -> "$d = 576$, $\\frac{a}{b}$"
    Example: fill("{n_heads} heads, {unknown}", n_heads="9") -> "9 heads, {unknown}"
    """

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        return str(values[name]) if name in values else match.group(0)

    return _PLACEHOLDER.sub(substitute, template)


def placeholders(template: str) -> set[str]:
    """Return the names that `fill` would replace in a template, if given.

    Example: placeholders("{n_layers} layers, $x_{i}$") -> {"n_layers"}
    """
    return {m.group(1) for m in _PLACEHOLDER.finditer(template)}


def lesson_ids(lang: str) -> list[str]:
    """List the lesson ids that have a text file in a language, sorted.

    Example: lesson_ids("it") -> ["numbers", ...]
    """
    _check_lang(lang)
    return sorted(p.stem for p in (ASSETS / "lessons" / lang).glob("*.md"))


def quiz_ids(lang: str) -> list[str]:
    """List the lesson ids that have a quiz bank in a language, sorted.

    Example: quiz_ids("en") -> ["numbers", ...]
    """
    _check_lang(lang)
    return sorted(p.stem for p in (ASSETS / "quiz" / lang).glob("*.json"))
