"""Tests for lib/course/i18n.py and for the consistency of the texts across languages."""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from lib.course import i18n
from lib.course.i18n import (
    ASSETS,
    DEFAULT_LANG,
    LANGS,
    choose_language,
    fill,
    lesson,
    lesson_ids,
    parse_sections,
    placeholders,
    quiz_ids,
    ui,
)

NUMBERS_SECTIONS = ["intro", "relation", "live", "builtin", "builtin[builtin,gguf_q4_k_m]", "builtin[builtin,gguf_q4_1]",
                    "params", "params[biases,!gated_mlp]", "reference", "stack", "why_heads", "depth", "glimpse", "next",
                    "live_wide"]


# ---------------------------------------------------------------- choose_language


@pytest.mark.parametrize(
    ("query", "locale", "expected"),
    [
        ("it", "en-US", "it"),      # a valid ?lang= wins over the browser
        ("en", "it-IT", "en"),
        (" IT ", None, "it"),       # tolerant of case and spaces
        ("fr", "it-IT", "it"),      # an invalid ?lang= is ignored
        ("", "it", "it"),
        (None, "it-IT", "it"),
        (None, "it_CH", "it"),
        (None, "en-GB", "en"),
        (None, "de-DE", DEFAULT_LANG),
        (None, None, DEFAULT_LANG),
        (None, "", DEFAULT_LANG),
        (None, "italian", DEFAULT_LANG),  # only the primary subtag counts
    ],
)
def test_choose_language(query: str | None, locale: str | None, expected: str) -> None:
    assert choose_language(query, locale) == expected


def test_default_language_is_one_of_the_languages() -> None:
    assert LANGS == ("it", "en")
    assert DEFAULT_LANG == "en"


# ---------------------------------------------------------------- fill


def test_fill_replaces_given_names_and_leaves_latex() -> None:
    template = r"$d = {d_model}$ and $\frac{a}{b}$, $d_{model}$, $x^{n}$, $\sqrt[3]{a}$"
    out = fill(template, d_model="576", a="WRONG", b="WRONG", model="WRONG", n="WRONG")
    assert out == r"$d = 576$ and $\frac{a}{b}$, $d_{model}$, $x^{n}$, $\sqrt[3]{a}$"


def test_fill_leaves_unknown_placeholders_and_odd_braces() -> None:
    assert fill("{n_heads} heads, {unknown}", n_heads="9") == "9 heads, {unknown}"
    assert fill("{ not a name } {} {1x}", x="1") == "{ not a name } {} {1x}"
    assert fill("({n_kv_heads})", n_kv_heads="3") == "(3)"


def test_fill_does_not_substitute_twice() -> None:
    # A value that itself looks like a placeholder is inserted literally.
    assert fill("{a} {b}", a="{b}", b="B") == "{b} B"


def test_placeholders_matches_fill() -> None:
    template = r"{n_layers} layers of $d_{model} = {d_model}$, $\text{x}$"
    assert placeholders(template) == {"n_layers", "d_model"}
    filled = fill(template, n_layers="30", d_model="576")
    assert placeholders(filled) == set()


# ---------------------------------------------------------------- sections


def test_parse_sections_keeps_order_and_trims() -> None:
    text = "\n<!-- section: b -->\n\nFirst *para*.\n\nSecond.\n\n<!-- section: a -->\nBye\n"
    assert parse_sections(text) == {"b": "First *para*.\n\nSecond.", "a": "Bye"}
    assert list(parse_sections(text)) == ["b", "a"]


def test_parse_sections_only_exact_markers() -> None:
    text = "<!-- section: a -->\nx <!-- section: b --> inline\n<!--section: c-->\n"
    assert list(parse_sections(text)) == ["a"]


