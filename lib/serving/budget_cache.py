"""A cache bounded by bytes, least recently used first out, computing each key once.

The server's captures live here: one budget for all of them, whatever their length. Thirty learners
asking for the same key at once compute it once (the others wait for that result, not for the
model lock), and a hit never waits behind a computation of another key.
Deliberately left out: time-based expiry, persistence, per-session quotas.

Example:
    cache = ByteBudgetCache(budget=100, size_of=len)
    cache.get("a", lambda: "x" * 60); cache.get("b", lambda: "y" * 60)  # "a" is evicted
    cache.keys() -> ["b"]
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")


class ByteBudgetCache(Generic[V]):
    def __init__(self, budget: int, size_of: Callable[[V], int]) -> None:
        self.budget = int(budget)
        self._size_of = size_of
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()  # guards the dict only: never held while computing
        self._pending: dict[Hashable, threading.Event] = {}
        self._errors: dict[Hashable, BaseException] = {}
        self.computed = 0  # how many values were computed (misses that ran `compute`)

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(n for _, n in self._items.values())

    def keys(self) -> list[Hashable]:
        with self._lock:
            return list(self._items)

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The cached value of `key`, or `compute()` once, shared with concurrent callers.

        A value larger than the whole budget is returned but not kept. An exception of `compute`
        reaches every caller that waited for it, and nothing is cached.
        """
        while True:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    return self._items[key][0]
                event = self._pending.get(key)
                if event is None:
                    event = self._pending[key] = threading.Event()
                    owner = True
                else:
                    owner = False
            if not owner:
                event.wait()
                with self._lock:
                    error = self._errors.get(key)
                    if error is not None and key not in self._pending:
                        raise error
                    if key in self._items:
                        self._items.move_to_end(key)
                        return self._items[key][0]
                continue  # evicted (or too big) before we could read it: compute it ourselves
            try:
                value = compute()
            except BaseException as e:
                with self._lock:
                    self._errors[key] = e
                    self._pending.pop(key).set()
                raise
            size = int(self._size_of(value))
            with self._lock:
                self._errors.pop(key, None)
                if size <= self.budget:
                    self._items[key] = (value, size)
                    total = sum(n for _, n in self._items.values())
                    while total > self.budget:
                        _, (_, n) = self._items.popitem(last=False)
                        total -= n
                self._pending.pop(key).set()
                self.computed += 1
            return value

    def discard(self, predicate: Callable[[Hashable], bool]) -> int:
        """Drop every entry whose key matches (a model leaving the server takes its captures)."""
        with self._lock:
            gone = [k for k in self._items if predicate(k)]
            for k in gone:
                del self._items[k]
            return len(gone)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
