"""The course's one rule for chart layout (ui.views.figures.laid_out), on plotly JSON: titles wrapped to
a phone's width above the plot, subplot titles to their column, legends at the chart's foot,
tick labels at plotly's own angle. The browser test tests/e2e/test_chart_layout.py measures the
drawn charts."""

from __future__ import annotations

import re

from plotly.subplots import make_subplots

from ui.views.figures import SUBTITLE_CHARS, TITLE_CHARS, laid_out, localized, wrap


def _longest(text: str) -> int:
    return max(len(line) for line in re.split(r"<br>", text))


def test_wrap_breaks_at_spaces_and_keeps_the_words():
    text = "Quanto cambia l'uscita di ogni token quando la frase viene rimescolata"
    out = wrap(text, 20)
    assert out.replace("<br>", " ") == text
    assert _longest(out) <= 20
    assert wrap("corta", 20) == "corta"
    assert wrap("a<br>b", 20) == "a<br>b"
    assert wrap("", 10) == ""


def test_a_long_title_wraps_and_sits_above_the_plot():
    title = "Dopo il tuo testo: i candidati migliori per il prossimo token (primi 20)"
    out = laid_out({"title": {"text": title, "x": 0.1}, "margin": {"t": 90}})
    assert out["title"]["text"].replace("<br>", " ") == title
    assert _longest(out["title"]["text"]) <= TITLE_CHARS
    assert (out["title"]["yref"], out["title"]["y"], out["title"]["yanchor"], out["title"]["automargin"]) == \
        ("paper", 1, "bottom", True)


def test_every_legend_lies_flat_at_the_foot_and_no_tick_angle_is_fixed():
    spec = {"showlegend": True, "legend": {"orientation": "v", "y": 1.08, "font": {"size": 12}},
            "xaxis": {"tickangle": -45, "title": {"text": "Token (n)"}}, "yaxis2": {"tickangle": 90}}
    out = laid_out(dict(spec))
    legend = out["legend"]
    assert (legend["orientation"], legend["yref"], legend["y"], legend["yanchor"]) == ("h", "container", 0, "bottom")
    assert legend["font"] == {"size": 12}  # the figure's look is kept, only the place changes
    assert "tickangle" not in out["xaxis"] and "tickangle" not in out["yaxis2"]
    assert spec["xaxis"]["tickangle"] == -45  # the figure given is not changed (cached figures are shared)
    assert "legend" not in laid_out({"showlegend": False})


def test_subplot_titles_wrap_to_their_column_and_leave_room_under_the_title():
    titles = ("Causale (decoder: GPT, Llama)", "Nessuna (encoder: BERT)", "Attenzione incrociata (encoder-decoder)")
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles)
    fig.update_layout(title="Tre maschere")
    out = localized(fig.to_dict(), ",.")["layout"]
    notes = [n for n in out["annotations"] if n["text"].replace("<br>", " ") in titles]
    assert len(notes) == 3
    assert all(_longest(n["text"]) <= max(14, SUBTITLE_CHARS // 3 - 2) or " " not in n["text"] for n in notes)
    lines = max(n["text"].count("<br>") + 1 for n in notes)
    assert lines > 1 and out["title"]["pad"]["b"] >= 10 + 18 * lines


def test_a_title_repeated_under_panels_side_by_side_is_said_once_and_a_polar_axis_title_moves_up():
    layout = {"xaxis": {"domain": [0, 0.32], "title": {"text": "dimensione"}},
              "xaxis2": {"domain": [0.34, 0.66], "title": {"text": "dimensione"}},
              "xaxis3": {"domain": [0.68, 1], "title": {"text": "dimensione"}},
              "polar": {"radialaxis": {"title": {"text": "coppia"}}}, "title": "Tre panelli"}
    out = laid_out(layout)
    assert [out[k]["title"]["text"] for k in ("xaxis", "xaxis2", "xaxis3")] == ["", "dimensione", ""]
    assert "title" not in out["polar"]["radialaxis"] and out["title"]["subtitle"]["text"] == "coppia"


def test_every_title_leaves_the_mode_bars_band_above_it():
    """On a touch screen plotly's mode bar is always shown, at the top right: a title, above the plot
    or above a matrix's top tick labels, starts below its band (checked drawn in tests/e2e/test_phone.py)."""
    from ui.views.figures import MODEBAR_PX

    above = laid_out({"title": {"text": "Dove stanno i parametri"}, "margin": {"t": 40}})
    assert above["title"]["pad"]["t"] >= MODEBAR_PX
    matrix = laid_out({"title": {"text": "Strato 15, testa 0"}, "xaxis": {"side": "top"}, "margin": {"t": 130}})
    assert matrix["title"]["pad"]["t"] >= MODEBAR_PX and matrix["margin"]["t"] >= 130 + MODEBAR_PX - 6
    untitled = laid_out({"margin": {"t": 5}})
    assert untitled["margin"]["t"] >= MODEBAR_PX


def test_a_title_of_two_lines_keeps_its_second_line_above_the_plot():
    """plotly anchors a title of several lines by its first: the pad under it holds the others, and
    the top margin holds the band, every line and that pad (seen on a phone: a heatmap's title's
    second line over its top row and its first tick label)."""
    from ui.views.figures import LINE_PX, MODEBAR_PX, TITLE_SIZE

    one = laid_out({"title": {"text": "I neuroni più attivi"}})
    two = laid_out({"title": {"text": "I neuroni più attivi dello strato 15 su ogni token"}})
    assert two["title"]["text"].count("<br>") == 1
    assert two["title"]["pad"]["b"] == one["title"]["pad"]["b"] + LINE_PX[TITLE_SIZE]
    assert two["margin"]["t"] >= MODEBAR_PX + 2 * LINE_PX[TITLE_SIZE] + two["title"]["pad"]["b"] - LINE_PX[TITLE_SIZE]
