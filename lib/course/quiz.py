"""The quiz engine: question banks, grading, scores and the final quiz.

A bank is `assets/quiz/<lang>/<lesson_id>.json`:
`{"lesson": "<lesson_id>", "questions": [...]}` with two kinds of question:

- choice:  {"id", "kind": "choice", "prompt", "options": [...], "answer": <index>, "explanation"}
- numeric: {"id", "kind": "numeric", "prompt", "answer": <number>, "tolerance": <absolute>,
            "rel_tolerance": <fraction, optional>, "unit": <text, optional>, "explanation"}

State stays with the page as plain dicts, so this module holds none:
`results[lesson_id][question_id] -> correct on the first answer`. In the final quiz, questions of
different lessons may share an id, so there a question is known by `question_key(q)`,
`"<lesson>:<id>"`.

Deliberately left out: any widget or session handling, and timing or negative marking.
"""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

from lib.course.i18n import ASSETS, LANGS

KINDS = ("choice", "numeric")


@dataclass(frozen=True)
class Question:
    """One question of a bank. `options` is empty for numeric questions; `lang` formats answers."""

    id: str
    lesson: str
    kind: str
    prompt: str
    options: tuple[str, ...]
    answer: float | int
    tolerance: float
    rel_tolerance: float
    unit: str
    explanation: str
    lang: str = "en"


@dataclass(frozen=True)
class Grade:
    """The verdict on one answer: `expected` is the right answer written out for people."""

    correct: bool
    expected: str
    explanation: str


@dataclass(frozen=True)
class Score:
    """How many questions were answered right, answered at all, and exist."""

    correct: int
    answered: int
    total: int

    @property
    def fraction(self) -> float:
        """Share of the total answered right (0.0 for an empty bank).

        Example: Score(3, 4, 10).fraction -> 0.3
        """
        return self.correct / self.total if self.total else 0.0


# ---------------------------------------------------------------------------- loading banks


def _question(raw: object, lesson_id: str, lang: str, where: str) -> Question:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: a question must be a JSON object")
    for field in ("id", "kind", "prompt", "answer", "explanation"):
        if field not in raw:
            raise ValueError(f"{where}: missing field {field!r}")
    qid, kind = raw["id"], raw["kind"]
    where = f"{where} ({qid})"
    if not isinstance(qid, str) or not re.fullmatch(r"[a-z0-9_]+", qid):
        raise ValueError(f"{where}: id must be lowercase letters, digits and _")
    if kind not in KINDS:
        raise ValueError(f"{where}: kind must be one of {KINDS}")
    for field in ("prompt", "explanation"):
        if not isinstance(raw[field], str) or not raw[field].strip():
            raise ValueError(f"{where}: {field} must be non-empty text")
    answer = raw["answer"]
    if kind == "choice":
        options = raw.get("options")
        if not isinstance(options, list) or len(options) < 2:
            raise ValueError(f"{where}: a choice question needs at least two options")
        if not all(isinstance(o, str) and o.strip() for o in options):
            raise ValueError(f"{where}: options must be non-empty text")
        if isinstance(answer, bool) or not isinstance(answer, int):
            raise ValueError(f"{where}: answer must be the index of an option")
        if not 0 <= answer < len(options):
            raise ValueError(f"{where}: answer index {answer} out of range")
        return Question(qid, lesson_id, kind, raw["prompt"], tuple(options), answer,
                        0.0, 0.0, "", raw["explanation"], lang)
    if "options" in raw:
        raise ValueError(f"{where}: a numeric question has no options")
    numbers = {"answer": answer, "tolerance": raw.get("tolerance", 0),
               "rel_tolerance": raw.get("rel_tolerance", 0)}
    for field, value in numbers.items():
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not is_number or not math.isfinite(value):
            raise ValueError(f"{where}: {field} must be a number")
    if numbers["tolerance"] < 0 or numbers["rel_tolerance"] < 0:
        raise ValueError(f"{where}: tolerances cannot be negative")
    unit = raw.get("unit", "")
    if not isinstance(unit, str):
        raise ValueError(f"{where}: unit must be text")
    return Question(qid, lesson_id, kind, raw["prompt"], (), answer, float(numbers["tolerance"]),
                    float(numbers["rel_tolerance"]), unit, raw["explanation"], lang)


