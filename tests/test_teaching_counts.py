"""The teachers' figures, derived: the words each page shows with the default model (counted on the
rendered pages, kept in assets/lessons/shown_words.json) and the sizing rule from its named run.

`ITT_WRITE_SHOWN_WORDS=1 .venv/bin/python -m pytest tests/test_teaching_counts.py -n 0` writes the
counts afresh after the texts change; without it the test checks that the kept counts still give
every page the minutes its shown text gives.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from lib.classroom import teaching as T
from lib.course import i18n
from lib.course.quiz import load_bank
from lib.model.models import DEFAULT_MODEL
from tests.renders import PAGES, TEXT, walk

ROOT = Path(__file__).resolve().parent.parent


def shown_counts(lang: str) -> dict:
    """{"words": page id -> words it shows, "final_questions": n} from the default model's pages.

    Left out: the lines every lesson page shows (the sidebar) and the quiz questions, which the
    minutes count as a minute each."""
    from ui.shell import nav

    pages = walk(lang, DEFAULT_MODEL, TEXT[lang])
    for page, render in pages.items():
        assert not render.exception, (page, render.exception)
    lessons = {x.path: x.id for x in (*nav.LESSONS, nav.COMPARE, nav.FINAL)}
    common = set.intersection(*(set(pages[p].prose.splitlines()) for p in PAGES[:8]))
    prompts = {q.prompt.strip() for lesson in i18n.quiz_ids(lang) for q in load_bank(lang, lesson)}
    words, final_questions = {}, 0
    for page, render in pages.items():
        lines = [x for x in render.prose.splitlines() if x not in common]
        asked = [x for x in lines if x.strip() in prompts]
        words[lessons[page]] = T.word_count("\n".join(x for x in lines if x.strip() not in prompts))
        if lessons[page] == nav.FINAL.id:
            final_questions = len(asked)
    return {"words": words, "final_questions": final_questions}


def test_minutes_count_the_words_the_default_models_pages_show():
    derived = {lang: shown_counts(lang) for lang in i18n.LANGS}
    if os.environ.get("ITT_WRITE_SHOWN_WORDS") == "1":
        T.SHOWN_WORDS.write_text(json.dumps(derived, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for lang in i18n.LANGS:
        kept = T.shown_words(lang)
        assert kept["final_questions"] == derived[lang]["final_questions"] > 0
        for page, words in derived[lang]["words"].items():
            questions = len(load_bank(lang, page)) if page in i18n.quiz_ids(lang) else 0
            assert T.lesson_minutes(kept["words"][page], questions) == T.lesson_minutes(words, questions), \
                (lang, page, kept["words"][page], words, "run with ITT_WRITE_SHOWN_WORDS=1")


def test_variants_for_other_models_are_not_counted():
    """The words of a lesson file with every variant are more than its page shows."""
    for lang in i18n.LANGS:
        kept = T.shown_words(lang)["words"]
        whole = T.word_count("\n".join(i18n.lesson(lang, "numbers").values()))
        assert kept["numbers"] < whole


def test_the_sizing_run_is_the_latest_written_up():
    """CLASS_RUN is the run under "Latest" in its write-up: its hours, its learners and its peak."""
    run = T.CLASS_RUN
    doc = (ROOT / run.doc).read_text(encoding="utf-8")
    latest = doc[doc.index("### Latest"):]
    latest = latest[: latest.index("\n### ", 1)]
    hours = run.when.split(", ")[1].replace(" UTC", "")
    assert hours in latest and f"--learners {run.learners}" in latest and f"--replicas {run.replicas}" in latest
    assert re.search(rf"{run.peak_gb:.2f} GB peak", latest), "the peak of the latest run"
    assert T.sizing(run.learners) == T.Sizing(run.learners, 1, run.cores, run.replicas, round(run.peak_gb, 1),
                                              T.sizing(run.learners).memory_gb_gemma)
    both = T.BOTH_MODELS_RUN
    assert f"{both.peak_gb:.2f} GB" in (ROOT / both.doc).read_text(encoding="utf-8") and "--both" in both.script


def test_sizing_grows_by_whole_machines():
    run = T.CLASS_RUN
    sizes = [T.sizing(n) for n in range(1, 4 * run.learners)]
    assert all(s.learners <= s.machines * run.learners for s in sizes)
    assert all(s.cores == s.machines * run.cores and s.replicas == s.machines * run.replicas for s in sizes)
    assert all(s.memory_gb < s.memory_gb_gemma for s in sizes)
    with pytest.raises(ValueError):
        T.sizing(0)


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_the_teachers_page_cites_where_its_figures_live(lang):
    """No README section that lives elsewhere, no English section title in the Italian page, the
    scripts that measured each figure, and a row for the comparison and the final quiz."""
    from tests.apptest import page_text, start

    at = start(lang, "pages/98_teachers.py")
    assert not at.exception, at.exception
    text = page_text(at)
    assert "README" not in text
    assert "measured" not in text or lang == "en"  # the old English section titles
    assert T.CLASS_RUN.doc in text and T.BOTH_MODELS_RUN.script in text and "docs/deploy.md" in text
    table = at.dataframe[0].value
    first = table.columns[0]
    assert any(i18n.ui(lang)["compare.title"] in x for x in table[first])
    assert any(i18n.ui(lang)["final.title"] in x for x in table[first])
    final = table[table[first].str.contains(i18n.ui(lang)["final.title"])]
    assert int(final.iloc[0, 3]) == T.shown_words(lang)["final_questions"]
