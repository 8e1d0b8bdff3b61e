"""The attention overview's picture: every layer x head as a thumbnail, one byte a cell.

Oracle: the attention weights given to the figure, read back from the bytes plotly receives (its
base64 typed array), and plotly's own colour scale arithmetic for where the bytes land.
"""

from __future__ import annotations

import base64

import numpy as np
import plotly.io

from lib.lessons.attention import GAP_BYTE, probabilities_as_bytes
from ui.lessons.attention.figures import COLORSCALE, OVERVIEW_BACKGROUND, overview_figure
from ui.views.figures import byte_colorscale

LABELS = {"x": "layer", "y": "head", "hover": "layer {layer}, head {head}: {pattern}"}


def _attention(n_layers: int, n_heads: int, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(n_layers, n_heads, n, n)) * 3
    scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


def _z(spec: dict) -> np.ndarray:
    z = spec["data"][0]["z"]
    assert z["dtype"] == "u1"
    shape = tuple(int(x) for x in str(z["shape"]).split(","))
    return np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.uint8).reshape(shape)


def test_probabilities_as_bytes_keep_each_value_within_half_a_step():
    p = np.array([0.0, 1e-9, 0.25, 0.5, 0.999, 1.0, np.nan, 1.5, -0.2])
    b = probabilities_as_bytes(p)
    assert b.dtype == np.uint8 and b.shape == p.shape
    assert b[6] == GAP_BYTE == 0
    assert list(b[[0, 5, 7, 8]]) == [1, 255, 255, 1]  # the ends, and values outside [0, 1] clipped
    ok = ~np.isnan(p) & (p >= 0) & (p <= 1)
    assert np.all(np.abs((b[ok].astype(float) - 1) / 254 - p[ok]) <= 0.5 / 254 + 1e-12)


def test_the_overview_sends_every_heads_first_tokens_as_bytes_with_gaps_elsewhere():
    n_layers, n_heads, n = 5, 3, 6
    attn = _attention(n_layers, n_heads, n + 2)
    strongest = [["previous token"] * n_heads for _ in range(n_layers)]
    spec = overview_figure(attn, n, LABELS, strongest).to_dict()
    z = _z(spec)
    cell = n + 1
    assert z.shape == (n_heads * cell, n_layers * cell)
    tri = np.tril(np.ones((n, n), dtype=bool))
    seen = np.zeros(z.shape, dtype=bool)
    for layer in range(n_layers):
        for head in range(n_heads):
            tile = z[head * cell:head * cell + n, layer * cell:layer * cell + n]
            seen[head * cell:head * cell + n, layer * cell:layer * cell + n] = tri
            want = attn[layer, head, :n, :n]
            got = (tile.astype(float) - 1) / 254
            assert np.all(np.abs(got[tri] - want[tri]) <= 0.5 / 254 + 1e-7)
            assert np.all(tile[~tri] == GAP_BYTE)
    assert np.all(z[~seen] == GAP_BYTE)  # between the thumbnails
    heat = spec["data"][0]
    assert (heat["zmin"], heat["zmax"]) == (0, 255)


def test_the_byte_colour_scale_draws_the_gap_in_the_background_and_values_on_the_scale():
    scale = byte_colorscale(COLORSCALE, OVERVIEW_BACKGROUND)
    stops = [s for s, _ in scale]
    assert stops == sorted(stops) and stops[0] == 0.0 and stops[-1] == 1.0
    # zmin=0, zmax=255: byte v sits at v / 255 of the scale.
    at = {s: c for s, c in scale}
    assert at[0.0] == OVERVIEW_BACKGROUND and at[0.5 / 255] == OVERVIEW_BACKGROUND
    assert at[1 / 255] == COLORSCALE[0][1]  # probability 0
    assert at[1.0] == COLORSCALE[-1][1]  # probability 1
    for (s, c), (t, d) in zip(COLORSCALE, scale[2:]):
        assert c == d and abs(t - (1 + s * 254) / 255) < 1e-12


def test_the_overview_of_the_real_model_size_is_a_quarter_of_its_float_bytes():
    """30 layers x 9 heads of 16 tokens (SmolLM2's overview): what plotly's JSON carries."""
    attn = _attention(30, 9, 16)
    spec = overview_figure(attn, 16, LABELS, [["previous token"] * 9 for _ in range(30)]).to_dict()
    sent = len(plotly.io.to_json(spec, validate=False))
    cells = (9 * 17) * (30 * 17)
    assert sent < cells * 4 / 3 * 1.25  # the bytes' base64, and a quarter more for the rest