@lru_cache(maxsize=None)
def load_bank(lang: str, lesson_id: str) -> tuple[Question, ...]:
    """Load and validate `assets/quiz/<lang>/<lesson_id>.json`, in file order.

    Raises ValueError naming the file and question when the bank is malformed (unknown kind,
    answer index out of range, duplicate id...). The result is immutable, so caching is safe.

    Example: load_bank("en", "numbers")[0].kind -> "numeric"
    """
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}")
    if not re.fullmatch(r"[a-z0-9_]+", lesson_id):
        raise ValueError(f"invalid lesson id {lesson_id!r}")
    path = ASSETS / "quiz" / lang / f"{lesson_id}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise ValueError(f"{path}: expected {{'lesson': ..., 'questions': [...]}}")
    if data.get("lesson") != lesson_id:
        raise ValueError(f"{path}: 'lesson' is {data.get('lesson')!r}, expected {lesson_id!r}")
    questions = tuple(
        _question(raw, lesson_id, lang, f"{path} question {i}")
        for i, raw in enumerate(data["questions"])
    )
    ids = [q.id for q in questions]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"{path}: duplicate question ids {duplicates}")
    return questions


# ---------------------------------------------------------------------------- numbers

# A number, then anything without digits (a unit such as "GB", "KiB", "billion", "%").
_NUMBER = re.compile(r"\s*([+-]?)((?:[0-9]|[.,][0-9])[0-9.,]*)(?:[eE]([+-]?[0-9]+))?\s*([^0-9]*)")


def _digits(mantissa: str) -> str:
    """Turn "1.234,5" / "1,234.5" / "1,5" / "1.000" into Python's "1234.5" / "1.5" / "1000"."""
    seps = [c for c in mantissa if c in ".,"]
    if not seps:
        return mantissa
    if mantissa[-1] in ".,":
        raise ValueError("a number cannot end with a separator")
    kinds = set(seps)
    if len(kinds) == 2:
        # Both kinds: the last one is the decimal mark, the other groups thousands.
        decimal_mark = mantissa[max(mantissa.rfind("."), mantissa.rfind(","))]
        whole, _, frac = mantissa.rpartition(decimal_mark)
        group_mark = "," if decimal_mark == "." else "."
        if decimal_mark in whole:
            raise ValueError("two decimal marks")
        return _ungroup(whole, group_mark) + "." + frac
    mark = seps[0]
    if len(seps) > 1:
        return _ungroup(mantissa, mark)  # "1.000.000", "1,000,000"
    whole, _, frac = mantissa.partition(mark)
    if len(frac) == 3 and 1 <= len(whole) <= 3 and not whole.startswith("0"):
        return whole + frac  # the one ambiguous shape: read as thousands (see parse_number)
    return whole + "." + frac


def _ungroup(text: str, mark: str) -> str:
    groups = text.split(mark)
    if not (1 <= len(groups[0]) <= 3) or any(len(g) != 3 for g in groups[1:]):
        raise ValueError("thousands groups must have three digits")
    return "".join(groups)


def parse_number(text: str) -> float:
    """Read a number typed by a learner, in Italian or English style, ignoring a trailing unit.

    Accepted: "128", " 1.5 ", "1,5" (decimal comma), ".5", "1e3", "80 GB", "6,4 miliardi",
    "131,072" / "131.072" / "1.234.567" / "1,234,567" (thousands groups), "1.234,5" / "1,234.5"
    (both marks: the last one is the decimal mark).

    The ambiguous shape is a single "." or "," followed by exactly three digits, after one to
    three digits that do not start with 0, as in "1.000" or "128,000". We read it as a thousands
    separator, in both languages: the answers in this course are counts (bytes, parameters,
    tokens), where grouping is common and three decimals are rare. So "1.000" -> 1000.0 and
    "1,000" -> 1000.0, while "0.125" -> 0.125 and "1.25" -> 1.25. To mean 1.5, write "1.5",
    not "1.500".

    Raises ValueError for empty text, text that does not start with a number, a digit after the
    unit ("12 ab 3") or malformed groups ("1,23,4").

    Example: parse_number("1,5") -> 1.5
    Example: parse_number("80 GB") -> 80.0
    Example: parse_number("1.000") -> 1000.0
    """
    if not isinstance(text, str):
        raise ValueError("expected text")
    cleaned = text.replace("\u2212", "-").replace("\u00a0", " ").replace("\u202f", " ")
    match = _NUMBER.fullmatch(cleaned)
    if not match or not cleaned.strip():
        raise ValueError(f"not a number: {text!r}")
    sign, mantissa, exponent, _unit = match.groups()
    literal = sign + _digits(mantissa) + (f"e{exponent}" if exponent else "")
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text!r}")
    return value


