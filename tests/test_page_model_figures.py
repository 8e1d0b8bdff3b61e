"""Every lesson states the loaded model's numbers from placeholders, never typed into the prose.

Each lesson is rendered with a tiny random GPT-2 and a tiny random Llama (tests/conftest.py) in
both languages; no figure that belongs to the built-in SmolLM2-135M may appear in the page's
prose. Quiz prompts are left out: the questions that use SmolLM2's numbers name the model.
"""

from __future__ import annotations

import re

import pytest

from lib.course import i18n
from lib.course.quiz import load_bank
from tests.apptest import page_text, start, switch_model
from ui.shell.nav import LESSONS

# Figures of SmolLM2-135M (30 layers, d_model 576, 9 query heads, 3 KV heads, vocabulary 49,152,
# MLP 1,536, RoPE base 100,000, 135M parameters) and its 4-bit file's format, as prose would write them.
SMOLLM2 = [r"\b576\b(?! \\times 61)",  # DeepSeek-V3's latent cache is 512 + 64 = 576 wide too
           r"\b30 (layers|strati)\b", r"\b9 (query heads|heads|teste)\b", r"\b3 (KV|key/value) heads\b",
           r"\b3 teste KV\b", r"\b49[.,\u202f]?152\b", r"\b1[.,\u202f]?536\b", r"\b135 ?M\b", r"\b135 (million|milioni)\b",
           r"(base|\bb\b)[^.\n]{0,40}\b100[.,\u202f]000\b", r"\bQ4_1\b"]


def prose_without_quiz(at, lang: str, lesson_id: str) -> str:
    prompts = {q.prompt for q in load_bank(lang, lesson_id)} if lesson_id in i18n.quiz_ids(lang) else set()
    return "\n".join(line for line in page_text(at).split("\n") if line not in prompts)


def smollm2_figures(text: str) -> list[str]:
    return [m.group(0) for p in SMOLLM2 for m in re.finditer(p, text)]


def test_the_check_sees_smollm2_figures() -> None:
    assert smollm2_figures("It has 30 layers, each with 9 heads; $d = 576$; base 100,000.") == \
        ["576", "30 layers", "9 heads", "base 100,000"]
    assert smollm2_figures("at 100,000 tokens about 13 GB; 32 heads; 1,024 tokens") == []


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("fixture", ["tiny_gpt2", "tiny_llama"])
def test_lessons_state_no_smollm2_figure_on_another_model(lang, fixture, request, monkeypatch):
    model = request.getfixturevalue(fixture)
    at = start(lang)
    switch_model(at, model, f"tests/{fixture}", monkeypatch)
    for lesson in LESSONS:
        at.switch_page(lesson.path)
        at.run()
        assert not at.exception, (lesson.id, at.exception)
        text = prose_without_quiz(at, lang, lesson.id)
        assert i18n.lesson(lang, lesson.id)["intro"].splitlines()[0][:30] in text, lesson.id
        assert not smollm2_figures(text), (lesson.id, smollm2_figures(text))
        assert i18n.placeholders(text) == set(), (lesson.id, i18n.placeholders(text))
