"""The block lesson's figure builders: plotly figures and tables from arrays and already-translated
labels, with the numbers written by the `num` they are given (the page passes ui.shell.core.num, the
course's language). No streamlit here: each builder is tested on its data alone
(tests/test_figures_block.py). Token strings go into plotly escaped (plotly renders a few HTML tags).
"""

from __future__ import annotations

import html
from collections.abc import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from lib.lessons import block as blk
from lib.lessons.logit_lens import Lens
from ui.views.figures import PALETTE, colorscale, quick, wrap

Number = Callable[..., str]  # (value, digits=None) -> the number as the page writes it


SHORT = 10  # characters of a token shown inside a heatmap cell


def short(s: str) -> str:
    return s if len(s) <= SHORT else s[: SHORT - 1] + "…"


def esc(s: str) -> str:
    """A token for plotly text, which reads a subset of HTML: "<img" must stay text."""
    return html.escape(s, quote=False)


def shape(s: tuple[int, ...], num: Number) -> str:
    """A shape as "[2, 16, 576]", its numbers written by `num`."""
    return "[" + ", ".join(num(x) for x in s) + "]"


def diagram_figure(steps: list[blk.Step], labels: dict[str, str], num: Number) -> go.Figure:  # long: one diagram's boxes and arrows placed by hand
    """The block as boxes and arrows: the residual spine on the left, the two branches on the
    right, each reading a normalised copy and adding its result back on the spine (through one
    more norm where the model has post-norms)."""
    by_kind = {s.kind: s for s in steps}
    inside = steps[1:-2]  # the block alone: between the embedding and the final norm
    norms = [s for s in inside if s.kind == "norm"]
    spine, cx, w, gap = 1.4, 6.4, 5.6, 1.45
    rows = [(s.kind, s if s.kind != "add" else None, -1.5 - gap * i) for i, s in enumerate(inside)]
    bottom = rows[-1][2]
    fig = go.Figure()
    fills = {"norm": "#DCE8F5", "attention": "#FCE3CC", "mlp": "#D9EED5"}
    ann = []

    def arrow(x0, y0, x1, y1):
        ann.append(dict(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", showarrow=True,
                        arrowhead=2, arrowsize=1.2, arrowwidth=1.5, arrowcolor="#555", text=""))

    fig.add_shape(type="line", x0=spine, y0=0.2, x1=spine, y1=bottom - 1.05, line=dict(color="#888", width=4),
                  layer="below")
    ann.append(dict(x=spine, y=bottom - 1.3, ax=spine, ay=bottom - 0.9, xref="x", yref="y", axref="x", ayref="y",
                    showarrow=True, arrowhead=2, arrowsize=0.8, arrowwidth=4, arrowcolor="#888", text=""))
    for kind, step, y in rows:
        if kind == "add":  # a marker, not a shape: its size is in pixels, so it stays round
            fig.add_trace(go.Scatter(x=[spine], y=[y], mode="markers+text", text=["<b>+</b>"], hoverinfo="skip",
                                     textfont=dict(size=18, color="#333"),
                                     marker=dict(size=30, color="white", line=dict(color="#333", width=2))))
            ann.append(dict(x=spine - 0.45, y=y, text=labels["add"], showarrow=False, xanchor="right",
                            font=dict(size=12)))
            continue
        fig.add_shape(type="rect", x0=cx - w / 2, y0=y - 0.5, x1=cx + w / 2, y1=y + 0.5, fillcolor=fills[kind],
                      line=dict(color="#555", width=1.5))
        # Short lines, so the diagram reads on a phone (plotly does not wrap an annotation): the
        # module's name joins the label, the shapes follow a few to a line, the module's path
        # shows on hover.
        lines: list[str] = []
        for n, s in step.inner:
            item = f"{n} {shape(s, num)}"
            if lines and len(lines[-1]) + 3 + len(item) <= 48:
                lines[-1] += " · " + item
            else:
                lines.append(item)
        text = "<br>".join([f"<b>{labels[kind]}</b>"] + [f"<span style='font-size:10px'>{x}</span>" for x in lines])
        ann.append(dict(x=cx, y=y, text=text, showarrow=False, font=dict(size=12), hovertext=step.module))
        continue
    # Branches: from the spine to the first box, box to box, the last box back to the spine's adder.
    branch: list[float] = []
    for kind, _, y in rows:
        if kind != "add":
            branch.append(y)
            continue
        top, last = branch[0], branch[-1]
        fig.add_shape(type="line", x0=spine, y0=top + 0.85, x1=cx, y1=top + 0.85, line=dict(color="#555", width=1.5))
        arrow(cx, top + 0.85, cx, top + 0.5)
        for y0, y1 in zip(branch, branch[1:]):
            arrow(cx, y0 - 0.5, cx, y1 + 0.5)
        fig.add_shape(type="line", x0=cx, y0=last - 0.5, x1=cx, y1=y, line=dict(color="#555", width=1.5))
        arrow(cx, y, spine + 0.3, y)
        ann.append(dict(x=cx + 0.1, y=(last - 0.5 + y) / 2, text=shape(by_kind["attention"].shape_out, num),
                        showarrow=False, xanchor="left", font=dict(size=11, color="#555")))
        branch = []
    ann.append(dict(x=spine, y=0.45, text=f"<b>{labels['in']}</b> {shape(norms[0].shape_in, num)}", showarrow=False,
                    xanchor="left", font=dict(size=12)))
    ann.append(dict(x=spine, y=bottom - 1.55, text="<br>".join(f"<b>{x}</b>" for x in wrap(labels["out"], 34).split("<br>")) + f" {shape(norms[0].shape_in, num)}",
                    showarrow=False, xanchor="left", font=dict(size=12)))
    ann.append(dict(x=spine - 0.2, y=bottom / 3.6, text=labels["residual"], showarrow=False, textangle=-90,
                    xanchor="right", font=dict(size=11, color="#666")))
    span = 0.8 - (bottom - 1.9)
    fig.update_layout(annotations=ann, height=round(560 * span / 11.4), margin=dict(l=10, r=10, t=10, b=10),
                      showlegend=False, plot_bgcolor="white", xaxis=dict(visible=False, range=[-0.5, 9.8]),
                      yaxis=dict(visible=False, range=[bottom - 1.9, 0.8]))
    return fig


