"""The app's few global styles: what the theme (.streamlit/config.toml) cannot say.

Sent once per run as style-only HTML, which Streamlit puts in its event container (no space taken).
- A wide table in a lesson's text scrolls sideways inside its own box on a phone, instead of
  making the whole page scroll sideways (the box is the markdown block that holds the table; the
  table keeps its table semantics for screen readers).
"""

from __future__ import annotations

import streamlit as st

CSS = """<style>
[data-testid="stMarkdownContainer"]:has(> table) { overflow-x: auto; max-width: 100%; }
</style>"""


def render() -> None:
    st.html(CSS)
