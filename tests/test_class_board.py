"""The teacher's handouts and tables (lib.classroom.class_links, lib.classroom.class_board), on a real class store in a
temporary SQLite file."""

from __future__ import annotations

import urllib.parse

import pytest
import segno

from lib.classroom import class_board as B
from lib.classroom import class_links as L
from lib.classroom.classroom import ClassStore
from lib.course.quiz import load_bank


def test_the_links_carry_the_code_and_the_secret_and_nothing_else():
    secret = "a+b/c=d&e"  # characters a URL must escape
    join = urllib.parse.urlsplit(L.join_link("http://10.0.0.5:8501", "K7QF3M", "it"))
    assert (join.netloc, join.path, urllib.parse.parse_qs(join.query)) == (
        "10.0.0.5:8501", "/", {"lang": ["it"], "class": ["K7QF3M"]})
    teacher = urllib.parse.urlsplit(L.teacher_link("https://school.example/corso", "K7QF3M", secret, "en"))
    assert teacher.path == "/corso/teachers"
    assert urllib.parse.parse_qs(teacher.query) == {"lang": ["en"], "class": ["K7QF3M"], "key": [secret]}


def test_the_qr_code_is_a_png_of_the_link():
    link = "http://10.0.0.5:8501/?lang=it&class=K7QF3M"
    png = L.qr_png(link)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # The same symbol segno draws for the link (error correction M, readable from a projector).
    assert segno.make(link, error="m", micro=False).designator.endswith("-M")


def test_display_names_hide_every_pseudonym_when_anonymized():
    names = ["<b>x</b>", "Ada", "Ada 2"]
    assert B.display_names(names, False) == names
    shown = B.display_names(names, True, "Learner {n}")
    assert shown == ["Learner 1", "Learner 2", "Learner 3"] and not set(shown) & set(names)


@pytest.fixture
def board(tmp_path):
    store = ClassStore(f"sqlite:///{tmp_path / 'c.db'}")
    created = store.create_class("4B")
    bank = {q.id: q for q in load_bank("en", "numbers")}
    q = bank["kv_per_layer"]
    right, wrong = str(int(q.answer)), str((int(q.answer) + 1) % len(q.options))
    for name, answer in (("Ada", right), ("Bea", right), ("Cy", wrong)):
        learner = store.join(created.code, name)
        store.record_visit(learner.id, "numbers")
        store.record_answer(learner.id, "numbers", q.id, answer, answer == right)
    store.record_visit(learner.id, "attention")  # Cy moved on
    store.record_final(learner.id, 20, 24)
    return store.dashboard(created.code, created.secret), q


def test_the_grid_has_one_row_per_learner_with_visits_scores_and_final(board):
    dash, q = board
    lessons = ["numbers", "tokenization", "attention"]
    rows = B.grid(dash, lessons, False, "Learner {n}")
    assert rows == [["Ada", "numbers", "✓ 1/1", "", "", ""],
                    ["Bea", "numbers", "✓ 1/1", "", "", ""],
                    ["Cy", "attention", "✓ 0/1", "", "✓", "20/24"]]
    assert [r[0] for r in B.grid(dash, lessons, True, "Learner {n}")] == ["Learner 1", "Learner 2", "Learner 3"]
    assert B.on_lesson(dash, lessons) == [("numbers", 2), ("attention", 1)]


def test_each_question_shows_its_answers_in_words_with_the_right_one_marked(board):
    dash, q = board
    (row,) = B.question_rows(dash.questions, {("numbers", q.id): q})
    wrong = q.options[(int(q.answer) + 1) % len(q.options)]
    assert row == ("numbers", q.prompt, 3, 2 / 3, f"✅ {q.options[int(q.answer)]}: 2 · {wrong}: 1")
    assert B.question_rows(dash.most_wrong, {}) == [("numbers", q.id, 3, 2 / 3, f"✅ {int(q.answer)}: 2 · "
                                                     f"{(int(q.answer) + 1) % len(q.options)}: 1")]


def test_an_answer_that_is_not_an_option_is_shown_as_typed():
    class Q:
        options = ("a", "b")

    assert [B.answer_label(Q, x) for x in ("1", "7", "<i>", "")] == ["b", "7", "<i>", "?"]
    assert B.answer_label(None, "12.5") == "12.5"
    assert B.answer_label(Q, "", unknown="(not kept)") == "(not kept)"


@pytest.mark.parametrize("lang, shown", [("en", "131,072"), ("it", "131.072")])
def test_a_numeric_answer_is_written_for_the_teachers_language(lang, shown):
    q = next(q for q in load_bank(lang, "numbers") if q.kind == "numeric")
    assert B.answer_label(q, "131072") == shown
    assert B.answer_label(q, "0.5") == ("0.5" if lang == "en" else "0,5")


def test_every_quiz_text_reads_without_latex_in_a_table():
    """The dashboard's tables show no formula: every prompt and option of every quiz bank, in both
    languages, comes out of plain_math without a backslash, a brace or a dollar sign."""
    from lib.classroom.class_board import plain_math
    from lib.course import i18n
    from lib.course.quiz import load_bank
    from ui.shell import nav

    assert plain_math("la regola $12 \\cdot d^2 \\cdot L$") == "la regola 12 · d² · L"
    assert plain_math("$\\tfrac{1}{\\sqrt{d_{head}}}$") == "1/√(d_head)"
    for lang in i18n.LANGS:
        for lesson in [x.id for x in nav.LESSONS]:
            for q in load_bank(lang, lesson):
                for text in (q.prompt, *getattr(q, "options", ())):
                    out = plain_math(text)
                    assert not any(c in out for c in "\\{}$"), (lang, lesson, q.id, out)