def residual_heatmap(norms: np.ndarray, tokens: list[str], labels: dict[str, str], num: Number) -> go.Figure:
    z = np.log10(np.maximum(norms, 1e-6))
    hover = [[labels["hover"].format(layer=l, token=esc(tokens[i]), norm=num(float(norms[l, i]), 1))
              for i in range(norms.shape[1])] for l in range(norms.shape[0])]
    fig = go.Figure(go.Heatmap(z=z, x=list(range(norms.shape[1])), y=list(range(norms.shape[0])), text=hover,
                               hoverinfo="text", colorscale="Viridis",
                               colorbar=dict(title=labels["color"], tickvals=list(range(0, 6)),
                                             ticktext=[num(10 ** e) for e in range(0, 6)])))
    n = len(tokens)
    step = max(1, n // 40)
    fig.update_layout(height=max(320, 14 * norms.shape[0] + 140), margin=dict(l=10, r=10, t=30, b=10),
                      xaxis=dict(title=labels["x"], tickvals=list(range(0, n, step)),
                                 ticktext=[esc(short(tokens[i])) for i in range(0, n, step)]),
                      yaxis=dict(title=labels["y"]), title=labels["title"])
    return fig


def residual_table(norms: np.ndarray, tokens: list[str], labels: dict[str, str]) -> pd.DataFrame:
    """The residual heatmap's numbers, not their logarithm: the stream's norm, one row per layer
    (as on the chart), one column per token ("i·token")."""
    frame = pd.DataFrame(norms.astype(np.float64), columns=[f"{i}·{tok}" for i, tok in enumerate(tokens)])
    frame.index.name = f"{labels['y']} / {labels['x']}"
    return frame


def curves_figure(curves: dict[str, np.ndarray], own: str, labels: dict[str, str]) -> go.Figure:
    fig = go.Figure()
    for i, name in enumerate(blk.ACTIVATIONS):
        width = 4 if name == own else 2
        fig.add_trace(go.Scatter(x=curves["x"], y=curves[name], mode="lines", line=dict(color=PALETTE[i], width=width),
                                 name=labels[name] + (f" ← {labels['own']}" if name == own else "")))
    fig.update_layout(height=360, margin=dict(l=10, r=10, t=30, b=10), xaxis_title="x", yaxis_title=labels["y"],
                      legend=dict(orientation="h", y=-0.2))
    return fig


def neuron_heatmap(product: np.ndarray, neurons: list[blk.Neuron], tokens: list[str], labels: dict[str, str]) -> go.Figure:
    cols = [n.index for n in neurons]
    z = product[:, cols]  # [T, k]
    top = float(np.abs(z).max()) or 1.0
    return quick([dict(type="heatmap", z=z, x=[f"#{c}" for c in cols], y=list(range(len(tokens))), zmin=-top, zmax=top,
                       colorscale=colorscale("RdBu"), reversescale=True, colorbar=dict(title=dict(text=labels["color"])))],
                 dict(height=max(300, 18 * len(tokens) + 120), margin=dict(l=10, r=10, t=30, b=10),
                      yaxis=dict(autorange="reversed", tickvals=list(range(len(tokens))),
                                 ticktext=[esc(short(s)) for s in tokens], title=dict(text=labels["y"])),
                      xaxis=dict(title=dict(text=labels["x"]), type="category"), title=dict(text=labels["title"])))


def lens_heatmap(lens: Lens, words: list[list[str]], tokens: list[str], labels: dict[str, str],
                 num: Number) -> go.Figure:
    """Rows: layers (0 = embeddings). Columns: positions. Cell: the lens's top token, coloured by
    its probability. The same for every selected layer: the layer slider leaves it as it is (a
    redraw of its hundreds of labelled cells was most of a layer move in the browser)."""
    probs = lens.top_probs[:, :, 0]
    n_rows, p = probs.shape
    hover = [[labels["hover"].format(layer=l, token=esc(tokens[i]), top=esc(words[l][i]), p=num(float(probs[l, i]), 3))
              for i in range(p)] for l in range(n_rows)]
    fig = go.Figure(go.Heatmap(z=probs, x=list(range(p)), y=list(range(n_rows)), zmin=0, zmax=1,
                               colorscale=[[0, "#F7FBFF"], [1, "#6BAED6"]],  # light enough for black text
                               text=[[esc(short(w)) for w in row] for row in words],
                               texttemplate="%{text}", textfont=dict(size=10), customdata=hover,
                               hovertemplate="%{customdata}<extra></extra>", colorbar=dict(title=labels["color"])))
    fig.update_layout(height=max(360, 20 * n_rows + 140), margin=dict(l=10, r=10, t=30, b=10), title=labels["title"],
                      xaxis=dict(title=labels["x"], tickvals=list(range(p)), ticktext=[esc(short(s)) for s in tokens]),
                      yaxis=dict(title=labels["y"], dtick=1 if n_rows <= 40 else None))
    return fig
