"""Streamlit's per-element and per-run costs cut by ui/shell/streamlit_speed.py: the same answers, the same messages."""

from __future__ import annotations


import pytest

from tests.apptest import start
from ui.shell import streamlit_speed as speed

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def session():
    """The attention lesson run once, its quiz answered: sliders, radios, text and number inputs."""
    at = start("it", "pages/05_attention.py")
    assert not at.exception
    return at


def test_the_app_gives_every_widget_module_the_one_key_view(session):
    assert speed.installed()


def test_the_view_holds_every_key_of_the_dict_with_the_same_value(session):
    safe = session.session_state._state
    full = safe.filtered_state
    view = speed.FilteredView(safe)
    assert len(full) > 20  # a real page's state: widgets keyed by the app, its own values
    for key, value in full.items():
        assert key in view, key
        got = view[key]
        assert got is value or got == value, key


def test_the_view_holds_nothing_the_dict_leaves_out(session):
    safe = session.session_state._state
    full = safe.filtered_state
    view = speed.FilteredView(safe)
    element_ids = [k for k in safe._state._keys() if k.startswith("$$ID")]
    assert element_ids  # the page has widgets Streamlit keys by id
    for key in element_ids + ["no.such.key", "$$STREAMLIT_INTERNAL_KEY_x", 3]:
        assert key not in full
        assert key not in view
    with pytest.raises(KeyError):
        view["no.such.key"]
    assert sorted(view) == sorted(full) and len(view) == len(full)


def test_a_key_set_to_none_reads_none_so_the_widget_shows_no_choice(session):
    """The quiz's radios start with no choice: their key holds None in the view as in the dict."""
    safe = session.session_state._state
    full = safe.filtered_state
    view = speed.FilteredView(safe)
    unanswered = [k for k in full if k.startswith("quiz.") and k.endswith(".answer") and full[k] is None]
    assert unanswered
    assert all(k in view and view[k] is None for k in unanswered)
    radios = [r for r in session.radio if r.key in unanswered]
    assert radios and all(r.index is None for r in radios)


# --- a keyed component's identity is its key ---------------------------------------------------


def _two_components():
    import streamlit as st

    from ui.shell import streamlit_speed

    streamlit_speed.install()
    comp = st.components.v2.component("itt_identity_probe", js="export default function () {}")
    size = st.session_state.get("size", 1)
    comp(key="probe.keyed", data={"spec": "x" * size})
    comp(data={"spec": "y" * size})


def test_a_keyed_component_skips_the_identity_hash_and_keeps_its_id(monkeypatch):
    from streamlit.testing.v1 import AppTest

    calls = []
    original = speed._streamlit_identity
    monkeypatch.setattr(speed, "_streamlit_identity", lambda self, **kw: calls.append(kw) or original(self, **kw))
    at = AppTest.from_function(_two_components)
    at.run()
    assert not at.exception, at.exception
    assert len(calls) == 1 and calls[0]["data"] == {"spec": "y"}  # only the unkeyed one hashed its data
    keyed_id = _element_ids(at)
    at.session_state["size"] = 50_000  # new data: the keyed component keeps its id (its state with it)
    at.run()
    assert not at.exception, at.exception
    now = _element_ids(at)
    assert now[0] == keyed_id[0] and now[1] != keyed_id[1]


def _element_ids(at) -> list[str]:
    """The ids of the probe components, in page order."""
    return [node.proto.id for node in at._tree.main.children.values()
            if getattr(node, "type", None) == "bidi_component" and node.proto.component_name.endswith("itt_identity_probe")]


def test_a_functions_parameters_are_worked_out_once_and_the_same():
    import inspect

    from streamlit import type_util

    speed.install()

    def f(a, b=2, *rest, c, **more):
        return a

    first = type_util.get_func_parameters(f)
    assert first == list(inspect.signature(f).parameters.values())
    first.clear()  # a caller changing its list changes nobody else's
    assert [p.name for p in type_util.get_func_parameters(f)] == ["a", "b", "rest", "c", "more"]
    assert speed._parameters.cache_info().hits >= 1


def test_a_fragment_defined_anew_on_every_run_keeps_its_signature():
    import inspect

    from streamlit.runtime import fragment

    speed.install()
    made = []
    for default in (1, 1, 2):
        exec("def section(a, b=%d, *, c=3):\n    return a" % default, {}, ns := {})  # a page's run
        made.append(ns["section"])
    sigs = [fragment.inspect.signature(f) for f in made]
    assert sigs == [inspect.signature(f) for f in made]
    assert str(sigs[2]) == "(a, b=2, *, c=3)"  # other defaults, another signature
    assert fragment.inspect.signature(len) == inspect.signature(len)  # not a plain function: as inspect says
    assert fragment.inspect.getmodule is inspect.getmodule
    # The same page body run twice: one signature worked out, the second run's function gets it.
    body = compile("def section(x, y=0):\n    return x", "<page>", "exec")
    runs = []
    for _ in range(2):
        exec(body, {}, ns := {})
        runs.append(ns["section"])
    assert runs[0] is not runs[1]
    assert fragment.inspect.signature(runs[0]) is fragment.inspect.signature(runs[1])


def test_the_replaced_functions_are_those_of_the_streamlit_pinned():
    """The replacements copy Streamlit 1.67's own behaviour: a new Streamlit must be checked first."""
    import re
    from pathlib import Path

    import streamlit

    pinned = re.search(r"^streamlit==(\S+)$", (Path(__file__).parents[1] / "requirements.txt").read_text(), re.M)
    assert pinned and streamlit.__version__ == pinned.group(1) == "1.67.0"


def test_on_another_streamlit_version_nothing_is_replaced():
    """The replacements were read against one Streamlit: on any other, Streamlit's own code runs.
    In a fresh process: in this one the app's own runs have put them in already."""
    import subprocess
    import sys

    code = (
        "import streamlit\n"
        "from streamlit import type_util\n"
        "own = type_util.get_func_parameters\n"
        "streamlit.__version__ = '9.9.9'\n"
        "from ui.shell import streamlit_speed\n"
        "assert streamlit_speed.install() is False\n"
        "assert type_util.get_func_parameters is own and not streamlit_speed.installed()\n"
        "streamlit.__version__ = streamlit_speed.CHECKED_VERSION\n"
        "assert streamlit_speed.install() is True and streamlit_speed.installed()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=str(__import__("pathlib").Path(__file__).resolve().parent.parent))
    assert done.returncode == 0, done.stderr
    assert "9.9.9" in done.stderr  # said in the server's log
