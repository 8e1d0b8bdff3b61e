"""The main live charts' "Show as a table": the expander is there under the chart, closed and empty
at first (nothing built for a learner who keeps it closed), and once opened its table holds the
numbers the chart draws, read back from the chart the page sent."""

from __future__ import annotations

import numpy as np
import pytest

from lib.course import i18n
from tests.apptest import chart, plotly_array, start


def _open_table(at, chart_key: str, lang: str):
    """The table under `chart_key`: its expander is there and closed, then opened by the learner."""
    label = i18n.ui(lang)["chart.as_table"]
    boxes = [e for e in at.expander if e.label == label and e.proto.id.endswith(f"{chart_key}.table")] or \
        [e for e in at.expander if e.label == label]
    assert boxes, f"no '{label}' expander on the page"
    assert not any(len(e.table) for e in boxes), "a table was built before the learner opened it"
    at.session_state[f"{chart_key}.table"] = True
    at.run()
    assert not at.exception, at.exception
    tables = [x for e in at.expander if e.label == label for x in e.table]
    assert len(tables) == 1, len(tables)
    return tables[0].value


def test_residual_stream_as_a_table():
    at = start("it", "pages/06_block.py", text=i18n.ui("it")["text.example"])
    table = _open_table(at, "block.resid_heatmap", "it")
    z = plotly_array(chart(at, "block.resid_heatmap")["data"][0]["z"]).astype(np.float64)
    # The chart draws the norm's logarithm (its colours span five orders of magnitude); the table the norm.
    assert table.shape == z.shape
    np.testing.assert_allclose(np.log10(table.to_numpy(dtype=np.float64)), z, atol=1e-5)
