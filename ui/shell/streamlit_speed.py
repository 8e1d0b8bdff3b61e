"""Costs Streamlit 1.67 pays on every element of every run, cut without changing what is sent.

Each was found by py-spy on the server under the load driver (docs/performance.md); each replaces
one function of Streamlit's, installed once by app.py, and is tested to answer as the original does.
Streamlit is pinned in requirements.txt: a new version must be checked against this file.

**The widgets' look-up of their own key.** Every radio, selectbox, slider, number input, text
input and text area asks `get_session_state().filtered_state` whether its key holds None (`key in state and state[key] is
None`). That property builds a dict of the *whole* session state on each call, running every
custom component's presenter on the way, so a page of N such widgets pays N × (every key). On the
attention lesson it was 6 % of a new text's server CPU (py-spy, docs/performance.md).

`install()` gives those five widget modules a session state whose `filtered_state` is a read-only
view that answers `in` and `[]` for one key with one look-up, and builds the full dict only if
something iterates it. The answers are the same as the dict's (tested against it on a live
session). Nothing else changes: every other attribute is the session's own.

**A keyed component's identity.** A custom component (`st.components.v2`: the course's live
charts and section followers) hashes a canonical JSON dump of all its data for its identity on
every run, then Streamlit ignores that hash whenever the component has a key (`key_as_main_identity`).
Every component of the course has a key; `install()` skips the dump and hash for keyed ones (a
quarter of a live chart's cost on the server: its figure, JSON-encoded and hashed once more).

**A cached function's signature.** Every call of an `st.cache_data`/`st.cache_resource` function
works out the function's signature anew (`type_util.get_func_parameters`: `inspect.signature`) to
name its arguments in the cache key; `install()` keeps each function's parameters once.

**A fragment's signature.** A page defines its sections (`@st.fragment`) each time it runs, and
the decorator copies each function's signature onto its wrapper (`inspect.signature`: 4 % of a
new text's run); `install()` works it out once per function body and defaults.

Deliberately left out: any other use of `filtered_state` (`st.session_state.to_dict()`, iteration),
which keeps Streamlit's own dict; and the hand-over of a run's elements to the event loop. Handing
them over in 5 ms batches (one loop wake-up per batch, not per element) saved some 8 % of a new
text's CPU, but it held a run's last elements back: a request from the browser arriving then (the
progress store's question after a quick lesson switch) found that run's ScriptRunner done and
replaced it, and Streamlit drops every event of a replaced ScriptRunner, so the page's elements never
reached the browser (an empty lesson in 5 of 40 quick switches under load). Streamlit's own
hand-over queues each element at once.
"""

from __future__ import annotations

import functools
import logging
import inspect
import threading
import types
from collections.abc import Iterator, Mapping
from typing import Any

import streamlit
from streamlit import type_util
from streamlit.components.v2.bidi_component.main import BidiComponentMixin
from streamlit.runtime import fragment as fragment_module
from streamlit.elements.widgets import number_input, radio, selectbox, slider, text_widgets
from streamlit.runtime.state import session_state as _ss
from streamlit.runtime.state.common import is_element_id
from streamlit.runtime.state.session_state_proxy import get_session_state

WIDGET_MODULES = (number_input, radio, selectbox, slider, text_widgets)


class FilteredView(Mapping):
    """What `SessionState.filtered_state` holds, looked up one key at a time."""

    def __init__(self, safe) -> None:
        self._safe = safe  # SafeSessionState: its lock guards the state shared with the server thread
        self._full: dict[str, Any] | None = None

    def _dict(self) -> dict[str, Any]:
        if self._full is None:
            self._full = self._safe.filtered_state
        return self._full

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str) or is_element_id(key) or _ss._is_internal_key(key):
            return False  # the dict leaves out keyless widgets' ids and Streamlit's own keys
        with self._safe._lock:
            return key in self._safe._state  # SessionState: a look-up of this key (widget ids mapped)

    def __getitem__(self, key: str) -> Any:
        if key not in self:
            raise KeyError(key)
        with self._safe._lock:
            return self._safe._state[key]  # the presented value, as the dict holds it

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())


