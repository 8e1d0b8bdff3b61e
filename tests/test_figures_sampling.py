"""The sampling lesson's figure builders (ui/lessons/sampling/figures.py): each figure's data is the
stored generation's, placed where the lesson says, with the labels it was given. No Streamlit, no
model: the generation is written by hand."""

from __future__ import annotations

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


def test_a_token_keeps_its_text_in_plotly_with_only_the_angle_brackets_escaped():
    assert F.plotly_text("<b>&\"x\"") == "&lt;b&gt;&\"x\""
    assert F.plotly_text("␣plain") == "␣plain"


def test_a_step_sets_the_models_probabilities_beside_the_final_ones_and_marks_the_drawn_token():
    labels = {"model": "the model", "final": "after the filters", "y": "probability", "title": "step 2"}
    fig = F.step_figure(_generation(), 1, labels)
    model, final = fig.data
    assert list(model.x) == list(final.x) == [0, 1, 2]
    assert list(model.y) == [0.45, 0.4, 0.15] and list(final.y) == [0.3, 0.5, 0.2]  # the step's own order
    assert (model.name, final.name) == ("the model", "after the filters")
    assert model.marker.color == F.GREY
    assert list(final.marker.color) == [PALETTE[0], PALETTE[3], PALETTE[0]]  # the drawn token, id 6
    assert list(fig.layout.xaxis.tickvals) == [0, 1, 2]
    assert list(fig.layout.xaxis.ticktext) == ["&lt;s&gt;", "␣sat", "b"]
    assert fig.layout.title.text == "step 2" and fig.layout.yaxis.title.text == "probability"
    assert list(fig.layout.yaxis.range) == [0, 1.05] and fig.layout.barmode == "group"


def test_the_times_chart_has_a_bar_per_token_in_ms_the_first_apart():
    labels = {"times_title": "time per token", "times_x": "token", "times_y": "ms"}
    fig = F.times_figure(_generation(), labels)
    (bars,) = fig.data
    assert list(bars.x) == [1, 2, 3]
    assert [round(y, 9) for y in bars.y] == [120.0, 30.0, 25.0]
    assert list(bars.marker.color) == [PALETTE[1], PALETTE[0], PALETTE[0]]  # the prefill, then the decode steps
    assert fig.layout.title.text == "time per token"
    assert fig.layout.xaxis.title.text == "token" and fig.layout.yaxis.title.text == "ms"
