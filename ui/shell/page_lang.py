"""The document's language: `<html lang>` says the language the course is shown in.

Streamlit's page declares `<html lang="en">` whatever the app writes, so a screen reader would
read every Italian sentence with English pronunciation. A tiny inline component (Streamlit
components v2: a few lines of JavaScript in the page, no iframe, nothing fetched) sets the
attribute to the chosen language on every run; a language switch reruns the app, so it follows.
"""

from __future__ import annotations

import streamlit as st

from ui.views import browser

_JS = browser.script("page_lang")  # static/components/page_lang.js
_component = st.components.v2.component("itt_page_lang", js=_JS)


def render(language: str) -> None:
    """Mark the document as written in `language` ("it" or "en"); drawn in the sidebar, zero height."""
    with st.sidebar:
        _component(key="app.page_lang", data={"lang": language}, height=0)
