"""The tokenization lesson's figure builder (ui/lessons/tokenization/figures.py): the bars are the
token counts it was given, with its labels. No Streamlit, no model."""

from __future__ import annotations

import pandas as pd

from ui.lessons.tokenization import figures as F
from ui.views.figures import PALETTE


def test_the_language_chart_sets_each_paragraphs_italian_beside_its_english():
    costs = pd.DataFrame({"n": [1, 2, 3], "it_chars": [90, 80, 70], "en_chars": [85, 75, 60],
                          "it": [30, 25, 21], "en": [22, 20, 15]})
    labels = {"it": "Italiano", "en": "English", "chart_title": "tokens per paragraph", "paragraph": "paragraph",
              "tokens": "tokens"}
    fig = F.language_figure(costs, labels)
    it, en = fig.data
    assert (it.name, en.name) == ("Italiano", "English")
    assert list(it.x) == list(en.x) == [1, 2, 3]
    assert list(it.y) == [30, 25, 21] and list(en.y) == [22, 20, 15]  # tokens, not characters
    assert (it.marker.color, en.marker.color) == (PALETTE[2], PALETTE[0])
    assert fig.layout.barmode == "group"
    assert fig.layout.title.text == "tokens per paragraph"
    assert fig.layout.xaxis.title.text == "paragraph" and fig.layout.yaxis.title.text == "tokens"
