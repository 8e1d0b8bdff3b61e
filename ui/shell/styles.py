"""The app's few global styles: what the theme (.streamlit/config.toml) cannot say.

Sent once per run as style-only HTML, which Streamlit puts in its event container (no space taken).
- A wide table in a lesson's text scrolls sideways inside its own box on a phone, instead of
  making the whole page scroll sideways (the box is the markdown block that holds the table; the
  table keeps its table semantics for screen readers).
- A token chip with a title (`.itt-tip` in ui.lessons.sampling, `.tok-chip` in ui.lessons.tokenization)
  shows it under itself when tapped or clicked (the chip takes focus), as well as in the browser's
  tooltip on hover: a phone has no hover.
- The lessons' tables of words (`table`): HTML tables whose headers wrap or scroll, never cut;
  one wider than the screen scrolls sideways in its own box, says so in a line under it (shown
  only while it is wider) and is a Tab stop.
- A text box that takes a number (a quiz's numeric answer, inside a container keyed
  `DECIMAL_KEY.<anything>`) asks a phone for its number keyboard (`inputmode="decimal"`, which
  st.text_input cannot set): a few lines of JavaScript (components v2, no iframe) set it on every
  such box the page draws. A comma or a point, a minus sign and digits are all still accepted.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui.views import browser

from ui.shell.core import t

CSS = """<style>
[data-testid="stMarkdownContainer"]:has(> table) { overflow-x: auto; max-width: 100%; }
.itt-tip, .tok-chip[title] { position: relative; cursor: pointer; }
.itt-tip:focus, .tok-chip[title]:focus { outline: 2px solid #1f77b4; }
.itt-tip:focus::after, .tok-chip[title]:not([title=""]):focus::after {
  content: attr(title); position: absolute; left: 0; top: calc(100% + 4px); z-index: 10;
  width: max-content; max-width: min(18rem, 80vw); white-space: normal; padding: 4px 8px;
  border-radius: 4px; background: #262730; color: #fff; font-family: sans-serif; font-size: 0.85rem;
  line-height: 1.3;
}
[class*="st-key-itt_cue-"] { display: none; }
[data-itt-wide="yes"] [class*="st-key-itt_cue-"] { display: flex; }
</style>"""


DECIMAL_KEY = "itt_decimal"
TABLE_KEY, CUE_KEY = "itt_table", "itt_cue"
_FIXES_JS = browser.script("page_fixes")  # static/components/page_fixes.js
_fixes = st.components.v2.component("itt_page_fixes", js=_FIXES_JS)


def render() -> None:
    st.html(CSS)
    with st.sidebar:
        _fixes(key="app.page_fixes", data={"decimal": DECIMAL_KEY, "table": TABLE_KEY, "label": t("app.table_region")},
               height=0)


def table(frame: pd.DataFrame, key: str, where=None) -> None:
    """`frame` as an HTML table (st.table), without its index, in a container keyed `TABLE_KEY.key`.

    Its headers and cells are never cut short with "…", as st.dataframe's grid cuts them: a table
    wider than its column scrolls sideways in its own box, and then (only then) a line under it says
    so, and the box is a Tab stop a keyboard can scroll.
    """
    box = (where or st).container(key=f"{TABLE_KEY}.{key}")
    box.table(frame, hide_index=True)
    box.container(key=f"{CUE_KEY}.{key}").caption(t("app.table_sideways"))
