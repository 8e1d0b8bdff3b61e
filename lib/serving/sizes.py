"""How many bytes a cached value holds, for the server's one byte budget (ui/shell/cache.py).

`nbytes(value)` walks what the lessons cache: numpy arrays and torch tensors (their data), strings
and bytes, pandas frames, containers, dataclasses and plain objects, each object counted once (two
references to one array count it once). An object with an `nbytes` of its own (a capture, a BPE
replay) says what it holds: it knows what it shares with others (a replay shares its tokenizer's
vocabulary). Deliberately left out: the exact overhead of Python's objects (an estimate,
`sys.getsizeof` of the containers themselves); torch modules and Hugging Face objects (a model, a
tokenizer) are not walked: they are the model's, which the server keeps apart from the cache.

Example: nbytes(np.zeros((3, 4), np.float32)) -> 48; nbytes({"a": b"xyz"}) -> 3 + the dict's shell
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import numpy as np

_SCALARS = (int, float, bool, complex, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)


def nbytes(value: Any) -> int:
    """Bytes `value` holds (see the module's docstring)."""
    return _walk(value, set())


def _walk(value: Any, seen: set[int]) -> int:
    if isinstance(value, _SCALARS):
        return sys.getsizeof(value)
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    if isinstance(value, memoryview):
        return value.nbytes
    if isinstance(value, (np.ndarray, np.generic)):
        return int(value.nbytes)
    kind = type(value).__module__.split(".", 1)[0]
    if kind == "torch":
        import torch

        if isinstance(value, torch.Tensor):
            return int(value.element_size() * value.nelement())
        return sys.getsizeof(value)  # a module or another torch object: the model's, not walked
    if kind in ("transformers", "tokenizers"):
        return sys.getsizeof(value)  # a model's config or tokenizer: the model's, not walked
    own = getattr(type(value), "nbytes", None)
    if isinstance(own, property):
        return int(value.nbytes)
    if kind == "pandas" and hasattr(value, "memory_usage"):
        usage = value.memory_usage(deep=True)
        return int(getattr(usage, "sum", lambda: usage)())
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(_walk(k, seen) + _walk(v, seen) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        if set(map(type, value)) <= _SCALAR_TYPES:  # a chart's numbers (plotly JSON): counted without the walk
            return sys.getsizeof(value) + sum(map(sys.getsizeof, value))
        return sys.getsizeof(value) + sum(_walk(v, seen) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sys.getsizeof(value) + sum(_walk(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return sys.getsizeof(value) + _walk(vars(value), seen)
    if hasattr(value, "__slots__"):
        return sys.getsizeof(value) + sum(_walk(getattr(value, s), seen) for s in value.__slots__ if hasattr(value, s))
    return sys.getsizeof(value)