class _WidgetState:
    """The session's state for a widget module: the same object but for `filtered_state`."""

    def __init__(self, safe) -> None:
        object.__setattr__(self, "_safe", safe)

    @property
    def filtered_state(self) -> FilteredView:
        return FilteredView(self._safe)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._safe, name)


def _widget_state() -> _WidgetState:
    return _WidgetState(get_session_state())


_keyed = threading.local()  # set while a keyed component is being added, on the script's thread
_streamlit_bidi = BidiComponentMixin._bidi_component
_streamlit_identity = BidiComponentMixin._build_bidi_identity_kwargs


def _bidi_component(self, component_name, key=None, *args, **kwargs):
    _keyed.on = key is not None
    try:
        return _streamlit_bidi(self, component_name, key, *args, **kwargs)
    finally:
        _keyed.on = False


def _identity_kwargs(self, **kwargs) -> dict[str, Any]:
    if getattr(_keyed, "on", False):  # the key alone is the identity: what else goes in is ignored
        return {name: kwargs.get(name) for name in ("component_name", "isolate_styles", "width", "height",
                                                      "default")}
    return _streamlit_identity(self, **kwargs)


_streamlit_parameters = type_util.get_func_parameters


@functools.lru_cache(maxsize=4096)
def _parameters(func) -> tuple:
    return tuple(_streamlit_parameters(func))


def _func_parameters(func) -> list:
    """The parameters of func's signature, worked out once per function (a new list each call)."""
    try:
        return list(_parameters(func))
    except TypeError:  # an unhashable callable: as Streamlit does
        return _streamlit_parameters(func)


_signatures: dict[tuple, inspect.Signature] = {}  # (body, defaults, keyword defaults) -> signature
MAX_SIGNATURES = 4096  # page scripts compiled anew (a new body each time) stop being remembered past this


class _FragmentInspect:
    """`inspect` as the fragment module sees it: `signature` kept per function body and defaults."""

    def __getattr__(self, name: str) -> Any:
        return getattr(inspect, name)

    @staticmethod
    def signature(func, **kwargs) -> inspect.Signature:
        try:
            key = (func.__code__, func.__defaults__, tuple(sorted((func.__kwdefaults__ or {}).items())))
            known = _signatures.get(key)
        except (AttributeError, TypeError):  # not a plain function, or unhashable defaults
            return inspect.signature(func, **kwargs)
        if known is None:
            known = inspect.signature(func, **kwargs)
            if len(_signatures) < MAX_SIGNATURES:
                _signatures[key] = known
        return known


_FRAGMENT_INSPECT = _FragmentInspect()


CHECKED_VERSION = "1.67.0"  # the Streamlit these replacements were read against and tested on


def install() -> bool:
    """Point the widget modules at the one-key view, keyed components at their key, cached functions
    and fragments at their kept signatures (idempotent). On any other Streamlit version nothing is replaced:
    Streamlit's own code runs, slower but right. Returns whether the replacements are in."""
    if streamlit.__version__ != CHECKED_VERSION:
        logging.getLogger(__name__).warning(
            "Streamlit %s is not %s: its own code runs, without the course's speed-ups (ui/shell/streamlit_speed.py)",
            streamlit.__version__, CHECKED_VERSION)
        return False
    for module in WIDGET_MODULES:
        module.get_session_state = _widget_state
    BidiComponentMixin._bidi_component = _bidi_component
    BidiComponentMixin._build_bidi_identity_kwargs = _identity_kwargs
    streamlit._bidi_component = types.MethodType(_bidi_component, streamlit._main)  # what components call
    type_util.get_func_parameters = _func_parameters
    fragment_module.inspect = _FRAGMENT_INSPECT
    return True


def installed() -> bool:
    return (all(module.get_session_state is _widget_state for module in WIDGET_MODULES)
            and BidiComponentMixin._bidi_component is _bidi_component
            and BidiComponentMixin._build_bidi_identity_kwargs is _identity_kwargs
            and streamlit._bidi_component.__func__ is _bidi_component
            and type_util.get_func_parameters is _func_parameters
            and fragment_module.inspect is _FRAGMENT_INSPECT)
