"""A chart's numbers as a table, under the chart: "Show as a table" opens a real HTML table (rows
and column headers a screen reader can walk, numbers written the language's way) with the same
data the chart draws. Built only while the expander is open (it reruns its section when opened or
closed), so a slider move costs nothing for the learners who keep it closed.

A wide table scrolls sideways in its own box, which a keyboard learner must be able to reach to
scroll (axe-core's `scrollable-region-focusable`, serious): Streamlit's table box takes no focus, so
a few lines of JavaScript (components v2, no iframe) make each scrolling box of the table a Tab stop,
a region named after the chart's table.
"""

from __future__ import annotations

from typing import Callable

import pandas as pd
import streamlit as st

from ui.views import browser

from ui.shell.core import t

_JS = browser.script("table_focus")  # static/components/table_focus.js
_focusable = st.components.v2.component("itt_table_focus", js=_JS, isolate_styles=False)


def key_of(chart_key: str) -> str:
    """The expander's widget key under the chart `chart_key` (its state says whether it is open)."""
    return f"{chart_key}.table"


def as_table(chart_key: str, build: Callable[[], pd.DataFrame], digits: int = 3, where=None) -> None:
    """Under the chart `chart_key`: an expander that shows `build()`'s frame as a table when open.
    Missing values (a masked attention cell) read "—"."""
    box = (where or st).expander(t("chart.as_table"), key=key_of(chart_key), on_change="rerun")
    if not box.open:
        return
    decimal, thousands = t("plot.separators")[0], t("plot.separators")[1]
    frame = build()
    box.table(frame.style.format(precision=digits, decimal=decimal, thousands=thousands, na_rep="—"))
    with box:
        _focusable(key=f"{key_of(chart_key)}.focus", data={"label": t("chart.as_table")}, height=0)
