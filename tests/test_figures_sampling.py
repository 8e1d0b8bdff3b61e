"""The sampling lesson's figure builders (ui/lessons/sampling/figures.py): each figure's data is the
stored generation's, placed where the lesson says, with the labels it was given. No Streamlit, no
model: the generation is written by hand."""

from __future__ import annotations

import json

from lib.lessons.generate import Generation, Step
from ui.lessons.sampling import figures as F
from ui.views.figures import PALETTE


def _step(token_id: int, token: str, seconds: float) -> Step:
    return Step(token_id=token_id, token=token, prob=0.5, prob_model=0.4, rank=2, n_kept=3, u=0.3,
                top_ids=(7, token_id, 9), top_tokens=("<s>", token, "b"), top_probs=(0.3, 0.5, 0.2),
                top_model=(0.45, 0.4, 0.15), forward_s=seconds / 2, seconds=seconds)


def _generation() -> Generation:
    steps = (_step(5, "␣cat", 0.120), _step(6, "␣sat", 0.030), _step(8, ".", 0.025))
    return Generation(model_name="m", prompt_ids=(1, 2), prompt_tokens=("The", "␣big"), prompt_truncated=False,
                      steps=steps, stop="max_tokens", text=" cat sat.", temperature=1.0, top_k=50, top_p=0.9, seed=0)


def test_the_steps_view_gets_every_steps_candidates_in_the_models_order_with_the_drawn_token():
    labels = {"step": "step", "title": "Step {step}: {token} ({p})", "model": "the model", "final": "after",
              "y": "probability", "rank": "rank", "token": "token", "table": "table", "unavailable": "none"}
    data = F.steps_data(_generation(), labels, "it", "k1")
    assert (data["key"], data["lang"], data["labels"]) == ("k1", "it", labels)
    assert len(data["steps"]) == 3
    second = data["steps"][1]
    assert second == {"token": "␣sat", "token_id": 6, "prob": 0.5, "ids": [7, 6, 9], "tokens": ["<s>", "␣sat", "b"],
                      "model": [0.45, 0.4, 0.15], "final": [0.3, 0.5, 0.2]}  # the step's own order, tokens as text
    assert data["layout"]["yaxis"] == {"title": {"text": "probability"}, "range": [0, 1.05]}
    assert data["layout"]["barmode"] == "group"
    assert data["grey"] == F.GREY and data["palette"] == list(PALETTE)
    json.dumps(data)  # sent as JSON: plain numbers and strings only


def test_the_times_chart_has_a_bar_per_token_in_ms_the_first_apart():
    labels = {"times_title": "time per token", "times_x": "token", "times_y": "ms"}
    fig = F.times_figure(_generation(), labels)
    (bars,) = fig.data
    assert list(bars.x) == [1, 2, 3]
    assert [round(y, 9) for y in bars.y] == [120.0, 30.0, 25.0]
    assert list(bars.marker.color) == [PALETTE[1], PALETTE[0], PALETTE[0]]  # the prefill, then the decode steps
    assert fig.layout.title.text == "time per token"
    assert fig.layout.xaxis.title.text == "token" and fig.layout.yaxis.title.text == "ms"
