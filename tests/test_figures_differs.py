"""The "what differs" sections' figure builders (ui/lessons/differs/figures.py): each figure's data is
its inputs, pooled or placed where the section says, with the labels it was given. No Streamlit, no
model: the attention and the periods are written by hand."""

from __future__ import annotations

import numpy as np

from lib.lessons import rope
from ui.lessons.differs import figures as F
from ui.views.figures import PALETTE


def test_pooling_keeps_each_blocks_strongest_cell_so_a_thin_band_stays_visible():
    a = np.zeros((5, 5))
    a[4, 3] = 0.9  # one cell in the last, partial block
    a[0, 0] = 0.2
    assert np.array_equal(F.pooled(a, 3), [[0.2, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.9, 0.0]])
    assert np.array_equal(F.pooled(np.eye(4), 2), np.eye(2))
    small = np.arange(9.0).reshape(3, 3)
    assert np.array_equal(F.pooled(small), small)  # under the limit: the map as it is


def test_the_window_heatmap_draws_the_pooled_attention_with_queries_downwards():
    a = np.tril(np.ones((600, 600))) / np.arange(1, 601)[:, None]  # [T, T], rows sum to 1
    labels = {"title": "layer 0, local", "x": "keys", "y": "queries"}
    fig = F.window_figure(a, labels)
    (heat,) = fig.data
    z = np.array(heat.z)
    assert z.shape == (200, 200)  # 600 tokens in blocks of 3: at most HEATMAP_CELLS a side
    assert np.array_equal(z, F.pooled(a))
    assert z[0, 0] == 1.0 and z[0, 1] == 0.0  # the first query reads only itself
    assert heat.showscale is False
    assert fig.layout.title.text == "layer 0, local"
    assert fig.layout.xaxis.title.text == "keys" and fig.layout.yaxis.title.text == "queries"
    assert fig.layout.yaxis.autorange == "reversed"


def test_the_periods_chart_sets_the_local_bases_pairs_beside_the_global_ones_on_a_log_axis():
    local, glob = rope.periods(16, 10_000.0), rope.periods(16, 1_000_000.0)
    labels = {"local": "local, base 10,000", "global": "global, base 1,000,000", "x": "pair", "y": "period"}
    fig = F.periods_figure(local, glob, labels)
    lo, hi = fig.data
    assert np.array_equal(lo.y, local) and np.array_equal(hi.y, glob)
    assert (lo.name, hi.name) == ("local, base 10,000", "global, base 1,000,000")
    assert (lo.line.color, hi.line.color) == (PALETTE[0], PALETTE[1])
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.title.text == "pair" and fig.layout.yaxis.title.text == "period"