def format_number(value: float, lang: str = "en") -> str:
    """Write a number for people: thousands grouped from 10,000 up, decimal mark per language.

    Example: format_number(131072, "it") -> "131.072"
    Example: format_number(6.4, "it") -> "6,4"
    Example: format_number(4096, "en") -> "4096"
    """
    if float(value).is_integer():
        text = f"{int(value):,}" if abs(value) >= 10_000 else str(int(value))
    else:
        text = f"{value:,.6g}" if abs(value) >= 10_000 else f"{value:.6g}"
    if lang == "it":
        text = text.replace(",", "\0").replace(".", ",").replace("\0", ".")
    return text


# ---------------------------------------------------------------------------- grading


def grade(q: Question, response: int | float | str) -> Grade:
    """Grade one answer.

    Choice: `response` is the index of the chosen option. Numeric: a number or the text the
    learner typed, read by `parse_number` (whose ValueError propagates, so the page can ask
    for a number). A numeric answer is right when it lies within `tolerance` of the answer,
    or within `rel_tolerance` times the answer, whichever is wider.

    Example: grade(Question("q", "numbers", "numeric", "d_head?", (), 128, 0, 0, "", "..."),
                   "128") -> Grade(correct=True, expected="128", explanation="...")
    """
    if q.kind == "choice":
        if isinstance(response, bool) or not isinstance(response, int):
            raise ValueError("a choice answer is the index of an option")
        if not 0 <= response < len(q.options):
            raise ValueError(f"option index {response} out of range")
        return Grade(response == q.answer, q.options[int(q.answer)], q.explanation)
    if isinstance(response, str):
        value = parse_number(response)
    elif isinstance(response, (int, float)) and not isinstance(response, bool):
        value = float(response)
    else:
        raise ValueError("a numeric answer is a number or the text of one")
    # A hair of slack so that 0.1 + 0.2 style float noise never fails an exact answer.
    allowed = max(q.tolerance, q.rel_tolerance * abs(q.answer)) + 1e-9 * max(1.0, abs(q.answer))
    expected = format_number(q.answer, q.lang) + (f" {q.unit}" if q.unit else "")
    return Grade(abs(value - q.answer) <= allowed, expected, q.explanation)


# ---------------------------------------------------------------------------- scores


def record(results: Mapping[str, Mapping[str, bool]], lesson_id: str, question_id: str,
           correct: bool) -> dict[str, dict[str, bool]]:
    """Return a copy of `results` with this answer recorded, unless one was recorded before.

    Only the first answer counts: retrying a question teaches, but does not raise the score.

    Example: record({}, "numbers", "d_head", True) -> {"numbers": {"d_head": True}}
    Example: record({"numbers": {"d_head": False}}, "numbers", "d_head", True)
             -> {"numbers": {"d_head": False}}
    """
    copy = {lesson: dict(answers) for lesson, answers in results.items()}
    copy.setdefault(lesson_id, {}).setdefault(question_id, bool(correct))
    return copy


def lesson_score(results: Mapping[str, Mapping[str, bool]], lesson_id: str,
                 bank: Sequence[Question]) -> Score:
    """Score one lesson; results for ids no longer in the bank are ignored.

    Example: lesson_score({"numbers": {"a": True, "b": False}}, "numbers", bank_of_5)
             -> Score(correct=1, answered=2, total=5)
    """
    answers = results.get(lesson_id, {})
    ids = [q.id for q in bank]
    answered = [answers[i] for i in ids if i in answers]
    return Score(sum(bool(a) for a in answered), len(answered), len(ids))


def course_progress(results: Mapping[str, Mapping[str, bool]],
                    banks: Mapping[str, Sequence[Question]]) -> tuple[dict[str, Score], Score]:
    """Score every lesson, in the order of `banks`, and the course as a whole.

    Returns `(per_lesson, overall)`, where overall sums the lessons' counts.

    Example: course_progress({"numbers": {"a": True}}, {"numbers": bank_of_5})
             -> ({"numbers": Score(1, 1, 5)}, Score(1, 1, 5))
    """
    per_lesson = {lid: lesson_score(results, lid, bank) for lid, bank in banks.items()}
    overall = Score(sum(s.correct for s in per_lesson.values()),
                    sum(s.answered for s in per_lesson.values()),
                    sum(s.total for s in per_lesson.values()))
    return per_lesson, overall


# ---------------------------------------------------------------------------- final quiz


def question_key(q: Question) -> str:
    """The identity of a question across lessons, used by the final quiz: "<lesson>:<id>".

    Example: question_key(load_bank("en", "numbers")[0]) -> "numbers:d_model_from_heads"
    """
    return f"{q.lesson}:{q.id}"


