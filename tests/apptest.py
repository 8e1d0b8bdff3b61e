"""AppTest helpers shared by every page test: start the app in a language, on a page, with a text.

Usage: `at = start("it", "pages/01_numbers.py", text="Ciao")`, then assert on `at`.
The fixture `navigation_v2` (in tests/conftest.py, autouse) keeps AppTest running app.py.
"""

from __future__ import annotations

import base64
import json
from collections.abc import MutableMapping

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

TIMEOUT = 240


def start(lang: str, page: str | None = None, text: str | None = None) -> AppTest:
    """Run app.py in `lang`, optionally set the learner's text, optionally switch to `page`."""
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    at.run()
    if text is not None:
        at.text_area(key="app.text").set_value(text)
        at.run()
    if page is not None:
        at.switch_page(page)
        at.run()
    assert not at.exception, at.exception
    return at


class _Pressed(MutableMapping):
    """AppTest's session state as a server callback sees it after a press in the browser: the
    values the browser sends (`sent`, e.g. a button's click) read first, every write kept in AppTest."""

    def __init__(self, at: AppTest, sent: dict):
        self.at, self.sent = at, sent

    def __getitem__(self, key):
        return self.sent[key] if key in self.sent else self.at.session_state[key]

    def __setitem__(self, key, value):
        self.at.session_state[key] = value

    def __delitem__(self, key):
        del self.at.session_state[key]

    def __contains__(self, key):
        return key in self.sent or key in self.at.session_state

    def __iter__(self):
        return iter(set(self.sent) | set(self.at.session_state))

    def __len__(self):
        return len(set(self))


def press(at: AppTest, module, callback, *args, sent: dict | None = None) -> None:
    """What a browser view's button does on the server, then the run its press starts: `callback`
    (a function of `module`, a page's sections) runs against AppTest's session state, with what
    the browser sends (`sent`) on top. AppTest cannot press a browser view's button; tests/e2e do."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module.st, "session_state", _Pressed(at, sent or {}))
        callback(*args)
    at.run()


def page_text(at: AppTest) -> str:
    """All the prose, headings and messages of the current page, as one string."""
    parts = [m.value for m in at.markdown] + [h.value for h in at.title] + [h.value for h in at.header]
    parts += [h.value for h in at.subheader]
    parts += [x.value for x in at.info] + [x.value for x in at.warning] + [x.value for x in at.error]
    parts += [x.value for x in at.success] + [x.value for x in at.caption]
    return "\n".join(str(p) for p in parts)


def find_chart(at: AppTest, key: str) -> dict | None:
    """The plotly figure (as JSON) drawn with widget key `key`, or None if the page did not draw it."""
    for c in at.get("plotly_chart"):
        if c.key == key or c.proto.id.endswith(f"-{key}"):
            return json.loads(c.proto.spec)
    for c in at.get("bidi_component"):  # ui.views.live_chart: the same plotly JSON, updated in place
        if c.proto.component_name == "itt_live_chart" and c.proto.id.endswith(f"-{key}"):
            return json.loads(json.loads(c.proto.json)["spec"])
    return None


def view_data(at: AppTest, key: str) -> dict | None:
    """The data a browser view (ui/views/browser.py) was sent under `key`, or None if the page drew none."""
    for c in at.get("bidi_component"):
        if c.proto.component_name == "itt_view" and c.proto.id.endswith(f"-{key}"):
            return json.loads(c.proto.json)
    return None


def chart_configs(at: AppTest) -> dict[str, dict]:
    """Every chart on the page, plotly_chart or ui.views.live_chart, by key: its plotly config."""
    out = {}
    for c in at.get("plotly_chart"):
        out[c.key or c.proto.id.rsplit("-", 1)[-1]] = json.loads(c.proto.config)
    for c in at.get("bidi_component"):
        if c.proto.component_name == "itt_live_chart":
            out[c.proto.id.rsplit("-", 1)[-1]] = json.loads(c.proto.json)["config"]
    return out


def chart_names(at: AppTest) -> dict[str, str]:
    """Every chart on the page by key: its accessible name (st.plotly_chart's `alt`, ui.views.live_chart's name)."""
    out = {}
    for c in at.get("plotly_chart"):
        out[c.key or c.proto.id.rsplit("-", 1)[-1]] = c.proto.alt
    for c in at.get("bidi_component"):
        if c.proto.component_name == "itt_live_chart":
            out[c.proto.id.rsplit("-", 1)[-1]] = json.loads(c.proto.json).get("name", "")
    return out


def chart_keys(at: AppTest) -> list[str]:
    """The keys of every chart on the page (st.plotly_chart and ui.views.live_chart alike)."""
    return list(chart_configs(at))


def chart(at: AppTest, key: str) -> dict:
    """Like find_chart, but the chart must be there."""
    fig = find_chart(at, key)
    assert fig is not None, f"no chart {key}"
    return fig


def plotly_array(value, dtype=None) -> np.ndarray:
    """A plotly array back to numpy: plain lists, or plotly 6's typed arrays {dtype, bdata, shape}."""
    if isinstance(value, dict) and "bdata" in value:
        out = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        return out.reshape([int(n) for n in str(shape).split(",")]) if shape else out
    return np.asarray(value, dtype=dtype)


def label_prefix(label: str) -> str:
    """The fixed text of a label before its first placeholder."""
    return label.split("{")[0]


def switch_model(at: AppTest, model, name: str, monkeypatch) -> None:
    """Load `model` (a tiny fixture) as if `name` came from the Hugging Face hub."""
    from lib.model import models

    monkeypatch.setattr(models, "_load_hub", lambda n, progress: model if n == name else None)
    at.text_input(key="app.model_request").set_value(name)
    at.button(key="app.load").click()
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["app.model"] == name


def check_answer(at: AppTest, lesson: str, qid: str, lang: str) -> AppTest:
    """Press the Check button of question `qid` of `lesson`'s quiz and return the run it caused.

    The answer reruns only the question's section, the lesson's score and the sidebar's progress
    (keyed fragments): that run's tree holds those and nothing else of the page, which is checked
    here (no title, no other question's form). `at.run()` after it brings the whole page back, as
    a learner's next input would."""
    from lib.course import i18n

    at.button(key=f"FormSubmitter:quiz.{lesson}.{qid}.form-{i18n.ui(lang)['quiz.check']}").click()
    at.run()
    assert not at.exception, at.exception
    forms = {b.key for b in at.button if b.key and b.key.startswith(f"FormSubmitter:quiz.{lesson}.")}
    assert forms == {f"FormSubmitter:quiz.{lesson}.{qid}.form-{i18n.ui(lang)['quiz.check']}"}, forms
    assert not at.title, [x.value for x in at.title]  # the page itself did not run
    assert any(m.label == i18n.ui(lang)["quiz.score"] for m in at.metric)  # the lesson's score did
    assert any(h.value == i18n.ui(lang)["sidebar.progress"] for h in at.sidebar.subheader)  # and the progress
    return at
