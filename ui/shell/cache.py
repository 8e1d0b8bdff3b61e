"""The one caching adapter: the shared models, and one byte budget for everything derived from them.

Bounded for a classroom (lib/serving/settings.py; docs/deploy.md, "Settings"):
- `CACHE`: one byte budget (`ITT_CACHE_BUDGET_MB`) for the captures and for every result the
  lessons derive from them or from a model (a layer's heads, a figure's JSON, a generation...), least
  recently used out first, each key computed once even when thirty learners ask at the same moment
  (lib/serving/budget_cache.py), each value sized by lib/serving/sizes.py. A capture stores only
  what it cannot recompute cheaply (lib/model/capture.py). The lessons cache through `derived`.
- models: the built-in ones (lib.model.models.EMBEDDED_MODELS), plus at most one hub model; loading
  another hub model lets the previous one go, with everything cached of it. `ITT_HUB_MODELS=off` and
  `ITT_HUB_MAX_PARAMS_M` limit hub loading (lib/model/models.py raises a ModelLoadError the page
  turns into a message).

The model lock (lib.model.capture) covers a forward pass only: a learner whose capture is cached reads it
without waiting for anyone's forward pass.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import inspect
import threading
from typing import Any, Callable, TypeVar

from lib.model.capture import Capture, run_capture
from lib.model.models import LoadedModel, Progress, is_embedded, load_model
from lib.serving.budget_cache import ByteBudgetCache
from lib.serving.settings import Settings
from lib.serving.sizes import nbytes


def _return_freed_memory_to_the_os() -> None:
    """Large arrays in their own mappings, so an evicted capture's memory leaves the process.

    glibc raises its mmap threshold after big frees (up to 32 MB), after which freed captures stay
    in the heap and the server's RSS only grows; a fixed 1 MB threshold stops that. No-op elsewhere.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        M_MMAP_THRESHOLD = -3
        libc.mallopt(M_MMAP_THRESHOLD, 1 << 20)
    except (OSError, AttributeError):
        pass


_return_freed_memory_to_the_os()


def _freeze_long_lived() -> None:
    """Move what is alive now (imported modules, a model's weights and tokenizer) out of the cycle
    collector's reach, so its full collections stay cheap.

    Streamlit runs `gc.collect(2)` after every script run, fragments included (`runner.postScriptGC`).
    With torch, transformers and a model loaded that walk took 250 ms of each slider move (464,000
    tracked objects, measured with py-spy on a fragment rerun); objects alive since the model load
    are not garbage, so skipping them loses nothing: later objects (captures, figures, sessions) are
    still collected as before. Collect first, so no garbage is frozen.
    """
    gc.collect()
    gc.freeze()


_first_runs: set[str] = set()
_first_runs_lock = threading.Lock()


def freeze_after_first_run(page: str) -> None:
    """After a page's first run in this process, freeze its long-lived objects too (its modules,
    plotly's validators, the lesson's cached results), as after a model load.

    Once per page per process, so at most a dozen times: whatever of that run's session is alive
    then and later becomes cyclic garbage is left to reference counting, a bounded amount.
    """
    with _first_runs_lock:
        if page in _first_runs:
            return
        _first_runs.add(page)
    _freeze_long_lived()

SETTINGS = Settings.from_env()
CACHE: ByteBudgetCache[Any] = ByteBudgetCache(SETTINGS.cache_budget_bytes, nbytes)  # a capture says its own size

_models: dict[str, LoadedModel] = {}
_models_lock = threading.Lock()
_loading: dict[str, threading.Lock] = {}


def get_model(name: str, progress: Progress | None = None) -> LoadedModel:
    """One LoadedModel per model name for the whole server: the built-in ones and at most one hub
    model. Raises lib.model.models.ModelLoadError (hub off, too large, offline...) for the page to show.

    No streamlit element is drawn in here: the slow first conversion of the embedded model is done,
    with its progress bar, by the caller, and a hub model's download reports to the caller's
    `progress` (lib.model.models.load_model), which draws in the caller's page. A session that waits for
    another session's load of the same name gets no reports, only the model.
    """
    with _models_lock:
        loaded = _models.get(name)
        if loaded is not None:
            return loaded
        gate = _loading.setdefault(name, threading.Lock())
    with gate:  # one load per name; other names load (or read) meanwhile
        with _models_lock:
            if name in _models:
                return _models[name]
        loaded = load_model(name, settings=SETTINGS) if progress is None else load_model(name, progress, SETTINGS)
        dropped = False
        with _models_lock:
            if not is_embedded(name):
                for other in [n for n in _models if not is_embedded(n)]:
                    del _models[other]
                    CACHE.discard(lambda key, other=other: other in key)
                    MODEL_DATA.discard(lambda key, other=other: other in key)
                    dropped = True
            _models[name] = loaded
        if dropped:
            gc.unfreeze()  # the model let go was frozen with the rest: give its cycles back to the collector
        _freeze_long_lived()
        return loaded


def resident_models() -> list[str]:
    with _models_lock:
        return list(_models)


def get_capture(model_name: str, text: str, max_tokens: int) -> Capture:
    """One capture per (model, text, cut); pages read it, they never run the model themselves."""
    return CACHE.get((model_name, text, int(max_tokens)),
                        lambda: run_capture(get_model(model_name), text, max_tokens))


F = TypeVar("F", bound=Callable[..., Any])


def _key_part(value: Any) -> Any:
    """An argument as part of a cache key: lists and tuples as tuples, dicts as sorted pairs."""
    if isinstance(value, (list, tuple)):
        return tuple(_key_part(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _key_part(v)) for k, v in value.items()))
    hash(value)  # anything else must be hashable: a TypeError here names the argument's type
    return value


def _through(store: Callable[[], ByteBudgetCache[Any]], fn: F) -> F:
    """`fn` cached in `store()` (looked up at each call)."""
    signature = inspect.signature(fn)
    name = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def cached(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        key = (name, *(_key_part(v) for k, v in bound.arguments.items() if not k.startswith("_")))
        return store().get(key, lambda: fn(*args, **kwargs))

    cached.clear = lambda: store().discard(lambda key: key[0] == name)  # type: ignore[attr-defined]
    return cached  # type: ignore[return-value]


def derived(fn: F) -> F:
    """`fn`'s results kept in `CACHE` (the one byte budget), keyed by its module, name and arguments
    (those whose name starts with "_" left out of the key, as Streamlit's caches do: the caller
    vouches they follow from the others). Shared by every session, never copied: a caller must not
    change what it gets.

    Example:
        @derived
        def layer_heads(model_name: str, text: str, layer: int) -> dict: ...
    """
    return _through(lambda: CACHE, fn)


# What a lesson prepares once per model (an embedding index, a tokenizer's merges, the model's
# timings): part of the model's footprint, kept while the model is resident and let go with it,
# not sized against the budget (Gemma 3's float16 unit rows alone are 335 MB). A ByteBudgetCache
# with no bound in practice, for what it does besides: each key computed once for concurrent sessions.
MODEL_DATA: ByteBudgetCache[Any] = ByteBudgetCache(2**62, lambda v: 0)


def per_model(fn: F) -> F:
    """`fn`'s results kept with the model named by its first argument (see `MODEL_DATA`); keyed as
    `derived` keys them."""
    return _through(lambda: MODEL_DATA, fn)
