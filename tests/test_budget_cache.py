"""lib.serving.budget_cache and ui.shell.cache's bounds: bytes, LRU order, one computation per key, hub policy."""

from __future__ import annotations

import threading

import pytest

from lib.serving import sizes
from lib.serving.budget_cache import ByteBudgetCache
from lib.serving.settings import Settings


def test_evicts_least_recently_used_until_within_budget():
    cache = ByteBudgetCache(budget=100, size_of=len)
    cache.get("a", lambda: "x" * 40)
    cache.get("b", lambda: "y" * 40)
    cache.get("a", lambda: pytest.fail("a hit must not recompute"))  # a is now the most recent
    cache.get("c", lambda: "z" * 40)  # 120 > 100: b (least recent) goes
    assert cache.keys() == ["a", "c"] and cache.nbytes == 80


def test_value_larger_than_budget_is_returned_not_kept():
    cache = ByteBudgetCache(budget=10, size_of=len)
    cache.get("small", lambda: "x" * 5)
    assert cache.get("big", lambda: "y" * 50) == "y" * 50
    assert cache.keys() == ["small"]


def test_concurrent_callers_of_one_key_compute_it_once():
    cache = ByteBudgetCache(budget=10**6, size_of=lambda v: 8)
    release = threading.Event()
    calls = []

    def compute():
        calls.append(1)
        release.wait(5)
        return object()

    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get("same", compute))) for _ in range(30)]
    for t in threads:
        t.start()
    release.set()
    for t in threads:
        t.join(10)
    assert len(calls) == 1 and len(results) == 30 and len({id(r) for r in results}) == 1


def test_a_hit_never_waits_for_another_keys_computation():
    cache = ByteBudgetCache(budget=10**6, size_of=lambda v: 1)
    cache.get("cached", lambda: "ready")
    started, release = threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(5)
        return "slow"

    worker = threading.Thread(target=lambda: cache.get("other", slow))
    worker.start()
    assert started.wait(5)
    assert cache.get("cached", lambda: pytest.fail("recomputed")) == "ready"  # while "other" computes
    release.set()
    worker.join(5)


def test_an_error_reaches_the_caller_and_nothing_is_cached():
    cache = ByteBudgetCache(budget=100, size_of=len)
    with pytest.raises(ValueError):
        cache.get("k", lambda: (_ for _ in ()).throw(ValueError("boom")))
    assert cache.keys() == []
    assert cache.get("k", lambda: "ok") == "ok"


def test_discard_by_key():
    cache = ByteBudgetCache(budget=100, size_of=len)
    cache.get(("m1", "t"), lambda: "a")
    cache.get(("m2", "t"), lambda: "b")
    assert cache.discard(lambda key: key[0] == "m1") == 1 and cache.keys() == [("m2", "t")]


def test_settings_from_env():
    s = Settings.from_env({"ITT_CACHE_BUDGET_MB": "256", "ITT_HUB_MODELS": "off", "ITT_HUB_MAX_PARAMS_M": "200"})
    assert (s.cache_budget_bytes, s.hub_models, s.hub_max_params) == (256 * 2**20, False, 200_000_000)
    d = Settings.from_env({"ITT_CACHE_BUDGET_MB": "lots", "ITT_HUB_MAX_PARAMS_M": "-1"})
    assert d == Settings()  # malformed values keep their defaults


def test_hub_off_and_size_cap_refuse_before_loading(monkeypatch):
    from lib.model import models

    monkeypatch.setattr(models, "_load_hub", lambda *a, **k: pytest.fail("must not load"))
    with pytest.raises(models.ModelLoadError) as e:
        models.load_model("gpt2", settings=Settings(hub_models=False))
    assert e.value.code == "hub_off"


