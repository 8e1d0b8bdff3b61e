"""The attention lesson's figure builders (ui/lessons/attention/figures.py): each figure's data is
its inputs, placed where the lesson says, with the labels it was given. No Streamlit, no model."""

from __future__ import annotations

import numpy as np

from lib.lessons import attention as att
from ui.lessons.attention import figures as F
from ui.views.figures import PALETTE


def _traces(fig, kind: str) -> list:
    return [tr for tr in fig.data if tr.type == kind]


def test_every_heads_weights_sit_in_its_own_thumbnail_masked_above_the_diagonal():
    rng = np.random.default_rng(0)
    attn = rng.random((2, 3, 5, 5)).astype(np.float32)  # [L, H, T, T]
    n = 4
    labels = {"x": "layer", "y": "head", "hover": "L{layer} H{head}: {pattern}"}
    strongest = [[f"p{layer}{head}" for head in range(3)] for layer in range(2)]
    fig = F.overview_figure(attn, n, labels, strongest)
    (heat,), (marks,) = _traces(fig, "heatmap"), _traces(fig, "scatter")
    z = np.array(heat.z, dtype=float)  # one byte a cell: 1..255 for 0..1, 0 for no cell
    cell = n + 1
    assert z.shape == (3 * cell, 2 * cell)  # heads down, layers across, a blank line between
    below = np.tril(np.ones((n, n), dtype=bool))
    for layer in range(2):
        for head in range(3):
            block = z[head * cell:head * cell + n, layer * cell:layer * cell + n]
            assert np.all(np.abs((block[below] - 1) / 254 - attn[layer, head, :n, :n][below]) <= 0.5 / 254 + 1e-7)
            assert (block[~below] == 0).all()
    assert (z[n, :] == 0).all() and (z[:, n] == 0).all()
    assert [list(c) for c in marks.customdata] == [[layer, head] for layer in range(2) for head in range(3)]
    assert marks.text[0] == "L0 H0: p00" and marks.text[-1] == "L1 H2: p12"
    assert fig.layout.xaxis.title.text == "layer" and fig.layout.yaxis.title.text == "head"
    assert list(fig.layout.xaxis.ticktext) == ["0", "1"] and list(fig.layout.yaxis.ticktext) == ["0", "1", "2"]
    assert fig.layout.height == F.overview_height(2, 3)


def test_the_overviews_rows_are_as_tall_as_a_thumbnail_is_wide_within_bounds():
    assert F.overview_height(30, 9) == 9 * 30 + F.OVERVIEW_AXES_PX  # 900 px / 30 layers
    assert F.overview_height(18, 4) == 4 * 50 + F.OVERVIEW_AXES_PX
    assert F.overview_height(2, 4) == 4 * F.OVERVIEW_ROW_PX[1] + F.OVERVIEW_AXES_PX  # never taller
    assert F.overview_height(200, 4) == 4 * F.OVERVIEW_ROW_PX[0] + F.OVERVIEW_AXES_PX  # never a strip


def test_each_query_head_is_drawn_to_its_groups_key_value_head():
    labels = {"q": "Q{h}", "kv": "KV{g}", "title": "8 heads, 2 KV"}
    fig = F.gqa_figure(8, 2, labels)
    groups = att.gqa_groups(8, 2)
    lines = [tr for tr in fig.data if tr.mode == "lines"]
    kv_marks = [tr for tr in fig.data if tr.mode == "markers+text" and tr.marker.symbol == "square"]
    q_marks = [tr for tr in fig.data if tr.mode == "markers+text" and tr.marker.symbol != "square"]
    assert len(lines) == 8 and len(kv_marks) == 2
    kv_y = [tr.y[0] for tr in kv_marks]
    for g, members in enumerate(groups):
        for h in members:
            (line,) = [tr for tr in lines if tr.y[0] == h]
            assert list(line.x) == [0, 1] and line.y[1] == kv_y[g]  # from query head h to its group's KV head
            assert line.line.color == PALETTE[g]
        assert list(q_marks[g].y) == list(members) and list(q_marks[g].text) == [f"Q{h}" for h in members]
        assert list(kv_marks[g].text) == [f"KV{g}"]
    assert fig.layout.title.text == "8 heads, 2 KV"


def test_the_three_masks_are_causal_full_and_cross():
    labels = {"causal": "causal", "none": "none", "cross": "cross", "x": "key", "x_cross": "encoder key", "y": "query"}
    fig = F.mask_figure(6, labels)
    causal, full, cross = (np.array(tr.z) for tr in _traces(fig, "heatmap"))
    assert np.array_equal(causal, np.tril(np.ones((6, 6))))
    assert np.array_equal(full, np.ones((6, 6)))
    assert cross.shape == (4, 6) and cross.all()  # fewer decoder queries than encoder keys
    assert [a.text for a in fig.layout.annotations] == ["causal", "none", "cross"]
    assert fig.layout.xaxis3.title.text == "encoder key" and fig.layout.xaxis.title.text == "key"


def test_the_cost_curves_are_the_curves_given_with_the_learners_text_marked():
    x = np.array([16, 256, 4096])
    curves = {"mine": (x, x ** 2.0), "Llama-3 8B": (x, 3 * x ** 2.0)}
    labels = {"x": "tokens", "y": "FLOPs", "title": "cost", "yours": "your text"}
    fig = F.cost_figure(curves, (100, 1e4), labels)
    assert [tr.name for tr in fig.data] == ["mine", "Llama-3 8B", "your text"]
    assert np.array_equal(fig.data[1].y, 3 * x ** 2.0) and np.array_equal(fig.data[0].x, x)
    assert (list(fig.data[2].x), list(fig.data[2].y)) == ([100], [1e4])
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert len(F.cost_figure(curves, None, labels).data) == 2  # no text: no mark


def test_the_memory_figure_puts_the_naive_matrix_beside_the_tiled_run():
    x = np.array([16, 1024])
    naive, tiled = np.array([1e3, 4e6]), np.array([5e2, 3e4])
    fig = F.memory_figure(x, naive, tiled, {"x": "tokens", "y": "bytes", "title": "memory",
                                            "naive": "naive", "tiled": "tiled"})
    assert [tr.name for tr in fig.data] == ["naive", "tiled"]
    assert np.array_equal(fig.data[0].y, naive) and np.array_equal(fig.data[1].y, tiled)
    assert fig.layout.title.text == "memory" and fig.layout.yaxis.type == "log"


def test_flash_attention_offers_tiles_of_at_most_64_a_side_and_starts_with_a_handful():
    assert F.block_options(10) == list(F.BLOCKS)
    assert F.block_options(8192) == [128]  # 64 tiles of 128 a side
    assert F.block_options(100_000) == [F.BLOCKS[-1]]  # none fits: the largest
    assert F.default_block(10) == 4  # 3 tiles a side
    assert F.default_block(64) == 16
    assert F.default_block(8192) == 128


def test_tokens_are_labelled_by_position_and_escaped_for_plotly():
    assert F.token_labels(["a", "b", "a"]) == ["0·a", "1·b", "2·a"]
    assert F.token_labels(["a", "b", "a"], 2) == ["0·a", "1·b"]
    assert F.esc("<img src=x>") == "&lt;img src=x&gt;"
