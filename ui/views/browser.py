"""The browser views: one Streamlit component (components v2, no iframe) that draws a lesson's
interactive part from data sent once, and answers every view-only move in the browser.

Their JavaScript and CSS are files in static/views/ (ES modules, tested under node: tests/js).
Streamlit serves that folder at /app/static/views/ (server.enableStaticServing), so a view works
offline like plotly.js. This module passes the component `mount.js` (its entry, 1 KB in every view's
element); each mount names the view module it loads (`static/views/<view>.js`), and the first adds
`views.css` to the page's head once, both with a version made of the files' contents so a browser
never keeps an old copy after an update. (The stylesheet passed to the component came inside every
view's element of every run: 7 KB each, seven times a run on the attention lesson.)

- `view(name, key, data)`: mount view `name`; `data` is sent once per change (a new text, model
  or language). What the learner does with it stays in the browser until an `action`.
- `action(key, label, reads)`: a button that carries the browser's current choices (the page
  store's values named in `reads`) to the server when pressed, the one script run of a view.
- `available()`: whether the views' files are present.
- `script(name)`: the script of one of the small components that are not views (the section
  followers, live charts, the progress store...), from static/components/.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

import streamlit as st

FOLDER = Path(__file__).resolve().parents[2] / "static" / "views"
COMPONENTS = FOLDER.parent / "components"  # the small single-purpose components' scripts
BASE = "/app/static/views/"
PLOTLY = "/app/static/vendor/plotly.min.js"  # vendored by scripts/vendor_js.sh


def _without_comments(js: str) -> str:
    """A script without its whole-line // comments: a component's script is sent inside each of its
    elements, every run."""
    return "\n".join(line for line in js.splitlines() if not line.lstrip().startswith("//"))


def script(name: str) -> str:
    """The text of static/components/<name>.js, without its comments: a small component's script,
    kept in a file of its own (passed inline to st.components.v2.component, which takes a file path
    only for installed packages)."""
    return _without_comments((COMPONENTS / f"{name}.js").read_text(encoding="utf-8"))


def _noop() -> None:
    """A trigger's callback: the value is read from the component's result in the same run."""


# No shadow root (isolate_styles=False): the page's stylesheet reaches the views' elements.
_component = st.components.v2.component(
    "itt_view", js=_without_comments((FOLDER / "mount.js").read_text(encoding="utf-8")), isolate_styles=False)


@functools.lru_cache(maxsize=None)
def version() -> str:
    """A short hash of every view file, scripts and stylesheet: a new release gets new URLs."""
    h = hashlib.sha256()
    for path in sorted([*FOLDER.glob("*.js"), *FOLDER.glob("*.css")]):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def available() -> bool:
    return (FOLDER / "mount.js").is_file()


def data_key(*parts: Any) -> str:
    """A short key for what a view was sent: the same parts, the same key, so a rerun that sends
    the same data again leaves the learner's settings in the browser as they are."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def view(name: str, key: str, data: dict, where=None, **callbacks):
    """Mount the browser view `name` (static/views/<name>.js) with `data`. `on_<event>_change`
    callbacks name the events the view may send (a trigger: the one run a view asks for)."""
    payload = dict(data, view=name, base=BASE, version=version(), plotly=PLOTLY)
    if where is None:
        return _component(key=key, data=payload, **callbacks)
    with where:
        return _component(key=key, data=payload, **callbacks)


def action(key: str, label: str, reads: list[str], primary: bool = False, pressed: bool | None = None,
           help: str = "", on_click=_noop) -> dict | None:
    """A button that sends the page store's values named in `reads`; those values on the run its
    click starts, else None. With `pressed` (True/False) it is a toggle button (aria-pressed);
    `help` is its description; `on_click` runs before that run (the values: st.session_state[key].click)."""
    data = {"label": label, "reads": reads, "testid": key, "primary": primary, "view": "action", "base": BASE,
            "version": version(), "pressed": pressed, "help": help}
    result = _component(key=key, data=data, on_click_change=on_click)
    value = getattr(result, "click", None)
    return value if isinstance(value, dict) else None
