"""The teacher's dashboard as plain tables: learners × lessons, answers per question, who is where.

A class store's Dashboard (lib/classroom/classroom.py) holds raw facts: pseudonyms, lessons visited, first
answers as language-neutral numbers (a choice's option index, a numeric answer's value). These functions
turn it into rows a page shows as they are, with the words (lesson titles, question prompts, option
texts) passed in by the caller in the teacher's language.

Deliberately left out: anything Streamlit, and escaping: pseudonyms stay the learner's text; the
page shows them only through elements that render no Markdown or HTML (st.dataframe, st.text).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from lib.classroom.class_links import display_names
from lib.course.quiz import format_number


_TEX = {r"\times": "×", r"\cdot": "·", r"\approx": "≈", r"\sqrt": "√", r"\theta": "θ", r"\pi": "π",
        r"\ln": "ln", r"\infty": "∞", r"\cos": "cos", r"\sin": "sin", r"\epsilon": "ε", r"\lVert": "‖",
        r"\rVert": "‖", r"\le": "≤", r"\ge": "≥", r"\to": "→", r"\,": " ", r"\%": "%"}
_SUP = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def plain_math(text: str) -> str:
    """A quiz text with its $...$ formulas written in plain characters, for a table cell (a table
    shows no formula): $12 \\cdot d^2$ -> 12 · d², \\tfrac{a}{b} -> a/b, \\mathrm{x} -> x.

    Example: plain_math("$n \\times 2^{10}$ bytes") -> "n × 2¹⁰ bytes"
    """
    def one(m: re.Match) -> str:
        f = re.sub(r"_\{([^{}]*)\}", r"_\1", m.group(1))
        f = re.sub(r"\\(?:mathrm|text|mathbf|operatorname)\{([^{}]*)\}", r"\1", f)
        f = re.sub(r"\\sqrt\{([^{}]*)\}", r"√(\1)", f)
        f = re.sub(r"\\t?frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2", f)
        for tex, char in sorted(_TEX.items(), key=lambda x: -len(x[0])):
            f = re.sub(re.escape(tex) + r"(?![A-Za-z])", char, f)
        f = re.sub(r"\^\{?([0-9-]+)\}?", lambda x: x.group(1).translate(_SUP), f)
        return f.replace("{", "").replace("}", "").replace("\\", "")
    return re.sub(r"\$([^$]+)\$", one, text)


def answer_label(question, answer: str, unknown: str = "?") -> str:
    """A first answer in words: a choice's option text (its number when out of range), a number
    written for the question's language, `unknown` for an answer whose text was not kept ("").

    Example: answer_label(q_with_options(("yes", "no")), "1") -> "no";
             answer_label(numeric_q_in_italian, "131072") -> "131.072"
    """
    if not answer:
        return unknown
    options = getattr(question, "options", ()) if question is not None else ()
    if options and answer.isdigit() and int(answer) < len(options):
        return plain_math(options[int(answer)])
    if question is not None and getattr(question, "kind", "") == "numeric":
        try:
            return format_number(float(answer), getattr(question, "lang", "en"))
        except ValueError:
            pass
    return answer


def grid(board, lessons: Sequence[str], anonymize: bool, template: str, visited_mark: str = "✓") -> list[list[str]]:
    """One row per learner: name, lesson now, one cell per lesson ("" unseen, "✓" seen, "right/answered"
    once a question was answered), and the final quiz "score/total".

    Example: a learner who opened `numbers` and got 2 of 3 right there: [name, now, "✓ 2/3", "", ..., ""]
    """
    names = display_names([r.pseudonym for r in board.learners], anonymize, template)
    rows = []
    for name, r in zip(names, board.learners):
        cells = []
        for lesson in lessons:
            score = r.scores.get(lesson)
            seen = visited_mark if lesson in r.visited else ""
            cells.append(f"{seen} {score[0]}/{score[1]}".strip() if score else seen)
        final = f"{r.final[0]}/{r.final[1]}" if r.final else ""
        rows.append([name, r.current_lesson or "", *cells, final])
    return rows


def on_lesson(board, lessons: Sequence[str]) -> list[tuple[str, int]]:
    """(lesson, learners there now), in the course's order, lessons with nobody left out.

    Example: {"attention": 3, "numbers": 1} -> [("numbers", 1), ("attention", 3)]
    """
    order = {x: i for i, x in enumerate(lessons)}
    return sorted(((k, n) for k, n in board.on_lesson.items() if n), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))


def question_rows(stats: Sequence, questions: Mapping[tuple[str, str], object],
                  right_mark: str = "✅", unknown: str = "?") -> list[tuple[str, str, int, float, str]]:
    """One row per question: (lesson, prompt, answers, share right 0-1, distribution), the
    distribution as "answer: count" items, most given first, the right answer marked.

    Example: answers "0" x3 (right) and "2" x1 to options (a, b, c) -> (..., 4, 0.75, "✅ a: 3 · c: 1")
    """
    rows = []
    for s in stats:
        q = questions.get((s.lesson, s.question_id))
        prompt = plain_math(q.prompt) if q is not None else s.question_id
        parts = [f"{right_mark + ' ' if a.correct else ''}{answer_label(q, a.answer, unknown)}: {a.count}"
                 for a in s.answers]
        rows.append((s.lesson, prompt, s.answered, s.share_right, " · ".join(parts)))
    return rows


def titled(rows: list, titles: Callable[[str], str], column: int = 0) -> list:
    """The rows with lesson ids in `column` replaced by their titles (unknown ids kept)."""
    out = []
    for row in rows:
        row = list(row)
        try:
            row[column] = titles(row[column]) if row[column] else ""
        except (KeyError, StopIteration):
            pass
        out.append(row)
    return out