def test_thirty_learners_on_one_text_run_one_capture(monkeypatch, tiny_llama):
    import ui.shell.cache as cache

    monkeypatch.setattr(cache, "CACHE", ByteBudgetCache(10**9, lambda c: c.nbytes))
    monkeypatch.setattr(cache, "get_model", lambda name: tiny_llama)
    runs = []
    original = cache.run_capture
    monkeypatch.setattr(cache, "run_capture", lambda *a, **k: runs.append(1) or original(*a, **k))
    out = []
    threads = [threading.Thread(target=lambda: out.append(cache.get_capture("tiny", "abc def", 64)))
               for _ in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(runs) == 1 and len(out) == 30 and len({id(c) for c in out}) == 1


def test_at_most_one_hub_model_resident(monkeypatch, tiny_llama, tiny_gpt2):
    import ui.shell.cache as cache
    from lib.model.models import DEFAULT_MODEL

    monkeypatch.setattr(cache, "_models", {})
    monkeypatch.setattr(cache, "CACHE", ByteBudgetCache(10**9, sizes.nbytes))
    fake = {DEFAULT_MODEL: tiny_llama, "hub/a": tiny_llama, "hub/b": tiny_gpt2}
    monkeypatch.setattr(cache, "load_model", lambda name, settings=None: fake[name])
    monkeypatch.setattr(cache, "MODEL_DATA", ByteBudgetCache(10**9, lambda v: 0))

    @cache.derived
    def first_token(model_name: str, text: str) -> str:
        return cache.get_capture(model_name, text, 16).tokens[0]

    @cache.per_model
    def vocabulary(model_name: str) -> int:
        return len(cache.get_model(model_name).tokenizer)

    cache.get_model(DEFAULT_MODEL)
    cache.get_model("hub/a")
    first_token("hub/a", "abc")
    vocabulary("hub/a")
    vocabulary(DEFAULT_MODEL)
    assert len(cache.CACHE.keys()) == 2 and len(cache.MODEL_DATA.keys()) == 2
    cache.get_model("hub/b")
    assert sorted(cache.resident_models()) == sorted([DEFAULT_MODEL, "hub/b"])
    # Its captures, what was derived from them and what was prepared once for it left with it.
    assert not cache.CACHE.keys()
    assert [k[1] for k in cache.MODEL_DATA.keys()] == [DEFAULT_MODEL]


def test_a_hub_model_let_go_is_freed_even_in_a_reference_cycle(monkeypatch):
    """Models are frozen out of the cycle collector after loading (Streamlit's gc after each run
    stays cheap); one let go must still be collected, cycles included."""
    import gc
    import weakref

    import ui.shell.cache as cache

    class Model:  # a stand-in holding a reference cycle, as module graphs can
        def __init__(self) -> None:
            self.me = self

    monkeypatch.setattr(cache, "_models", {})
    monkeypatch.setattr(cache, "CACHE", ByteBudgetCache(10**9, lambda c: c.nbytes))
    monkeypatch.setattr(cache, "load_model", lambda name, settings=None: Model())
    first = weakref.ref(cache.get_model("hub/a"))
    assert gc.get_freeze_count() > 0 and first() is not None
    cache.get_model("hub/b")
    gc.collect()
    assert first() is None
    assert gc.get_freeze_count() > 0  # what is still alive is frozen again


@pytest.mark.parametrize("lang", ["en", "it"])
def test_page_says_the_server_does_not_load_hub_models(monkeypatch, lang):
    import ui.shell.cache as cache
    from lib.course import i18n
    from lib.model.models import DEFAULT_MODEL
    from tests.apptest import start

    at = start(lang)
    monkeypatch.setattr(cache, "SETTINGS", Settings(hub_models=False))
    at.text_input(key="app.model_request").set_value("gpt2")
    at.button(key="app.load").click()
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["app.model"] == DEFAULT_MODEL
    expected = i18n.fill(i18n.ui(lang)["model.error.hub_off"], name="gpt2")
    assert expected in [e.value for e in at.error]


def test_a_derived_result_is_computed_once_keyed_by_its_arguments_and_bounded_by_bytes(monkeypatch):
    import numpy as np

    import ui.shell.cache as cache

    monkeypatch.setattr(cache, "CACHE", ByteBudgetCache(8_100, sizes.nbytes))
    calls = []

    @cache.derived
    def row(model_name: str, n: int, _note: str = "", ids: tuple = ()) -> np.ndarray:
        calls.append((model_name, n, _note, ids))
        return np.zeros(n, np.float32)

    a = row("m", 100, "first")
    assert row("m", 100, "other note") is a  # "_" arguments are not part of the key
    assert row("m", n=100) is a  # nor is how an argument is passed
    row("m", 100, ids=[1, 2])  # a list is keyed as a tuple
    assert row("m", 100, ids=(1, 2)) is not a and len(calls) == 2
    row("m", 2_000)  # 8,000 bytes: the two others (400 each) leave
    assert [k[1:3] for k in cache.CACHE.keys()] == [("m", 2_000)]
    row.clear()
    assert not cache.CACHE.keys()


def test_sizes_count_what_a_value_holds_once():
    import dataclasses

    import numpy as np
    import torch

    a = np.zeros((30, 40), np.float32)
    assert sizes.nbytes(a) == 4_800
    assert sizes.nbytes(torch.zeros(5, dtype=torch.float16)) == 10
    assert sizes.nbytes("è") == 2 and sizes.nbytes(b"xyz") == 3
    pair = sizes.nbytes([a, a])
    assert 4_800 < pair < 2 * 4_800  # one array, referenced twice: counted once
    assert sizes.nbytes({"a": a}) >= 4_800 + 1

    @dataclasses.dataclass
    class Two:
        x: np.ndarray
        y: np.ndarray

    assert sizes.nbytes(Two(a, np.zeros(10, np.int64))) >= 4_800 + 80

    class Says:
        nbytes = property(lambda self: 7)
        big = np.zeros(1000)

    assert sizes.nbytes(Says()) == 7  # an object that knows what it holds says it
    module = torch.nn.Linear(100, 100)
    assert sizes.nbytes(module) < 1_000  # a model's module is the model's: not walked


def test_a_chart_of_numbers_is_counted_number_by_number():
    """A plotly figure's JSON: long lists of numbers, counted without walking each one (the same total)."""
    import sys

    numbers = [0.5 * i for i in range(10_000)] + [None, True, 3]
    assert sizes.nbytes(numbers) == sys.getsizeof(numbers) + sum(sys.getsizeof(v) for v in numbers)
    mixed = [1.5, "ab", [2.5]]
    assert sizes.nbytes(mixed) == (sys.getsizeof(mixed) + sys.getsizeof(1.5) + 2
                                   + sys.getsizeof(mixed[2]) + sys.getsizeof(2.5))
    figure = {"data": [{"x": numbers, "y": numbers}]}
    assert sizes.nbytes(figure) < 2 * sizes.nbytes(numbers)  # one list, referenced twice: counted once
