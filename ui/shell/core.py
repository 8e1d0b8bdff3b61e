"""Language, labels, the current model and the learner's text, for every page.

Session keys are namespaced: `app.*` for the shell, `quiz.*` for the quiz, `<lesson>.*` for a
lesson's widgets. Only UI choices live in session state; models and captures live in ui.shell.cache.
"""

from __future__ import annotations

import logging

import numpy as np
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from lib.course import i18n
from lib.model.capture import DEFAULT_MAX_TOKENS, Capture, max_tokens_for
from lib.model.hub import DownloadStatus
from lib.serving.log import failure
from lib.model.models import (DEFAULT_MODEL, EMBEDDED_MODELS, LoadedModel, ModelLoadError, convert_gguf, converted_dir,
                              is_embedded, learned_position_table)
from lib.course.quiz import format_number
from ui.shell.cache import derived, get_capture, get_model, per_model, resident_models

log = logging.getLogger(__name__)
MAX_CHARS = 50_000  # the text box accepts this much; the capture cuts at DEFAULT_MAX_TOKENS tokens


def lang() -> str:
    """The course language: session state, else `?lang=`, else the browser's locale.

    Read once per run (every label asks: a session-state look-up each was 6 % of a run), kept on
    the run's context; `set_lang` changes it, for the rest of the run too."""
    ctx = get_script_run_ctx()
    memo = getattr(ctx, "_itt_lang", None)
    if memo is not None and memo[0] is ctx.cursors:  # `cursors` is a new dict at every run's start
        return memo[1]
    if "app.lang" not in st.session_state:
        st.session_state["app.lang"] = i18n.choose_language(st.query_params.get("lang"), st.context.locale)
    value = st.session_state["app.lang"]
    if ctx is not None:
        ctx._itt_lang = (ctx.cursors, value)
    return value


def set_lang(value: str) -> None:
    """Switch the course's language (the sidebar's switch)."""
    st.session_state["app.lang"] = value
    ctx = get_script_run_ctx()
    if ctx is not None:
        ctx._itt_lang = None


def features() -> frozenset[str] | None:
    """The named features of the current model (lib.model.features), None before any model is loaded."""
    from lib.model.features import features as model_features

    try:
        return model_features(model())
    except ModelLoadError:  # no model yet (it failed to load, and says so): texts fall back to their plain form
        return None
    except Exception as e:  # a model whose config reads in an unforeseen way: the plain form too, logged
        failure(log, "reading the model's features", e, once=True)
        return None


def t(key: str, **values) -> str:
    """The label `key` in the current language, with `{name}` placeholders filled; a label with
    feature variants (`key[feature]`) is picked for the current model."""
    language = lang()
    if i18n.has_label_variants(language, key):
        text = i18n.label_for(language, key, features())
    else:
        text = i18n.label(language, key)
    return i18n.fill(text, **{k: v for k, v in values.items()}) if values else text


def num(value: float, digits: int | None = None, language: str | None = None) -> str:
    """A number written the way the current language writes it (6,4 in Italian, 6.4 in English).

    `language`: the current one read once by a caller writing many numbers (a table's cells)."""
    if digits is not None:
        value = round(value, digits)
    return format_number(value, language or lang())


def big(n: float) -> str:
    """A count with a unit word: 134.5 M, 8.03 B (mld in Italian)."""
    if n >= 1e9:
        return f"{num(n / 1e9, 2)} {t('unit.billion')}"
    if n >= 1e6:
        return f"{num(n / 1e6, 1)} {t('unit.million')}"
    return num(n)


def model_name() -> str:
    return st.session_state.setdefault("app.model", DEFAULT_MODEL)


def display_name(name: str) -> str:
    if name == DEFAULT_MODEL:
        return t("model.embedded_name")
    return t(f"model.embedded_name.{EMBEDDED_MODELS[name].slug}") if is_embedded(name) else name


