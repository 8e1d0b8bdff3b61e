"""Lesson prose: sections of assets/lessons/<lang>/<lesson>.md rendered by id."""

from __future__ import annotations

import streamlit as st

from lib.course import i18n
from ui.shell import core
from ui.shell.core import lang


def sections(lesson_id: str) -> dict[str, str]:
    return i18n.lesson(lang(), lesson_id)


def pick(texts: dict[str, str], section: str) -> str:
    """The section's text for the current model: its first `section[features]` variant whose
    features the model has, else the plain section (lib.course.i18n.variant)."""
    if any(k.startswith(section + "[") for k in texts):
        return i18n.variant(texts, section, core.features())
    return texts[section]


def show(texts: dict[str, str], section: str, **values) -> None:
    text = pick(texts, section)
    if not text:  # a section that only some models need (its plain form is empty)
        return
    st.markdown(i18n.fill(text, **values) if values else text)


def live_split(texts: dict[str, str], section: str, *names: str) -> tuple[str, str]:
    """A section's paragraphs in two: those the page writes, and those holding one of the
    placeholders `names`, which a browser view fills from the learner's choice.

    Example: live_split({"s": "Fixed.\n\nAt {tokens} tokens."}, "s", "tokens") -> ("Fixed.", "At {tokens} tokens.")
    """
    paragraphs = pick(texts, section).split("\n\n")
    live = [p for p in paragraphs if any("{" + n + "}" in p for n in names)]
    return "\n\n".join(p for p in paragraphs if p not in live), "\n\n".join(live)
