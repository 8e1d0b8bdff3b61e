"""Lesson prose: sections of assets/lessons/<lang>/<lesson>.md rendered by id."""

from __future__ import annotations

import streamlit as st

from lib import i18n
from ui import core
from ui.core import lang


def sections(lesson_id: str) -> dict[str, str]:
    return i18n.lesson(lang(), lesson_id)


def pick(texts: dict[str, str], section: str) -> str:
    """The section's text for the current model: its first `section[features]` variant whose
    features the model has, else the plain section (lib.i18n.variant)."""
    if any(k.startswith(section + "[") for k in texts):
        return i18n.variant(texts, section, core.features())
    return texts[section]


def show(texts: dict[str, str], section: str, **values) -> None:
    text = pick(texts, section)
    if not text:  # a section that only some models need (its plain form is empty)
        return
    st.markdown(i18n.fill(text, **values) if values else text)