@pytest.mark.parametrize(
    "bad",
    ["stray text\n<!-- section: a -->\nx\n", "<!-- section: a -->\nx\n<!-- section: a -->\ny\n"],
)
def test_parse_sections_rejects_lost_text_and_duplicates(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_sections(bad)


@pytest.mark.parametrize("lang", LANGS)
def test_numbers_lesson_sections(lang: str) -> None:
    sections = lesson(lang, "numbers")
    assert list(sections) == NUMBERS_SECTIONS
    assert all(text.strip() for text in sections.values())
    assert placeholders(sections["live"]) >= {"model_name", "n_heads", "n_kv_heads", "group_size"}


def test_lesson_returns_a_fresh_dict() -> None:
    first = lesson("en", "numbers")
    first["intro"] = "changed"
    assert lesson("en", "numbers")["intro"] != "changed"


@pytest.mark.parametrize(("lang", "lesson_id"), [("fr", "numbers"), ("en", "../ui/en"), ("en", "")])
def test_lesson_rejects_bad_ids(lang: str, lesson_id: str) -> None:
    with pytest.raises(ValueError):
        lesson(lang, lesson_id)


# ---------------------------------------------------------------- consistency across languages


def test_listing_helpers() -> None:
    for lang in LANGS:
        assert "numbers" in lesson_ids(lang)
        assert "numbers" in quiz_ids(lang)
        assert lesson_ids(lang) == sorted(lesson_ids(lang))


def test_same_lessons_in_every_language() -> None:
    assert lesson_ids("it") == lesson_ids("en")


@pytest.mark.parametrize("lesson_id", sorted(set(lesson_ids("it")) | set(lesson_ids("en"))))
def test_lesson_sections_match_across_languages(lesson_id: str) -> None:
    it, en = lesson("it", lesson_id), lesson("en", lesson_id)
    assert list(it) == list(en), "same section ids, same order"
    for section_id in it:
        assert placeholders(it[section_id]) == placeholders(en[section_id]), section_id


def test_every_quiz_bank_is_parallel() -> None:
    from lib.course.quiz import check_parallel

    assert check_parallel("it", "en") == []  # same ids, kinds, answers and tolerances


def numbers_in(text: str) -> Counter:
    """The figures a text states, written the same way in both languages: separators dropped, so
    "4.096" / "4,096" and "0,30" / "0.30" compare equal; placeholders are not figures."""
    text = re.sub(r"\{[A-Za-z_]+\}", " ", text).replace("{,}", ",").replace("{.}", ".")
    return Counter(re.sub(r"[.,\u202f ]", "", m.group()) for m in re.finditer(r"\d+(?:[.,\u202f ]\d+)*", text))


# Where the two languages say the same figure in different words (15 trillion = 15.000 miliardi).
SAME_FIGURE_IN_WORDS = {"lessons:kvcache:training": {"15", "15000"},
                        "quiz:attention:mask_before_softmax:prompt": {"0"},  # "set to 0" = "azzerare"
                        "quiz:numbers:rule_of_thumb:explanation": {"1"}}  # "1 billion" = "un miliardo"


def figures_differ(where: str, it: str, en: str) -> str | None:
    a, b = numbers_in(it), numbers_in(en)
    odd = set((a - b) + (b - a)) - SAME_FIGURE_IN_WORDS.get(where, set())
    return f"{where}: it {dict(a - b)} vs en {dict(b - a)}" if odd else None


def test_lesson_sections_state_the_same_figures_in_both_languages() -> None:
    problems = [figures_differ(f"lessons:{lid}:{sid}", lesson("it", lid)[sid], text)
                for lid in lesson_ids("en") for sid, text in lesson("en", lid).items()]
    assert [p for p in problems if p] == []


def test_quiz_items_state_the_same_figures_in_both_languages() -> None:
    from lib.course.quiz import load_bank

    problems = []
    for lid in quiz_ids("en"):
        for qi, qe in zip(load_bank("it", lid), load_bank("en", lid)):
            pairs = [("prompt", qi.prompt, qe.prompt), ("explanation", qi.explanation, qe.explanation)]
            pairs += [(f"option{i}", a, b) for i, (a, b) in enumerate(zip(qi.options, qe.options))]
            problems += [figures_differ(f"quiz:{lid}:{qi.id}:{field}", a, b) for field, a, b in pairs]
    assert [p for p in problems if p] == []


def test_every_quiz_has_a_lesson() -> None:
    for lang in LANGS:
        missing = set(quiz_ids(lang)) - set(lesson_ids(lang))
        assert not missing, f"quiz banks without a lesson in {lang}: {missing}"


def test_every_label_file_exists_in_every_language() -> None:
    """The shell's labels and each lesson's label file, in every language: a file deleted in one
    language fails here (the loader itself reads only the files it finds)."""
    for lang in LANGS:
        assert (ASSETS / "ui" / f"{lang}.json").is_file(), f"assets/ui/{lang}.json is missing"
    lessons = {lang: {p.name for p in i18n.ui_files(lang)[1:]} for lang in LANGS}
    every = set().union(*lessons.values())
    assert every, "no lesson label files in assets/ui/<lang>/"
    missing = {lang: sorted(every - names) for lang, names in lessons.items() if every - names}
    assert missing == {}


def test_ui_labels_match_across_languages() -> None:
    it, en = ui("it"), ui("en")
    assert set(it) == set(en)
    assert all(v.strip() for v in [*it.values(), *en.values()])
    # The loader hands out copies of the shared cache.
    it["__probe__"] = "x"
    assert "__probe__" not in ui("it")


def test_ui_rejects_unknown_language() -> None:
    with pytest.raises(ValueError):
        ui("fr")


def test_ui_loads_a_flat_dict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ui").mkdir()
    (tmp_path / "ui" / "it.json").write_text(json.dumps({"hello": "Ciao"}), encoding="utf-8")
    (tmp_path / "ui" / "en.json").write_text(json.dumps({"hello": {"nested": 1}}), encoding="utf-8")
    monkeypatch.setattr(i18n, "ASSETS", tmp_path)
    i18n._load_ui.cache_clear()
    try:
        assert ui("it") == {"hello": "Ciao"}
        with pytest.raises(ValueError):
            ui("en")
    finally:
        i18n._load_ui.cache_clear()


# ---------------------------------------------------------------- house rule


@pytest.mark.parametrize("module", ["i18n.py", "quiz.py"])
def test_module_does_not_import_streamlit(module: str) -> None:
    tree = ast.parse((Path(i18n.__file__).parent / module).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert "streamlit" not in imported


def test_label_reads_the_same_table_as_ui_and_cannot_be_altered() -> None:
    for lang in i18n.LANGS:
        table = i18n.ui(lang)
        assert all(i18n.label(lang, key) == text for key, text in table.items())
        assert i18n.label(lang, "no.such.label") == "no.such.label"
    with pytest.raises(TypeError):
        i18n._labels("en")["language"] = "changed"  # type: ignore[index]
    with pytest.raises(ValueError):
        i18n.label("xx", "language")