# Questions of different lessons that test the same fact (the same arithmetic on the same model):
# each lesson keeps its own for its check-yourself section, but the final quiz asks at most one
# of each group, so a learner never meets the same question twice in one sitting.
SAME_FACT: tuple[frozenset[str], ...] = (
    frozenset({"numbers:kv_32k", "kvcache:seventy_at_32k"}),
    frozenset({"numbers:kv_per_token_kib", "kvcache:per_token_8b"}),
    frozenset({"numbers:gqa_saving", "attention:llama_gqa_saving", "kvcache:overstated_by"}),
    frozenset({"sampling:first_token_slow", "kvcache:first_token"}),
)


def draw_final(banks: Mapping[str, Sequence[Question]], n_per_lesson: int,
               seed: int, same_fact: Sequence[frozenset[str]] = SAME_FACT) -> tuple[Question, ...]:
    """Draw up to `n_per_lesson` questions from each lesson for the final quiz.

    Lessons come in the order of `banks`, and within a lesson questions keep their bank order,
    so the quiz follows the course. The same seed always draws the same questions.
    Key the answers by `question_key`. At most one question of each `same_fact` group (sets
    of question keys) is drawn; a lesson left with too few other questions gives fewer.

    Example: [question_key(q) for q in draw_final({"numbers": bank}, 2, seed=7)]
             -> e.g. ["numbers:d_head_70b", "numbers:kv_32k"]
    """
    if n_per_lesson < 0:
        raise ValueError("n_per_lesson cannot be negative")
    rng = random.Random(seed)
    group_of = {key: i for i, group in enumerate(same_fact) for key in group}
    used_groups: set[int] = set()
    drawn: list[Question] = []
    for bank in banks.values():
        picked: list[int] = []
        for i in rng.sample(range(len(bank)), len(bank)):  # a random order of the whole bank
            if len(picked) == n_per_lesson:
                break
            group = group_of.get(question_key(bank[i]))
            if group is not None:
                if group in used_groups:
                    continue
                used_groups.add(group)
            picked.append(i)
        drawn.extend(bank[i] for i in sorted(picked))
    return tuple(drawn)


def mistakes(final_answers: Mapping[str, bool], questions: Sequence[Question]) -> list[Question]:
    """The questions answered wrong in the final quiz, in quiz order, for the review.

    `final_answers` maps `question_key(q)` -> correct; unanswered questions are not mistakes.

    Example: mistakes({"numbers:a": True, "numbers:b": False}, quiz) -> [question b]
    """
    return [q for q in questions if final_answers.get(question_key(q)) is False]


# ---------------------------------------------------------------------------- consistency


def check_parallel(lang_a: str, lang_b: str) -> list[str]:
    """Compare the banks of two languages and list every mismatch (empty when consistent).

    The same lesson must have a bank in both languages, each loading without error, with the same
    question ids in the same order, and per question the same kind, answer, tolerances and
    number of options, and a unit in both or in neither. Only the wording may differ.

    Example: check_parallel("it", "en") -> []
    """
    problems: list[str] = []
    dir_a, dir_b = ASSETS / "quiz" / lang_a, ASSETS / "quiz" / lang_b
    ids_a = {p.stem for p in dir_a.glob("*.json")}
    ids_b = {p.stem for p in dir_b.glob("*.json")}
    for lesson_id in sorted(ids_a - ids_b):
        problems.append(f"{lesson_id}: bank in {lang_a} but not in {lang_b}")
    for lesson_id in sorted(ids_b - ids_a):
        problems.append(f"{lesson_id}: bank in {lang_b} but not in {lang_a}")
    for lesson_id in sorted(ids_a & ids_b):
        try:
            bank_a, bank_b = load_bank(lang_a, lesson_id), load_bank(lang_b, lesson_id)
        except (ValueError, OSError) as error:  # json.JSONDecodeError is a ValueError
            problems.append(f"{lesson_id}: {error}")
            continue
        order_a, order_b = [q.id for q in bank_a], [q.id for q in bank_b]
        if order_a != order_b:
            problems.append(f"{lesson_id}: ids differ: {lang_a} {order_a} vs {lang_b} {order_b}")
            continue
        for qa, qb in zip(bank_a, bank_b):
            where = f"{lesson_id}:{qa.id}"
            for field in ("kind", "answer", "tolerance", "rel_tolerance"):
                if getattr(qa, field) != getattr(qb, field):
                    problems.append(f"{where}: {field} {getattr(qa, field)!r} vs "
                                    f"{getattr(qb, field)!r}")
            if len(qa.options) != len(qb.options):
                problems.append(f"{where}: {len(qa.options)} options vs {len(qb.options)}")
            if bool(qa.unit) != bool(qb.unit):
                problems.append(f"{where}: unit {qa.unit!r} vs {qb.unit!r}")
    return problems
