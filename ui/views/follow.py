"""Sections far below the first screen, computed when the learner reaches them.

A section runs inside `following(...)` with what it drew: a small inline component (Streamlit
components v2, no iframe) that, when its section is on screen or within 600 px of it, compares that
with the page's current choice (`publish`ed by another section) and, if they differ, reruns that
section (a trigger value: the section it sits in reruns, as for any widget), once no script runs.
A full run draws every section afresh, so they all agree after one.

It lets a section far below the first screen be *computed*, not only drawn, when the learner
reaches it (`when_reached`): until then it draws a short notice in its place and
tells the follower it drew nothing, so the follower asks for its section's rerun once it is in
sight, and the callback marks the section reached for the inputs it reads (model and text). A
lesson visit then costs the server its first screen; the logit lens, the residual stream's
contributions and the formula's steps are worked out for the learners who scroll to them, while
they read. A session with no browser behind it (AppTest: no HTTP headers) has no one to say what
was reached, and computes every section at once, as before.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from ui.shell import core, nav
from ui.shell.core import t
from ui.views import browser

# The newest values go on the window; every follower is told, and checks whether it is in sight.
_PUBLISH_JS = browser.script("follow_publish")  # static/components/follow_publish.js

_FOLLOW_JS = browser.script("follow")  # static/components/follow.js

_publish = st.components.v2.component("itt_follow_publish", js=_PUBLISH_JS, isolate_styles=False)
_follow = st.components.v2.component("itt_follow", js=_FOLLOW_JS, isolate_styles=False)  # no shadow root: the section around it is reachable


def _nothing() -> None:
    """The trigger's callback: the rerun of the follower's section is all it asks for."""


def publish(values: dict[str, str], key: str) -> None:
    """Tell the page the current choice (`{name: value}`), from the section that holds its widgets."""
    _publish(key=key, data={"values": dict(values)}, height=0)


@contextmanager
def following(name: str, drawn: str, key: str, on_stale=_nothing) -> Iterator[None]:
    """The body of a section (a fragment) that drew `drawn` for the choice `name`: held in a container
    `key`, rerun when any of it is in sight (or within 600 px) and the page's choice is another.
    `on_stale()` runs before that rerun."""
    nav.back_to_shown()  # a follower's ask sent just after a lesson's click names the page left
    with st.container(key=key):
        _follow(key=f"{key}.follow", data={"name": name, "drawn": drawn, "within": css_class(key)},
                on_stale_change=on_stale, height=0)
        yield


REACH = "page.inputs"  # the choice every section computed when reached follows: the model and the text
PENDING_HEIGHT = 320  # px a section not computed yet keeps, so the page does not jump when it is


def inputs_mark(*parts: str) -> str:
    """A short mark of what a section reads (model name, text): another mark, another computation.

    Example: inputs_mark("embedded:smollm2", "Il gatto") -> a 16-character hex string"""
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()[:16]


def _reach(key: str, mark: str, on_value=None) -> None:
    """The follower's callback for a section computed when reached: it is reached, for `mark`;
    `on_value` gets the value the page holds now (a choice made in a browser view)."""
    st.session_state[f"{key}.reached"] = mark
    if on_value is not None:
        on_value(stale_value(key))


def stale_value(key: str):
    """The value a follower in container `key` asked its section's run for."""
    return (st.session_state.get(f"{key}.follow") or {}).get("stale")


def reached(key: str, mark: str) -> bool:
    """Whether the section `key` may compute for the inputs `mark`: the learner has reached it since
    they became these, or no browser can say (a session without HTTP headers: AppTest).
    `st.session_state["app.defer_sections"]` (True/False) overrides the guess, for tests."""
    return not core.deferring() or st.session_state.get(f"{key}.reached") == mark


@contextmanager
def when_reached(key: str, mark: str, name: str = REACH, drawn: str | None = None, on_value=None) -> Iterator[bool]:
    """Inside a section (a fragment): yields whether to compute it now (see `reached`). Until it is
    reached a notice holds its place; the follower (on the choice `name`, the page's inputs by
    default, or e.g. the chosen head with what the section `drawn` for it) reruns the section once
    it is in sight, and it computes then.

    Example:
        with follow.when_reached("block.lens", follow.inputs_mark(model, text)) as now:
            if now:
                render_lens(...)
    """
    now = reached(key, mark)
    if name == REACH:
        publish({REACH: mark}, key=f"{key}.inputs")
        drawn = mark
    with following(name, drawn if now else "", key, on_stale=functools.partial(_reach, key, mark, on_value)):
        if not now:
            with st.container(height=PENDING_HEIGHT, border=False):
                st.caption(t("app.section_pending"))
        yield now


def css_class(key: str) -> str:
    """The class Streamlit gives an element with this key ("a.b_c" -> "st-key-a-b_c")."""
    return "st-key-" + key.replace(".", "-")
