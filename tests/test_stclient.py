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

from drivers.stclient import Widget, _state_for

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


def test_a_new_text_may_take_3_s_every_other_action_2_s():
    driver = _driver()
    assert driver.goal_p95("text") == 3.0
    assert {driver.goal_p95(a) for a in driver.ACTIONS if a != "text"} == {2.0}


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

    from drivers.stclient import Learner

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


def test_merge_cookies_replaces_by_name():
    from drivers.stclient import merge_cookies

    assert merge_cookies("a=1; itt_replica=r0", ["itt_replica=r1; Path=/; HttpOnly"]) == "a=1; itt_replica=r1"
    assert merge_cookies("", ["itt_replica=r0; Path=/"]) == "itt_replica=r0"
    assert merge_cookies("a=1", []) == "a=1"


def _start_app(port: int, log: Path):
    """`streamlit run app.py` on 127.0.0.1:`port`; the process, once healthy."""
    import os
    import subprocess
    import time

    from drivers.browser import render

    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=REPO, env=env, stdout=log.open("a"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not render.healthy(f"http://127.0.0.1:{port}"):
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.2)  # polling a starting server
    return proc


@pytest.mark.slow
def test_a_learner_reconnects_after_the_server_stops_and_keeps_the_class(tmp_path, monkeypatch):
    """The real app, a class on SQLite: a learner joins and answers, the server is killed (a crash,
    nothing graceful) and started again on the same address. The learner's next answer finds the
    websocket closed: it reconnects to a new session, the tab's storage brings the membership back
    (ui/learner/persist.py, ui/classroom/reports.py), the sidebar shows the class and the pseudonym again, and the
    answer is counted for the same learner: one learner, two first answers, both verdicts shown.
    A tab whose storage names the learner with a wrong secret does not get in."""
    import asyncio
    import json
    from concurrent.futures import ThreadPoolExecutor

    from lib.classroom.classroom import ClassStore
    from drivers.browser import _free_port
    from drivers.stclient import Learner

    url_db = f"sqlite:///{tmp_path / 'class.db'}"
    monkeypatch.setenv("ITT_DATABASE_URL", url_db)
    store = ClassStore(url_db)
    created = store.create_class("4B")
    port = _free_port()
    verdicts = _driver().verdicts

    async def answer(me: Learner, key: str) -> int:
        """Pick the first option and press Check; how many verdicts the page shows after it."""
        await me.set_value(key, 0)
        await me.submit(key[: -len(".answer")] + ".form")
        return verdicts(me)

    me = Learner(f"http://127.0.0.1:{port}", "", f"class={created.code}&lang=en", storage={}, reconnect=True)
    loop = asyncio.new_event_loop()  # one loop for the learner across both servers, on its own thread
    pool = ThreadPoolExecutor(1)

    def run(coro):
        return pool.submit(loop.run_until_complete, coro).result()

    server = _start_app(port, tmp_path / "server.log")
    try:
        run(me.__aenter__())
        run(me.open())
        run(me.submit("class.join_form"))
        pseudonym = json.loads(me.storage["inside-transformer.class"])["pseudonym"]
        assert pseudonym in me.texts() and me.reconnects == 0
        first, second = [k for k in me.keys("quiz.numbers.") if k.endswith(".answer") and me.widget(k).kind == "radio"][:2]
        assert run(answer(me, first)) == 1
        server.kill()  # a crash: no goodbye on the websocket
        server.wait(timeout=30)
        server = _start_app(port, tmp_path / "server.log")
        assert run(answer(me, second)) == 2  # the first verdict came back from the tab's storage
        assert me.reconnects == 1 and not me.exceptions
        assert pseudonym in me.texts() and "class.leave" in me.widgets  # the sidebar's class box
        board = store.dashboard(created.code, created.secret)
        assert [r.pseudonym for r in board.learners] == [pseudonym]
        assert sorted((q.question_id, q.answered) for q in board.questions) == sorted(
            (k.split(".")[2], 1) for k in (first, second))
        run(me.close())

        # Another tab whose storage holds that membership with the learner's row id but a made-up
        # secret (what a copy of the database gives): it is not in the class. With the real key it is.
        entry = json.loads(me.storage["inside-transformer.class"])
        for key, joined in ((entry["id"].split(".")[0] + ".made-up", False), (entry["id"], True)):
            other = Learner(f"http://127.0.0.1:{port}", "", "lang=en",
                            storage={"inside-transformer.class": json.dumps(dict(entry, id=key))})
            run(other.__aenter__())
            run(other.open())
            assert ("class.leave" in other.widgets) is joined and (pseudonym in other.texts()) is joined
            run(other.close())
    finally:
        pool.submit(loop.close).result()
        pool.shutdown()
        store.close()
        if server.poll() is None:
            server.terminate()
            server.wait(timeout=30)
