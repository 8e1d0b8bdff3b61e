"""Colours as a learner with a red-green colour-vision deficiency sees them, and how far apart two
colours look: enough to check that a chart's classes stay apart without full colour vision.

- `simulate(colours, kind)`: protanopia or deuteranopia (no working L or M cones), with the
  matrices of Machado, Oliveira & Fernandes (2009) at severity 1.0, applied in linear RGB.
- `lab(colours)`: CIE L*a*b* (D65 white), from sRGB.
- `delta_e(a, b)`: CIEDE2000 colour difference (about 1 is the smallest a trained eye sees; the
  course asks 10 or more between colours that must read as different classes).

Left out: tritanopia (blue-yellow, rare), anomalous trichromacy of lesser severity (severity 1.0 is
the hardest case of each kind), and the viewing conditions (CIECAM02's surround, adaptation).
Colours are "#rrggbb", "rgb(r, g, b)" strings or 0-255 triples.
"""

from __future__ import annotations

import re

import numpy as np

# Machado et al. 2009, Table 1, severity 1.0; they act on linear RGB.
MACHADO = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868],
                            [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968],
                              [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
}
KINDS = tuple(MACHADO)

_SRGB_TO_XYZ = np.array([[0.4124564, 0.3575761, 0.1804375],
                         [0.2126729, 0.7151522, 0.0721750],
                         [0.0193339, 0.1191920, 0.9503041]])
_D65 = np.array([0.95047, 1.0, 1.08883])


def rgb(colours) -> np.ndarray:
    """[N, 3] sRGB in 0..1 from "#rrggbb", "rgb(r, g, b)" / "rgba(...)" strings or 0-255 triples.

    Example: rgb(["#ff0000", "rgb(0, 0, 255)"]) -> [[1, 0, 0], [0, 0, 1]]
    """
    out = []
    for c in colours:
        if isinstance(c, str) and c.startswith("#"):
            out.append([int(c[i:i + 2], 16) for i in (1, 3, 5)])
        elif isinstance(c, str):
            out.append([float(x) for x in re.findall(r"[\d.]+", c)[:3]])
        else:
            out.append(list(c)[:3])
    return np.asarray(out, dtype=np.float64) / 255.0


def _linear(srgb: np.ndarray) -> np.ndarray:
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def _gamma(lin: np.ndarray) -> np.ndarray:
    lin = np.clip(lin, 0.0, 1.0)
    return np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)


def simulate(colours, kind: str) -> np.ndarray:
    """[N, 3] sRGB in 0..1: `colours` as seen with `kind` ("protanopia" or "deuteranopia").

    Example: simulate(["#ffffff"], "deuteranopia") -> [[1, 1, 1]] (white and grey stay as they are)
    """
    lin = _linear(rgb(colours))  # [N, 3]
    return _gamma(lin @ MACHADO[kind].T)


def lab(srgb: np.ndarray) -> np.ndarray:
    """[N, 3] CIE L*a*b* (D65) from [N, 3] sRGB in 0..1 (use `rgb` for colour strings)."""
    xyz = _linear(np.asarray(srgb, dtype=np.float64)) @ _SRGB_TO_XYZ.T / _D65
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def delta_e(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """CIEDE2000 difference between rows of two [N, 3] L*a*b* arrays (Sharma, Wu & Dalal 2005).

    Example: delta_e([[50, 2.6772, -79.7751]], [[50, 0, -82.7485]]) -> [2.0425]
    """
    l1, a1, b1 = np.asarray(lab1, dtype=np.float64).T
    l2, a2, b2 = np.asarray(lab2, dtype=np.float64).T
    c_bar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar ** 7 / (c_bar ** 7 + 25.0 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    dl, dc = l2 - l1, c2p - c1p
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(c1p * c2p == 0, 0.0, dh)
    dhh = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    l_bar, cp_bar = (l1 + l2) / 2, (c1p + c2p) / 2
    # The mean hue: halfway round the shorter way (and the plain sum when a colour is grey).
    h_sum = h1p + h2p
    h_bar = np.where(c1p * c2p == 0, h_sum,
                     np.where(np.abs(h1p - h2p) <= 180, h_sum / 2,
                              np.where(h_sum < 360, (h_sum + 360) / 2, (h_sum - 360) / 2)))
    t = (1 - 0.17 * np.cos(np.radians(h_bar - 30)) + 0.24 * np.cos(np.radians(2 * h_bar))
         + 0.32 * np.cos(np.radians(3 * h_bar + 6)) - 0.20 * np.cos(np.radians(4 * h_bar - 63)))
    sl = 1 + 0.015 * (l_bar - 50) ** 2 / np.sqrt(20 + (l_bar - 50) ** 2)
    sc = 1 + 0.045 * cp_bar
    sh = 1 + 0.015 * cp_bar * t
    rt = (-2 * np.sqrt(cp_bar ** 7 / (cp_bar ** 7 + 25.0 ** 7))
          * np.sin(np.radians(60 * np.exp(-(((h_bar - 275) / 25) ** 2)))))
    return np.sqrt((dl / sl) ** 2 + (dc / sc) ** 2 + (dhh / sh) ** 2 + rt * (dc / sc) * (dhh / sh))


def distance(c1, c2, kind: str | None = None) -> float:
    """CIEDE2000 between two colours, as seen with `kind` (None: full colour vision).

    Example: distance("#000000", "#ffffff") -> 100.0
    """
    pair = simulate([c1, c2], kind) if kind else rgb([c1, c2])
    lab_pair = lab(pair)
    return float(delta_e(lab_pair[:1], lab_pair[1:])[0])


def lightness(colours, kind: str | None = None) -> np.ndarray:
    """[N] CIE L* of each colour, as seen with `kind` (None: full colour vision)."""
    return lab(simulate(colours, kind) if kind else rgb(colours))[:, 0]
