"""The protocol client's messages are the browser's: each widget kind's state in the field the
server's own deserializer reads (checked against Streamlit's widget registration), and the load
driver's percentile."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from streamlit.proto.Radio_pb2 import Radio
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.TextArea_pb2 import TextArea

from tests.stclient import Widget, _state_for

REPO = Path(__file__).resolve().parents[1]


def _driver():
    spec = importlib.util.spec_from_file_location("load_driver", REPO / "scripts" / "load_driver.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("load_driver", mod)  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _value_type(module: str) -> set[str]:
    """The value_type names a Streamlit widget module registers its state with."""
    import re

    import streamlit

    src = (Path(streamlit.__file__).parent / "elements" / "widgets" / f"{module}.py").read_text()
    return set(re.findall(r'value_type="(\w+)"', src))


def test_slider_state_is_a_double_array():
    s = _state_for(Widget("$$ID-x-k", "slider", Slider()), 3)
    assert s.WhichOneof("value") == "double_array_value" and list(s.double_array_value.data) == [3.0]
    assert "double_array_value" in _value_type("slider")


def test_text_state_is_a_string():
    s = _state_for(Widget("$$ID-x-app.text", "text_area", TextArea()), "ciao 🙂")
    assert s.WhichOneof("value") == "string_value" and s.string_value == "ciao 🙂"
    assert "string_value" in _value_type("text_widgets")


def test_radio_state_is_the_option_label():
    s = _state_for(Widget("$$ID-x-q", "radio", Radio(options=["uno", "due", "tre"])), 1)
    assert s.string_value == "due"
    assert _value_type("radio") == {"string_value"}


def test_unknown_widget_kind_is_refused():
    with pytest.raises(NotImplementedError):
        _state_for(Widget("$$ID-x-c", "camera_input", None), 1)


def test_percentile_nearest_rank():
    p = _driver().percentile
    assert p([1, 2, 3, 4], 0.5) == 2
    assert p(list(range(1, 101)), 0.95) == 95
    assert p([7.0], 0.95) == 7.0


def test_each_learner_word_is_one_token_of_the_default_model(real):
    """The driver finds a learner's word among the heatmap's tokens: each must be a single token
    (with its leading space) of the built-in model's tokenizer, and all distinct."""
    words = _driver().WORDS
    assert len(set(words)) == len(words) >= 30
    split = [w for w in words if len(real.tokenizer(" " + w, add_special_tokens=False)["input_ids"]) != 1]
    assert split == []


TIMED_APP = '''
import streamlit as st
st.session_state.setdefault("runs", 0)

@st.fragment(run_every=0.5)
def ticking():
    st.session_state["runs"] += 1
    st.text(f"runs {st.session_state['runs']}")

ticking()
st.text("the rest of the page")
'''


def test_stay_reruns_timed_fragments_as_an_idle_tab_does(tmp_path):
    """An open tab's run_every fragment is rerun by the browser's timer: `stay` does the same, and
    only that fragment runs (the rest of the page is not redrawn)."""
    import asyncio
    import socket
    import subprocess
    import time
    import urllib.request

    from tests.stclient import Learner

    app = tmp_path / "timed.py"
    app.write_text(TIMED_APP)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
                               "--server.headless", "true", "--browser.gatherUsageStats", "false",
                               "--server.fileWatcherType", "none"], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.5)

        async def visit():
            async with Learner(url) as me:
                await me.open()
                assert list(me.auto_reruns.values()) == [0.5]
                reruns = await me.stay(2.3)
                return me, reruns

        # Its own thread: a browser test earlier in the session may leave an event loop running in this one.
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(1) as pool:
            me, reruns = pool.submit(asyncio.run, visit()).result()
        assert 3 <= len(reruns) <= 5 and all(a.name == "auto" for a in reruns)
        texts = [p.body for kind, p in me.elements.values() if kind == "text"]
        assert f"runs {1 + len(reruns)}" in texts and "the rest of the page" in texts
    finally:
        server.terminate()
        server.wait(timeout=30)
