"""The compare page's figure builders (ui/lessons/compare/figures.py): each figure's data is its
inputs, placed where the page says, with the labels it was given. No Streamlit, no model: the
architectures are written by hand."""

from __future__ import annotations

import numpy as np

from lib.lessons.compare import Architecture
from ui.lessons.compare import figures as F
from ui.views.figures import PALETTE


def _arch(name: str, n_params: int, embedding_params: int) -> Architecture:
    """An architecture with the two counts the parameters' chart reads; the rest is filler."""
    return Architecture(name=name, model_type="llama", n_layers=2, n_heads=4, n_kv_heads=2, d_head=8, d_model=32,
                        heads_width=32, d_mlp=64, vocab_size=100, n_params=n_params,
                        embedding_params=embedding_params, weight_bytes=4 * n_params, local_layers=0,
                        global_layers=2, window=None, rope_base_global=10_000.0, rope_base_local=None,
                        norms_per_block=2, qk_norm=False, activation="SiLU", gated_mlp=True, embed_scale=1.0,
                        tied_embeddings=True, kv_bytes_per_token_fp32=256, kv_bytes_at=((1024, 262_144),))


def test_the_parameters_chart_stacks_each_models_table_under_the_rest():
    archs = [_arch("org/small (gguf)", 1_000, 300), _arch("org/big", 5_000, 3_200)]
    labels = {"embedding": "table", "rest": "everything else", "params": "parameters", "title": "where they are"}
    fig = F.params_figure(archs, ["small", "big"], labels)
    table, rest = fig.data
    assert (table.name, rest.name) == ("table", "everything else")
    assert list(table.x) == list(rest.x) == ["small", "big"]  # the names as given, in the models' order
    assert list(table.y) == [300, 3_200] and list(rest.y) == [700, 1_800]  # the two add up to n_params
    assert (table.marker.color, rest.marker.color) == (PALETTE[1], PALETTE[0])
    assert fig.layout.barmode == "stack"
    assert fig.layout.yaxis.title.text == "parameters" and fig.layout.title.text == "where they are"


def test_the_next_token_bars_put_the_best_token_on_top_in_the_models_colour():
    probs = np.array([0.5, 0.3, 0.2])  # best first, as the page's argsort gives them
    labels = {"x": "probability", "title": "SmolLM2"}
    fig = F.next_token_figure(probs, ["␣the", "␣a", "<b>"], len(PALETTE) + 1, labels)
    (bars,) = fig.data
    assert bars.orientation == "h"
    assert list(bars.x) == [0.2, 0.3, 0.5] and list(bars.y) == ["<b>", "␣a", "␣the"]  # plotly draws y upwards
    assert bars.marker.color == PALETTE[1]  # the palette wraps around for a model past its end
    assert fig.layout.xaxis.title.text == "probability" and fig.layout.title.text == "SmolLM2"
