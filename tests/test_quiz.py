"""Tests for lib/course/quiz.py: number parsing, grading, scores, the final quiz, bank checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lib.course import quiz
from lib.course.quiz import (
    Question,
    Score,
    check_parallel,
    course_progress,
    draw_final,
    format_number,
    grade,
    lesson_score,
    load_bank,
    mistakes,
    parse_number,
    question_key,
    record,
)


def choice(qid: str = "c", lesson: str = "l", answer: int = 1) -> Question:
    return Question(qid, lesson, "choice", "Pick", ("a", "b", "c"), answer, 0.0, 0.0, "",
                    "Because b.")


def numeric(answer: float = 128, tolerance: float = 0.0, rel: float = 0.0, unit: str = "",
            lang: str = "en", qid: str = "n", lesson: str = "l") -> Question:
    return Question(qid, lesson, "numeric", "How many?", (), answer, tolerance, rel, unit,
                    "Because.", lang)


def bank(lesson: str, n: int) -> tuple[Question, ...]:
    return tuple(numeric(i, qid=f"q{i}", lesson=lesson) for i in range(n))


# ---------------------------------------------------------------- parse_number


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("128", 128.0),
        (" 1.5 ", 1.5),
        ("1,5", 1.5),             # Italian decimal comma
        ("-2,5", -2.5),
        ("\u22122.5", -2.5),       # the typographic minus sign
        (".5", 0.5),
        ("1e3", 1000.0),
        ("2.5E-3", 0.0025),
        ("80 GB", 80.0),           # a trailing unit is ignored
        ("80GB", 80.0),
        ("6,4 miliardi", 6.4),
        ("128 KiB", 128.0),
        ("1.234.567", 1234567.0),  # repeated separators group thousands
        ("1,234,567", 1234567.0),
        ("1.234,5", 1234.5),       # both marks: the last one is decimal
        ("1,234.5", 1234.5),
        # The ambiguous shape, one separator + exactly three digits: read as thousands.
        ("1.000", 1000.0),
        ("1,000", 1000.0),
        ("131.072", 131072.0),
        # ...but not after a leading 0 or more than three digits: a decimal then.
        ("0.125", 0.125),
        ("1234.567", 1234.567),
        ("1.25", 1.25),
        ("1.2345", 1.2345),
    ],
)
def test_parse_number(text: str, expected: float) -> None:
    assert parse_number(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text",
    ["", "   ", "abc", "GB 80", "12 ab 3", "1,23,4", "1.2,3.4", "1.", "inf", "nan", "1e999", "--1"],
)
def test_parse_number_rejects_garbage(text: str) -> None:
    with pytest.raises(ValueError):
        parse_number(text)


@pytest.mark.parametrize(
    ("value", "lang", "expected"),
    [(131072, "en", "131,072"), (131072, "it", "131.072"), (4096, "it", "4096"),
     (6.4, "it", "6,4"), (6.4, "en", "6.4"), (128.0, "en", "128"), (12345.5, "it", "12.345,5")],
)
def test_format_number(value: float, lang: str, expected: str) -> None:
    assert format_number(value, lang) == expected


def test_format_then_parse_round_trips() -> None:
    for value in (3, 64, 4096, 131072, 6.4, 0.3, 12345.5):
        for lang in ("it", "en"):
            assert parse_number(format_number(value, lang)) == pytest.approx(value)


# ---------------------------------------------------------------- grading


def test_grade_choice() -> None:
    q = choice(answer=1)
    assert grade(q, 1) == quiz.Grade(True, "b", "Because b.")
    wrong = grade(q, 2)
    assert not wrong.correct and wrong.expected == "b"


@pytest.mark.parametrize("bad", [3, -1, True, "1", 1.0])
def test_grade_choice_rejects_non_indices(bad: object) -> None:
    with pytest.raises(ValueError):
        grade(choice(), bad)  # type: ignore[arg-type]


def test_grade_numeric_exact() -> None:
    q = numeric(128)
    assert grade(q, 128).correct
    assert grade(q, "128").correct
    assert grade(q, 128.0).correct
    assert not grade(q, 127).correct
    assert not grade(q, "129").correct


def test_grade_numeric_absolute_tolerance() -> None:
    q = numeric(80, tolerance=1, unit="GB")
    assert grade(q, "80 GB").correct
    assert grade(q, "81").correct and grade(q, 79).correct
    assert not grade(q, "81.5").correct
    assert grade(q, 80).expected == "80 GB"


def test_grade_numeric_relative_tolerance() -> None:
    q = numeric(6.4, rel=0.05, unit="billion")
    assert grade(q, "6.44").correct
    assert grade(q, "6,7 billion").correct      # 6.4 * 1.05 = 6.72
    assert not grade(q, "6.8").correct
    assert not grade(q, 6.0).correct            # 6.4 * 0.95 = 6.08


def test_grade_numeric_wider_of_the_two_tolerances() -> None:
    q = numeric(100, tolerance=5, rel=0.01)
    assert grade(q, 104).correct
    assert not grade(q, 106).correct


def test_grade_numeric_italian_comma_and_float_noise() -> None:
    assert grade(numeric(1.5), "1,5").correct
    assert grade(numeric(0.3), 0.1 + 0.2).correct


def test_grade_numeric_expected_in_the_question_language() -> None:
    assert grade(numeric(6.4, unit="miliardi", lang="it"), 1).expected == "6,4 miliardi"
    assert grade(numeric(131072, lang="en"), 1).expected == "131,072"


@pytest.mark.parametrize("bad", ["", "  ", "abc", "about eighty"])
def test_grade_numeric_unparsable_raises(bad: str) -> None:
    with pytest.raises(ValueError):
        grade(numeric(80), bad)


# ---------------------------------------------------------------- scores


def test_record_keeps_first_answer_only() -> None:
    results: dict[str, dict[str, bool]] = {}
    results = record(results, "numbers", "a", False)
    results = record(results, "numbers", "a", True)
    results = record(results, "numbers", "b", True)
    assert results == {"numbers": {"a": False, "b": True}}


def test_record_does_not_mutate_its_input() -> None:
    before = {"numbers": {"a": True}}
    record(before, "numbers", "b", False)
    assert before == {"numbers": {"a": True}}


def test_lesson_score() -> None:
    b = bank("numbers", 5)
    results = {"numbers": {"q0": True, "q1": False, "q3": True, "gone": True}}
    score = lesson_score(results, "numbers", b)
    assert score == Score(correct=2, answered=3, total=5)  # "gone" is not in the bank
    assert score.fraction == pytest.approx(0.4)
    assert lesson_score({}, "numbers", b) == Score(0, 0, 5)
    assert Score(0, 0, 0).fraction == 0.0


def test_course_progress() -> None:
    banks = {"numbers": bank("numbers", 4), "tokens": bank("tokens", 6)}
    results = {"numbers": {"q0": True, "q1": True}, "tokens": {"q2": False}, "old": {"x": True}}
    per_lesson, overall = course_progress(results, banks)
    assert list(per_lesson) == ["numbers", "tokens"]
    assert per_lesson["numbers"] == Score(2, 2, 4)
    assert per_lesson["tokens"] == Score(0, 1, 6)
    assert overall == Score(2, 3, 10)


# ---------------------------------------------------------------- final quiz


def test_draw_final_is_deterministic_and_in_lesson_order() -> None:
    banks = {"numbers": bank("numbers", 10), "tokens": bank("tokens", 8), "tiny": bank("tiny", 1)}
    first = draw_final(banks, 3, seed=42)
    assert first == draw_final(banks, 3, seed=42)
    assert [q.lesson for q in first] == ["numbers"] * 3 + ["tokens"] * 3 + ["tiny"]
    for lesson_id in banks:
        positions = [int(q.id[1:]) for q in first if q.lesson == lesson_id]
        assert positions == sorted(positions), "bank order kept within a lesson"
    assert len({question_key(q) for q in first}) == len(first), "no repeats"


def test_draw_final_depends_on_seed() -> None:
    banks = {"numbers": bank("numbers", 10), "tokens": bank("tokens", 8)}
    first = draw_final(banks, 3, seed=0)
    assert any(draw_final(banks, 3, seed=s) != first for s in range(1, 20))


def test_draw_final_edge_cases() -> None:
    banks = {"numbers": bank("numbers", 4)}
    assert draw_final(banks, 0, seed=1) == ()
    assert draw_final(banks, 10, seed=1) == banks["numbers"]  # all of it, in order
    with pytest.raises(ValueError):
        draw_final(banks, -1, seed=1)


def test_draw_final_never_draws_two_of_a_group() -> None:
    banks = {"a": bank("a", 3), "b": bank("b", 3)}
    groups = (frozenset({"a:q0", "a:q1", "b:q2"}),)
    for seed in range(200):
        keys = [question_key(q) for q in draw_final(banks, 3, seed, same_fact=groups)]
        assert len(set(keys) & groups[0]) == 1, keys  # one of the group, never two
        assert len(keys) == 4  # each lesson gives what is left: 'a' two, 'b' two or three
    # Without groups every question of these small banks is drawn.
    assert len(draw_final(banks, 3, 0, same_fact=())) == 6


@pytest.mark.parametrize("lang", ["it", "en"])
def test_final_quiz_of_the_course_asks_each_fact_once(lang: str) -> None:
    from lib.course.i18n import quiz_ids

    banks = {lid: load_bank(lang, lid) for lid in quiz_ids(lang)}
    every_key = {question_key(q) for b in banks.values() for q in b}
    for group in quiz.SAME_FACT:
        assert len(group) >= 2 and group <= every_key, sorted(group - every_key)
    for seed in range(300):
        keys = {question_key(q) for q in draw_final(banks, 3, seed)}
        assert all(len(keys & group) <= 1 for group in quiz.SAME_FACT), (seed, sorted(keys))


def test_question_key_separates_lessons() -> None:
    a, b = numeric(qid="q1", lesson="numbers"), numeric(qid="q1", lesson="tokens")
    assert question_key(a) == "numbers:q1"
    assert question_key(a) != question_key(b)


def test_mistakes_in_quiz_order() -> None:
    questions = bank("numbers", 3) + bank("tokens", 2)
    answers = {"numbers:q0": True, "numbers:q2": False, "tokens:q0": False, "tokens:q1": True}
    wrong = mistakes(answers, questions)
    assert [question_key(q) for q in wrong] == ["numbers:q2", "tokens:q0"]
    assert mistakes({}, questions) == []  # unanswered is not a mistake


# ---------------------------------------------------------------- banks


@pytest.mark.parametrize("lang", ["it", "en"])
def test_numbers_bank(lang: str) -> None:
    questions = load_bank(lang, "numbers")
    assert len(questions) >= 10
    assert all(q.lesson == "numbers" and q.lang == lang for q in questions)
    by_id = {q.id: q for q in questions}
    # The five seed questions and a few of the lesson's own figures.
    assert grade(by_id["d_head_70b"], "128").correct
    assert grade(by_id["kv_32k"], "80 GB").correct
    assert grade(by_id["live_d_head"], 64).correct
    assert grade(by_id["gqa_group"], "3").correct
    assert grade(by_id["kv_per_token_kib"], "128").correct
    assert grade(by_id["rule_of_thumb"], str(12 * 4096**2 * 32 / 1e9)).correct
    assert grade(by_id["d_model_from_heads"], "4096").correct
    for qid in ("many_heads", "kv_per_layer", "deep_layers", "small_model_params"):
        assert by_id[qid].kind == "choice"


def test_kv_per_token_answer_matches_the_formula() -> None:
    # Oracle: 2 (K and V) x layers x KV heads x d_head x 2 bytes, in KiB, for Llama-3 8B.
    q = {q.id: q for q in load_bank("en", "numbers")}["kv_per_token_kib"]
    assert q.answer == 2 * 32 * 8 * 128 * 2 / 1024


def test_check_parallel_on_real_banks() -> None:
    assert check_parallel("it", "en") == []


def _write_bank(root: Path, lang: str, lesson_id: str, questions: list[dict]) -> None:
    folder = root / "quiz" / lang
    folder.mkdir(parents=True, exist_ok=True)
    data = {"lesson": lesson_id, "questions": questions}
    (folder / f"{lesson_id}.json").write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def fake_assets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(quiz, "ASSETS", tmp_path)
    load_bank.cache_clear()
    yield tmp_path
    load_bank.cache_clear()


def test_check_parallel_finds_mismatches(fake_assets: Path) -> None:
    base = {"id": "q1", "kind": "numeric", "prompt": "P", "answer": 3, "explanation": "E"}
    opts = {"id": "q2", "kind": "choice", "prompt": "P", "options": ["a", "b"], "answer": 0,
            "explanation": "E"}
    _write_bank(fake_assets, "it", "one", [base, opts])
    _write_bank(fake_assets, "en", "one",
                [{**base, "answer": 4}, {**opts, "options": ["a", "b", "c"]}])
    _write_bank(fake_assets, "it", "two", [base])
    _write_bank(fake_assets, "en", "two", [{**base, "id": "other"}])
    _write_bank(fake_assets, "it", "only_it", [base])
    problems = check_parallel("it", "en")
    assert any("one:q1: answer" in p for p in problems)
    assert any("one:q2: 2 options vs 3" in p for p in problems)
    assert any(p.startswith("two: ids differ") for p in problems)
    assert any(p.startswith("only_it: bank in it but not in en") for p in problems)
    assert len(problems) == 4


@pytest.mark.parametrize(
    "bad_question",
    [
        {"id": "q", "kind": "choice", "prompt": "P", "options": ["a", "b"], "answer": 2,
         "explanation": "E"},
        {"id": "q", "kind": "choice", "prompt": "P", "options": ["a"], "answer": 0,
         "explanation": "E"},
        {"id": "q", "kind": "essay", "prompt": "P", "answer": 0, "explanation": "E"},
        {"id": "q", "kind": "numeric", "prompt": "P", "answer": "128", "explanation": "E"},
        {"id": "q", "kind": "numeric", "prompt": "", "answer": 1, "explanation": "E"},
        {"id": "Q 1", "kind": "numeric", "prompt": "P", "answer": 1, "explanation": "E"},
        {"id": "q", "kind": "numeric", "prompt": "P", "answer": 1, "tolerance": -1,
         "explanation": "E"},
    ],
)
def test_load_bank_rejects_malformed_questions(fake_assets: Path, bad_question: dict) -> None:
    _write_bank(fake_assets, "en", "bad", [bad_question])
    with pytest.raises(ValueError):
        load_bank("en", "bad")
    assert check_parallel("en", "en") != []  # reported, not raised


def test_load_bank_rejects_duplicates_and_wrong_lesson(fake_assets: Path) -> None:
    q = {"id": "q", "kind": "numeric", "prompt": "P", "answer": 1, "explanation": "E"}
    _write_bank(fake_assets, "en", "dup", [q, q])
    with pytest.raises(ValueError, match="duplicate"):
        load_bank("en", "dup")
    (fake_assets / "quiz" / "en" / "renamed.json").write_text(
        json.dumps({"lesson": "numbers", "questions": [q]}), encoding="utf-8")
    with pytest.raises(ValueError, match="expected 'renamed'"):
        load_bank("en", "renamed")
