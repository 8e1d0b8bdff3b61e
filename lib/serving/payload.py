"""Arrays packed for a browser view: 16-bit integers with an offset and a scale, in base64.

A view (static/views/) receives its numbers once per text and answers every move in the browser,
so what it receives should be small. `pack_u16(values)` maps finite values linearly onto
0..65535 (value = lo + q * scale); the largest error is scale / 2, a 65,536th of the range. For
the next-token logits of SmolLM2 (range about 40) that is 0.0003 on a logit, 0.03 % on a
probability: float16 would give up to 0.016 on the largest logits, 1.6 % on a probability.

- `pack_u16(values) -> dict`: {"b64", "lo", "scale", "n"}, what static/views/common.js `unpackU16`
  reads (little-endian, as every browser's typed arrays on the machines the course runs on).
- `unpack_u16(packed) -> np.ndarray`: the inverse, for tests and for checking a payload.
- `pack_f32(values) -> dict`: float32, little-endian, in base64 ({"b64", "n"}), where a view's
  maths needs the numbers themselves (7 significant digits; the attention lesson's flash
  bookkeeping reruns the online softmax on a head's scores); `unpack_f32` reads it back.

Deliberately left out: -inf, nan (a view's data is finite: a masked score is sent as its mask),
compression beyond this (the websocket's own compression, where on, does the rest).
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

U16_MAX = 65535


def pack_u16(values: Any) -> dict:
    """Finite values as uint16 with an offset and a scale.

    Example: unpack_u16(pack_u16([0.0, 1.0, 2.0])) -> [0.0, 1.0, 2.0] (to within scale / 2)
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0 or not np.isfinite(x).all():
        raise ValueError("pack_u16 takes a non-empty array of finite numbers")
    lo, hi = float(x.min()), float(x.max())
    scale = (hi - lo) / U16_MAX if hi > lo else 1.0
    q = np.rint((x - lo) / scale).astype("<u2")
    return {"b64": base64.b64encode(q.tobytes()).decode("ascii"), "lo": lo, "scale": scale, "n": int(x.size)}


def unpack_u16(packed: dict) -> np.ndarray:
    """The values a view decodes from `pack_u16`'s dict (float64)."""
    q = np.frombuffer(base64.b64decode(packed["b64"]), dtype="<u2")
    if q.size != packed["n"]:
        raise ValueError(f"payload holds {q.size} values, says {packed['n']}")
    return packed["lo"] + q.astype(np.float64) * packed["scale"]


def pack_ints(values: Any) -> dict:
    """Whole numbers exactly, as unsigned 8-, 16- or 32-bit integers (the narrowest that holds
    them), little-endian, in base64: what static/views/common.js `unpackInts` reads.

    Example: unpack_ints(pack_ints([0, 300, 7])) -> [0, 300, 7] (two bytes each)
    """
    x = np.asarray(values, dtype=np.int64).ravel()
    if x.size and (x.min() < 0 or x.max() > 0xFFFFFFFF):
        raise ValueError("pack_ints takes whole numbers from 0 to 2**32 - 1")
    top = int(x.max()) if x.size else 0
    width = 1 if top <= 0xFF else 2 if top <= 0xFFFF else 4
    q = x.astype({1: "<u1", 2: "<u2", 4: "<u4"}[width])
    return {"b64": base64.b64encode(q.tobytes()).decode("ascii"), "width": width, "n": int(x.size)}


def unpack_ints(packed: dict) -> np.ndarray:
    """The whole numbers a view decodes from `pack_ints`'s dict (int64)."""
    dtype = {1: "<u1", 2: "<u2", 4: "<u4"}[packed["width"]]
    q = np.frombuffer(base64.b64decode(packed["b64"]), dtype=dtype)
    if q.size != packed["n"]:
        raise ValueError(f"payload holds {q.size} values, says {packed['n']}")
    return q.astype(np.int64)


def pack_f32(values: Any) -> dict:
    """Finite values as little-endian float32 in base64 (4 bytes each, a relative error of 6e-8).

    Example: unpack_f32(pack_f32([0.5, -2.0])) -> [0.5, -2.0]
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    if not np.isfinite(x).all():
        raise ValueError("pack_f32 takes finite numbers")
    return {"b64": base64.b64encode(x.astype("<f4").tobytes()).decode("ascii"), "n": int(x.size)}


def unpack_f32(packed: dict) -> np.ndarray:
    """The values a view decodes from `pack_f32`'s dict (float64)."""
    q = np.frombuffer(base64.b64decode(packed["b64"]), dtype="<f4")
    if q.size != packed["n"]:
        raise ValueError(f"payload holds {q.size} values, says {packed['n']}")
    return q.astype(np.float64)
