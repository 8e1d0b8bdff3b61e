"""The app's few global styles: what the theme (.streamlit/config.toml) cannot say.

Sent once per run as style-only HTML, which Streamlit puts in its event container (no space taken).
- A wide table in a lesson's text scrolls sideways inside its own box on a phone, instead of
  making the whole page scroll sideways (the box is the markdown block that holds the table; the
  table keeps its table semantics for screen readers).
- A token chip with a title (`.itt-tip` in ui.sampling_view, `.tok-chip` in ui.tokenization_view)
  shows it under itself when tapped or clicked (the chip takes focus), as well as in the browser's
  tooltip on hover: a phone has no hover.
- A text box that takes a number (a quiz's numeric answer, inside a container keyed
  `DECIMAL_KEY.<anything>`) asks a phone for its number keyboard (`inputmode="decimal"`, which
  st.text_input cannot set): a few lines of JavaScript (components v2, no iframe) set it on every
  such box the page draws. A comma or a point, a minus sign and digits are all still accepted.
"""

from __future__ import annotations

import streamlit as st

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
</style>"""


DECIMAL_KEY = "itt_decimal"
_DECIMAL_JS = """
export default function ({ data }) {
  const mark = () => {
    for (const box of document.querySelectorAll(`[class*="st-key-${data.prefix}-"] input[type="text"]`)) {
      if (box.getAttribute("inputmode") !== "decimal") box.setAttribute("inputmode", "decimal");
    }
  };
  mark();
  if (!window.__ittDecimalWatch) {  // the page draws questions later (sections, reruns): look again
    window.__ittDecimalWatch = new MutationObserver(mark);
    window.__ittDecimalWatch.observe(document.body, { childList: true, subtree: true });
  }
}
"""
_decimal = st.components.v2.component("itt_decimal_inputs", js=_DECIMAL_JS)


def render() -> None:
    st.html(CSS)
    with st.sidebar:
        _decimal(key="app.decimal_inputs", data={"prefix": DECIMAL_KEY}, height=0)
