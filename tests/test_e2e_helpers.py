"""The browser tests' reading of Streamlit's websocket (drivers/browser.py), without a browser.

`AppRuns` keeps, for every rerun request the browser sends, its widget states; `selects` finds in
them a chart's selection. Fed here with real `BackMsg` frames, serialized by Streamlit's own
protobuf classes as the frontend sends them: a plotly chart's selection travels as a JSON string.
"""

from __future__ import annotations

import json

from streamlit.proto.BackMsg_pb2 import BackMsg

from drivers.browser import AppRuns, selects

OVERVIEW = "$$ID-4f1c0d2e-attention.overview"


class _Page:
    def on(self, event, handler) -> None:  # AppRuns listens for websockets; none come here
        pass


def _rerun(widgets: dict, fragment: str = "", auto: bool = False) -> bytes:
    msg = BackMsg()
    msg.rerun_script.fragment_id = fragment
    msg.rerun_script.is_auto_rerun = auto
    for wid, value in widgets.items():
        w = msg.rerun_script.widget_states.widgets.add()
        w.id = wid
        if isinstance(value, bool):
            w.trigger_value = value
        elif isinstance(value, str):
            w.string_value = value
        else:
            w.double_value = value
    return msg.SerializeToString()


def _selection(*heads: tuple[int, int]) -> str:
    points = [{"curve_number": 0, "point_number": 9 * layer + head, "customdata": [layer, head]}
              for layer, head in heads]
    return json.dumps({"selection": {"points": points, "point_indices": [p["point_number"] for p in points]}})


def test_every_sent_request_keeps_its_widget_states_in_order():
    runs = AppRuns(_Page())
    runs._on_sent(_rerun({"$$ID-aa-attention.head": 8.0}, fragment="f1"))
    runs._on_sent(_rerun({"$$ID-bb-app.learner_form_submit": True}))
    assert runs.sent == 2
    assert runs.requests == [{"$$ID-aa-attention.head": 8.0}, {"$$ID-bb-app.learner_form_submit": True}]


def test_a_fragments_timer_is_not_an_input_and_keeps_no_request():
    runs = AppRuns(_Page())
    runs._on_sent(_rerun({"$$ID-aa-attention.head": 8.0}, fragment="f1", auto=True))
    assert runs.sent == 0 and runs.requests == []


def test_selects_finds_the_charts_selection_of_the_head_clicked():
    picked = selects("attention.overview", lambda pts: [p["customdata"][:2] for p in pts] == [[2, 7]])
    assert picked({OVERVIEW: _selection((2, 7)), "$$ID-aa-attention.head": 0.0})
    assert not picked({OVERVIEW: _selection((2, 6))})  # another head
    assert not picked({OVERVIEW: json.dumps({"selection": {"points": []}})})  # the click missed
    assert not picked({"$$ID-aa-attention.head": 7.0})  # a section's rerun: no selection at all
    assert not picked({"$$ID-cc-attention.overview_box": _selection((2, 7))})  # another key ending alike
    assert not picked({OVERVIEW: "not json"})
