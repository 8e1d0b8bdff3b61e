"""Lesson prose: sections of assets/lessons/<lang>/<lesson>.md rendered by id."""

from __future__ import annotations

import streamlit as st

from lib import i18n
from ui.core import lang


def sections(lesson_id: str) -> dict[str, str]:
    return i18n.lesson(lang(), lesson_id)


def show(texts: dict[str, str], section: str, **values) -> None:
    st.markdown(i18n.fill(texts[section], **values) if values else texts[section])
