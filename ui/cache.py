"""The one caching adapter: the shared model and captures, kept across reruns and sessions.

`st.cache_resource` (not `cache_data`) for captures too: a Capture holds read-only arrays (up to
~600 MB at 512 tokens), so sharing the object is safe and avoids pickling a copy on every rerun.
"""

from __future__ import annotations

import streamlit as st

from lib.capture import Capture, run_capture
from lib.models import LoadedModel, load_model


@st.cache_resource(max_entries=3, show_spinner=False)
def get_model(name: str) -> LoadedModel:
    """One LoadedModel per model name for the whole server.

    No streamlit element may be drawn in here (a cached function replays its elements), so the
    slow first conversion of the embedded model is done, with its progress bar, by the caller.
    """
    return load_model(name)


@st.cache_resource(max_entries=16, show_spinner=False)
def get_capture(model_name: str, text: str, max_tokens: int) -> Capture:
    """One capture per (model, text, cut); pages read it, they never run the model themselves."""
    return run_capture(get_model(model_name), text, max_tokens)