def size_text(n: float) -> str:
    """Bytes the way a download reads them: 512 B, 12.3 kB, 548.1 MB, 1.52 GB (decimal units)."""
    for unit, scale, digits in (("GB", 1e9, 2), ("MB", 1e6, 1), ("kB", 1e3, 1)):
        if n >= scale:
            return f"{num(n / scale, digits)} {unit}"
    return f"{num(int(n))} B"


def duration_text(seconds: float) -> str:
    """A time left: 35 s, 2 min 10 s."""
    s = max(0, int(round(seconds)))
    return t("unit.seconds", n=num(s)) if s < 60 else t("unit.minutes", m=num(s // 60), s=num(s % 60))


def download_text(status: DownloadStatus) -> str:
    """One line for the progress bar: the file, its bytes done and total, the speed and the time left."""
    values = dict(file=status.file, index=num(status.index), n_files=num(status.n_files),
                  done=size_text(status.done), speed=size_text(status.speed))
    if status.total is None:
        return t("load.download_unknown", **values)
    if status.eta is None:
        return t("load.download_start", total=size_text(status.total), **values)
    return t("load.download", total=size_text(status.total), eta=duration_text(status.eta), **values)


def short_name(name: str) -> str:
    """The model's name for tables, legends and chart titles: the display name without the
    parenthetical detail (how the built-in weights are stored), which lesson 1 and the help give.

    Example: short_name(DEFAULT_MODEL) -> "SmolLM2-135M-Instruct"
    """
    return display_name(name).split(" (")[0]


def _load_with_progress(name: str) -> LoadedModel:
    """get_model, after converting the embedded GGUF with a progress bar the first time; a hub
    model draws its stages and its download (file, bytes, speed, time left) in the same bar."""
    if is_embedded(name) and not (converted_dir(name) / "config.json").exists():
        box = st.empty()
        try:
            slow = name != DEFAULT_MODEL  # Gemma's 262,144-token tokenizer takes minutes to unpack, not seconds
            convert_gguf(lambda fraction, stage: box.progress(
                min(max(fraction, 0.0), 1.0), text=t("load.gemma_slow" if slow and stage == "load.reading_gguf" else stage)),
                name)
        finally:
            box.empty()
    if not is_embedded(name) and name not in resident_models():
        box = st.empty()

        def show(fraction: float, stage: str, status: DownloadStatus | None = None) -> None:
            box.progress(min(max(fraction, 0.0), 1.0), text=download_text(status) if status is not None else t(stage))

        box.progress(0.0, text=t("load.weights"))  # what a learner waiting for another's load of it sees
        try:
            return get_model(name, show)
        finally:
            box.empty()
    with st.spinner(t("load.loading" if is_embedded(name) else "load.weights")):
        return get_model(name)


def _error_values(values: dict) -> dict[str, str]:
    """A refusal's figures as the language writes counts (8,03 mld, 1.5 B), the rest as text."""
    return {k: big(v) if isinstance(v, int) and not isinstance(v, bool) else str(v) for k, v in values.items()}


def ensure_model() -> LoadedModel | None:
    """Load the requested model (if the learner asked for one), else the current one.

    A model that fails to load leaves the current one in place, with a message saying why.
    """
    pending = st.session_state.pop("app.model_pending", None)
    if pending is not None and pending.strip() != model_name():
        try:
            _load_with_progress(pending.strip() if pending != DEFAULT_MODEL else pending)
            st.session_state["app.model"] = pending.strip() if pending != DEFAULT_MODEL else pending
            st.toast(t("model.loaded", name=display_name(model_name())))
        except ModelLoadError as e:
            st.session_state["app.model_error"] = (e.code, pending, e.values)
        except Exception as e:  # a hub model whose code or weights break in an unforeseen way
            failure(log, f"loading the model {pending}", e)
            st.session_state["app.model_error"] = ("failed", pending, {})
    error = st.session_state.pop("app.model_error", None)
    if error:
        code, name, values = error
        st.error(t(f"model.error.{code}", name=name, **_error_values(values)))
    try:
        return _load_with_progress(model_name())
    except ModelLoadError as e:
        st.error(t(f"model.error.{e.code}", name=display_name(model_name()), **_error_values(e.values)))
        if model_name() != DEFAULT_MODEL:
            st.session_state["app.model"] = DEFAULT_MODEL
        return None


def model() -> LoadedModel:
    return get_model(model_name())


def text() -> str:
    return st.session_state.get("app.text", "")


class CaptureRef:
    """The learner's capture by its key (model, text, cut): what pages and fragments hold.

    Streamlit keeps every fragment of a session between reruns, with the page's globals it closes
    over; a page holding the Capture itself would pin one capture per learner, outside the byte
    budget of ui.shell.cache (measured: +200 MB of server RSS per learner with a 512-token text). Each
    attribute read asks the budgeted cache (a dictionary lookup; a recomputation if the capture
    was evicted meanwhile), so between runs a session holds three small values.
    """

    __slots__ = ("_ref",)  # not "key": Capture.key(layer, head) is a field read through here

    def __init__(self, model: str, text: str, max_tokens: int) -> None:
        object.__setattr__(self, "_ref", (model, text, max_tokens))

    def resolve(self) -> Capture:
        return get_capture(*self._ref)

    def last_logits(self) -> np.ndarray:
        """[V] the logits at the text's last position, read-only, kept per capture key: computing
        them reads the whole unembedding (113 MB for SmolLM2), a third of a sampling slider's move."""
        return _last_logits(*self._ref)

    def __getattr__(self, name: str):
        return getattr(get_capture(*self._ref), name)

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError("a capture is immutable")

    @property
    def cut(self) -> int:
        """The token limit the capture was made with (the third part of its cache key)."""
        return self._ref[2]


def cut(cap) -> int:
    """The token limit of the page's capture, for caches keyed like it (model, text, cut): a view
    that recomputes from the capture must ask for the same one (Gemma reads 1,024 tokens, not 512)."""
    return cap.cut if isinstance(cap, CaptureRef) else max_tokens_for(model())


@derived  # 196 KB each for SmolLM2
def _last_logits(model: str, text: str, max_tokens: int) -> np.ndarray:
    cap = get_capture(model, text, max_tokens)
    out = np.array(cap.logits_at(cap.n_tokens - 1), copy=True)
    out.flags.writeable = False  # shared by every session with this text
    return out


@per_model  # GPT-2's: 1,024 x 768 float32, 3 MB
def learned_positions(model: str) -> np.ndarray | None:
    """The model's learned position table (read-only, shared by every session), None for RoPE: the
    embeddings lesson's input rows and the position lesson's learned table read the same one."""
    return learned_position_table(get_model(model))


def page_hash() -> str:
    """The script hash of the page this run is for (in a section's run, the page the browser named)."""
    ctx = get_script_run_ctx()
    return ctx.page_script_hash if ctx is not None else ""


def deferring() -> bool:
    """Whether sections below the first screen wait until the learner reaches them: in a browser,
    yes; in a session without HTTP headers (AppTest), no, everything is computed at once.
    `st.session_state["app.defer_sections"]` (True/False) overrides the guess, for tests."""
    defer = st.session_state.get("app.defer_sections")
    return bool(st.context.headers) if defer is None else bool(defer)


def capture(max_tokens: int | None = None) -> CaptureRef | None:
    """The capture of the learner's text on the current model, or None (with a prompt) if empty.

    By default as many tokens as the model's lessons need: DEFAULT_MAX_TOKENS, twice the sliding
    window on a model with local layers (lib.model.capture.max_tokens_for).
    """
    current = text()
    if not current.strip():
        st.info(t("text.empty"))
        return None
    if max_tokens is None:
        max_tokens = max_tokens_for(model())
    name = model_name()
    ref = CaptureRef(name, current, max_tokens)
    cap = ref.resolve()
    if cap.truncated:
        st.warning(t("text.truncated", n=num(cap.n_tokens), total=num(cap.n_tokens_total)))
    return ref
