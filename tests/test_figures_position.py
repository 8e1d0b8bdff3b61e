"""The position lesson's figure builders (ui/lessons/position/figures.py): each figure's data is its
inputs, placed where the lesson says, with the labels it was given. No Streamlit, no model: the
demonstration and the table are written by hand."""

from __future__ import annotations

import numpy as np

from lib.lessons import rope
from ui.lessons.position import figures as F
from ui.views.figures import PALETTE


def test_each_token_label_carries_its_position_so_equal_tokens_stay_apart():
    assert F.token_labels(["the", "cat", "the"]) == ["0 · the", "1 · cat", "2 · the"]


def test_the_shuffle_chart_draws_each_tokens_change_in_percent_without_and_with_rope():
    eye = np.eye(3)
    demo = rope.ShuffleDemo(order=np.array([2, 0, 1]), where=np.array([1, 2, 0]),
                            change_plain=np.array([1e-7, 2e-7, 0.0]), change_rope=np.array([0.25, 0.5, 0.125]),
                            weights_plain=(eye, eye), weights_rope=(eye, eye))
    labels = {"plain": "no positions", "rope": "RoPE", "title": "shuffled", "y": "change (%)"}
    fig = F.shuffle_figure(["the", "cat", "the"], demo, labels)
    plain, turned = fig.data
    assert list(plain.x) == list(turned.x) == ["0 · the", "1 · cat", "2 · the"]
    assert np.allclose(plain.y, [1e-5, 2e-5, 0.0]) and np.allclose(turned.y, [25.0, 50.0, 12.5])
    assert (plain.name, turned.name) == ("no positions", "RoPE")
    assert (plain.marker.color, turned.marker.color) == (PALETTE[0], PALETTE[1])
    assert fig.layout.barmode == "group"
    assert fig.layout.title.text == "shuffled" and fig.layout.yaxis.title.text == "change (%)"


def test_the_learned_table_is_cut_to_its_first_rows_and_columns_and_its_rows_compared():
    rng = np.random.default_rng(0)
    table = rng.standard_normal((F.LEARNED_MAX + 4, F.LEARNED_MAX + 8))  # [P, D]
    labels = {"hover_table": "p %{y} d %{x}", "hover_sim": "%{x}, %{y}", "table_title": "the table",
              "sim_title": "similarity", "dims": "dimension", "positions": "position"}
    heat, sim = F.learned_figures(table, labels)
    assert np.array_equal(np.array(heat.data[0].z), table[:F.LEARNED_MAX, :F.LEARNED_MAX])
    assert np.allclose(np.array(sim.data[0].z), rope.cosine_similarity(table[:F.LEARNED_MAX]))
    assert np.array(sim.data[0].z).shape == (F.LEARNED_MAX, F.LEARNED_MAX)
    assert (sim.data[0].zmin, sim.data[0].zmax) == (-1, 1)
    assert heat.data[0].hovertemplate == "p %{y} d %{x}<extra></extra>"
    assert heat.layout.title.text == "the table" and sim.layout.title.text == "similarity"
    assert heat.layout.xaxis.title.text == "dimension" and heat.layout.yaxis.title.text == "position"
    assert sim.layout.xaxis.title.text == sim.layout.yaxis.title.text == "position"
    assert heat.layout.yaxis.autorange == sim.layout.yaxis.autorange == "reversed"  # position 0 at the top
