"""The embeddings lesson's figure builders (ui/lessons/embeddings/figures.py): each figure's data is
its inputs, placed where the lesson says, with the labels and number format it was given. No
Streamlit, no model: the table is a few rows written by hand."""

from __future__ import annotations

import numpy as np

from lib.lessons import embeddings as emb
from ui.lessons.embeddings import figures as F
from ui.views.figures import PALETTE


def num(value, digits=None) -> str:
    """A number format unlike Python's own, so a test sees that the figure used the one it was given."""
    return f"~{value:.{digits or 0}f}"


def test_repeated_names_are_numbered_so_plotly_keeps_them_apart():
    assert F.unique_labels(["a", "b", "a", "a"]) == ["a", "b", "a (2)", "a (3)"]
    assert F.unique_labels([]) == []


def test_the_cosine_heatmap_holds_the_matrix_and_writes_it_in_the_cells():
    matrix = emb.cosine_matrix(np.array([[1.0, 0.0], [1.0, 1.0], [-1.0, 0.0]]))
    labels = {"hover": "%{x} · %{y}: %{z:.2f}", "title": "cosine"}
    fig = F.cosine_figure(matrix, ["cat", "dog", "cat"], labels, num)
    (heat,) = fig.data
    assert np.array_equal(np.array(heat.z), matrix)
    assert list(heat.x) == list(heat.y) == ["cat", "dog", "cat (2)"]
    assert [list(r) for r in heat.text] == [["~1.00", "~0.71", "~-1.00"], ["~0.71", "~1.00", "~-0.71"],
                                           ["~-1.00", "~-0.71", "~1.00"]]
    assert heat.texttemplate == "%{text}"  # few words: the values are written in the cells
    assert (heat.zmin, heat.zmax, heat.zmid) == (-1, 1, 0)
    assert heat.hovertemplate == "%{x} · %{y}: %{z:.2f}<extra></extra>"
    assert fig.layout.title.text == "cosine" and fig.layout.yaxis.autorange == "reversed"
    assert fig.layout.height == 320  # the least height, for a few words


def test_a_large_cosine_heatmap_leaves_its_cells_unwritten_and_needs_no_title():
    matrix = np.eye(13)
    fig = F.cosine_figure(matrix, [f"w{i}" for i in range(13)], {"hover": "h"}, num)
    assert fig.data[0].texttemplate is None and fig.data[0].text[0][0] == "~1.00"
    assert fig.layout.title.text is None
    assert fig.layout.height == 38 * 13 + 140  # a row's height per word past the least


def test_the_norms_scatter_draws_the_sampled_rows_lengths_and_the_bins_means():
    table = np.array([[i + 1.0, 0.0] for i in range(6)], dtype=np.float32)  # lengths 1..6
    idx = emb.build_index(table)
    stats = emb.norm_vs_id(idx.norms, n_bins=2)
    sample = np.array([4, 0, 2])
    labels = {"points": "3 tokens", "means": "mean per bin", "hover": "%{text}", "x": "id", "y": "length"}
    fig = F.norms_figure(idx, stats, ["e", "a", "c"], sample, labels)
    points, means = fig.data
    assert list(points.x) == [4, 0, 2] and np.allclose(points.y, [5.0, 1.0, 3.0])  # each id with its own length
    assert list(points.text) == ["e", "a", "c"] and points.name == "3 tokens"
    assert list(means.x) == [1.5, 4.5] and np.allclose(means.y, [2.0, 5.0])  # bins [0, 3) and [3, 6]
    assert means.name == "mean per bin" and means.line.color == PALETTE[1] and points.marker.color == PALETTE[0]
    assert fig.layout.xaxis.title.text == "id" and fig.layout.yaxis.title.text == "length"
