"""The block lesson's figure builders (ui/lessons/block/figures.py): each figure's data is its
inputs, placed where the lesson says, with the labels and number format it was given. No
Streamlit, no model: the steps and the lens are built by hand."""

from __future__ import annotations

import numpy as np

from lib.lessons.block import ACTIVATIONS, Neuron, Step
from lib.lessons.logit_lens import Lens
from ui.lessons.block import figures as F
from ui.views.figures import PALETTE


def num(value, digits=None) -> str:
    """A number format unlike Python's own, so a test sees that the figure used the one it was given."""
    return f"~{value:.{digits or 0}f}"


def test_a_shape_is_written_with_the_number_format_given():
    assert F.shape((2, 16, 576), num) == "[~2, ~16, ~576]"
    assert F.shape((), num) == "[]"


def test_the_diagram_has_a_box_per_step_of_the_block_and_a_round_adder_per_branch():
    steps = [Step("embed", "embed_tokens", (5,), (5, 8)),
             Step("norm", "layers.{l}.input_layernorm", (5, 8), (5, 8)),
             Step("attention", "layers.{l}.self_attn", (5, 8), (5, 8), (("q", (5, 4, 2)),)),
             Step("add", "", (5, 8), (5, 8)),
             Step("norm", "layers.{l}.post_attention_layernorm", (5, 8), (5, 8)),
             Step("mlp", "layers.{l}.mlp", (5, 8), (5, 8), (("up", (5, 32)),)),
             Step("add", "", (5, 8), (5, 8)),
             Step("final_norm", "norm", (5, 8), (5, 8)),
             Step("unembed", "lm_head", (5, 8), (5, 100))]
    labels = {"norm": "RMSNorm", "attention": "Attention", "mlp": "MLP", "add": "add", "in": "in",
              "out": "out after 30 blocks", "residual": "residual"}
    fig = F.diagram_figure(steps, labels, num)
    boxes = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(boxes) == 4  # norm, attention, norm, mlp: the block alone
    assert [b.fillcolor for b in boxes] == ["#DCE8F5", "#FCE3CC", "#DCE8F5", "#D9EED5"]
    adders = [tr for tr in fig.data if tr.mode == "markers+text"]
    assert len(adders) == 2 and all(list(tr.text) == ["<b>+</b>"] for tr in adders)
    texts = [a.text for a in fig.layout.annotations]
    modules = {a.hovertext for a in fig.layout.annotations if a.hovertext}
    assert modules == {"layers.{l}.input_layernorm", "layers.{l}.self_attn", "layers.{l}.post_attention_layernorm",
                       "layers.{l}.mlp"}
    assert any("<b>Attention</b>" in x and "q [~5, ~4, ~2]" in x for x in texts)
    assert any(x.startswith("<b>in</b> [~5, ~8]") for x in texts)
    assert "residual" in texts and texts.count("add") == 2


def test_the_residual_heatmap_draws_the_norms_logarithm_and_hovers_the_norm_itself():
    norms = np.array([[1.0, 10.0, 100.0], [1000.0, 0.5, 2.0]])  # [L, T]
    tokens = ["a", "<b>", "a very long token"]
    labels = {"hover": "L{layer} {token}: {norm}", "color": "norm", "x": "token", "y": "layer", "title": "stream"}
    fig = F.residual_heatmap(norms, tokens, labels, num)
    (heat,) = fig.data
    assert np.allclose(np.array(heat.z), np.log10(norms))
    assert heat.text[0][1] == "L0 &lt;b&gt;: ~10.0" and heat.text[1][0] == "L1 a: ~1000.0"
    assert list(heat.colorbar.ticktext) == [num(10 ** e) for e in range(6)]
    assert list(fig.layout.xaxis.ticktext) == ["a", "&lt;b&gt;", "a very lo…"]  # escaped, cut to SHORT
    assert fig.layout.title.text == "stream" and fig.layout.yaxis.title.text == "layer"


def test_the_residual_table_holds_the_norms_not_their_logarithm():
    norms = np.array([[1.0, 10.0], [1000.0, 0.5]], dtype=np.float32)
    frame = F.residual_table(norms, ["a", "a"], {"x": "token", "y": "layer"})
    assert list(frame.columns) == ["0·a", "1·a"]  # two equal tokens stay two columns
    assert np.array_equal(frame.to_numpy(), norms.astype(np.float64))
    assert frame.index.name == "layer / token"


def test_the_activation_curves_are_drawn_with_the_models_own_thicker_and_named():
    x = np.linspace(-1, 1, 5)
    curves = {"x": x} | {name: x * (i + 1) for i, name in enumerate(ACTIVATIONS)}
    labels = {name: name.upper() for name in ACTIVATIONS} | {"own": "this model", "y": "out"}
    fig = F.curves_figure(curves, "silu", labels)
    assert [tr.name for tr in fig.data] == ["RELU", "GELU", "GELU_TANH", "SILU ← this model"]
    for i, tr in enumerate(fig.data):
        assert np.array_equal(tr.y, curves[ACTIVATIONS[i]]) and tr.line.color == PALETTE[i]
        assert tr.line.width == (4 if ACTIVATIONS[i] == "silu" else 2)


def test_the_neuron_heatmap_shows_the_chosen_neurons_columns_on_a_symmetric_scale():
    product = np.arange(12, dtype=float).reshape(3, 4) - 6  # [T, F]
    neurons = [Neuron(2, 5.0, 2), Neuron(0, -6.0, 0)]
    labels = {"color": "product", "x": "neuron", "y": "token", "title": "layer 3"}
    fig = F.neuron_heatmap(product, neurons, ["a", "b", "c"], labels)
    (heat,) = fig.data
    assert np.array_equal(np.array(heat.z), product[:, [2, 0]])
    assert list(heat.x) == ["#2", "#0"]
    assert (heat.zmin, heat.zmax) == (-6.0, 6.0)
    assert list(fig.layout.yaxis.ticktext) == ["a", "b", "c"]


def test_the_lens_grid_writes_each_cells_top_token_coloured_by_its_probability():
    top_probs = np.array([[[0.1, 0.05], [0.2, 0.1]], [[0.9, 0.05], [0.6, 0.3]]])  # [L+1, P, k]
    lens = Lens(positions=np.array([3, 4]), top_ids=np.zeros((2, 2, 2), dtype=int), top_probs=top_probs,
                final_ids=np.zeros(2, dtype=int), final_prob=top_probs[:, :, 0], final_rank=np.zeros((2, 2), dtype=int))
    words = [["the", "<s>"], ["cat", "sat"]]
    labels = {"hover": "L{layer} {token}: {top} {p}", "color": "p", "x": "position", "y": "layer", "title": "lens"}
    fig = F.lens_heatmap(lens, words, ["on", "the"], labels, num)
    (heat,) = fig.data
    assert np.array_equal(np.array(heat.z), top_probs[:, :, 0])
    assert [list(r) for r in heat.text] == [["the", "&lt;s&gt;"], ["cat", "sat"]]
    assert heat.customdata[1][0] == "L1 on: cat ~0.900"
    assert list(fig.layout.xaxis.ticktext) == ["on", "the"] and fig.layout.title.text == "lens"
