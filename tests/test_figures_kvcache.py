"""The KV-cache lesson's figure builder (ui/lessons/kvcache/figures.py): the timings it was given,
in milliseconds, under the ceiling, with its labels. No Streamlit, no model: the rows are written
by hand."""

from __future__ import annotations

from lib.lessons.kvcache import TimingRow
from ui.lessons.kvcache import figures as F
from ui.views.figures import PALETTE


def test_the_timing_chart_draws_prefill_and_decode_in_ms_under_the_ceiling():
    rows = (TimingRow(8, 0.020, 0.010), TimingRow(32, 0.050, 0.011), TimingRow(128, 0.180, 0.013))
    labels = {"prefill": "first token", "per_token": "each next token", "ceiling": "weights read once",
              "x": "prompt tokens"}
    fig = F.timing_figure(rows, 7.5, labels)
    prefill, decode, ceiling = fig.data
    assert [tr.name for tr in fig.data] == ["first token", "each next token", "weights read once"]
    assert list(prefill.x) == list(decode.x) == [8, 32, 128]
    assert [round(y, 9) for y in prefill.y] == [20.0, 50.0, 180.0]  # seconds written as ms
    assert [round(y, 9) for y in decode.y] == [10.0, 11.0, 13.0]
    assert list(ceiling.x) == [8, 128] and list(ceiling.y) == [7.5, 7.5]  # across the whole range
    assert ceiling.line.dash == "dash" and ceiling.line.color == PALETTE[3]
    assert (prefill.line.color, decode.line.color) == (PALETTE[0], PALETTE[1])
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert list(fig.layout.xaxis.tickvals) == [8, 32, 128]  # a tick at each measured length
    assert fig.layout.xaxis.title.text == "prompt tokens" and fig.layout.yaxis.title.text == "ms"
