"""bertviz head view and model view as HTML that works with no internet.

bertviz 1.4.1 (`head_view(..., html_action='return')`) builds a page that loads
require.js, d3 5.7.0 and jQuery 2.0.0 from a CDN. Here we let bertviz do its
own work (checks, token prettifying, layer filtering, the JSON it feeds its
JavaScript), then:

- rewrite the three CDN URLs to the copies that `scripts/vendor_js.sh` puts in
  `static/vendor/`, served by Streamlit's static serving at `/app/static/vendor/`.
  A page embeds the HTML with `st.iframe(view.html, height=...)`, which sends it
  as the iframe's `srcdoc`; a srcdoc document takes its base URL from the page
  that holds it, so `/app/static/...` resolves against the app's own origin.
- escape the embedded JSON so that no token (`</script>`, `<!--`, quotes, emoji)
  can end the script early. bertviz pastes `json.dumps(params)` into a
  `<script>` unescaped, and twice (its `PYTHON_PARAMS` marker also sits in a
  comment), so we keep one copy and halve the page.
- round weights to 4 decimals: the view draws them as opacities, and the HTML,
  which grows with layers x heads x T^2, gets about 3x smaller.

When the vendored files are missing the CDN URLs stay and `offline` is False,
so a page can say that the view needs internet.

Left out: bertviz's neuron view (needs its own model classes), sentence-pair and
encoder-decoder views, and any streamlit call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

VENDOR_FILES = ("require.js", "d3.min.js", "jquery.min.js")
# Streamlit serves ./static/ at /app/static/ when server.enableStaticServing is on.
STATIC_URL = "/app/static/vendor"

# bertviz 1.4.1's CDN URLs. require.js paths have no ".js": require adds it.
_CDN_REQUIRE = "https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js"
_CDN_PATHS = {
    "https://cdnjs.cloudflare.com/ajax/libs/d3/5.7.0/d3.min": f"{STATIC_URL}/d3.min",
    "https://cdnjs.cloudflare.com/ajax/libs/jquery/2.0.0/jquery.min": f"{STATIC_URL}/jquery.min",
}
_SCRIPT_OPEN = '\n<script type="text/javascript">\n'
_SCRIPT_CLOSE = "\n</script>\n"
_MARKER = "PYTHON_PARAMS"
_DECIMALS = 4


@dataclass(frozen=True)
class ViewHtml:
    """A bertviz view ready for `st.iframe(view.html, height=...)`."""

    html: str
    offline: bool  # True when the JavaScript comes from the app, not a CDN
    n_bytes: int  # size of `html` in UTF-8, to warn before sending a huge page


def vendor_dir() -> Path:
    """Where `scripts/vendor_js.sh` puts the JavaScript: <repo>/static/vendor.

    Example: vendor_dir().parts[-2:] -> ('static', 'vendor')
    """
    return Path(__file__).resolve().parents[2] / "static" / "vendor"


def vendored() -> bool:
    """True when require.js, d3.min.js and jquery.min.js are all in vendor_dir().

    Example: after `bash scripts/vendor_js.sh`, vendored() -> True
    """
    d = vendor_dir()
    return all((d / name).is_file() for name in VENDOR_FILES)


HIDE_LAYER_MENU = "<style>span:has(> select#layer){display:none}</style>"
# bertviz 1.4.1's head view draws in a fixed 335 px (two 110 px token columns, 115 px of lines
# between them) at the left of a full-width svg; its left tokens end at x = 102 and grow leftwards.
# Centred (and allowed to overflow its box, so a long token is not cut), the drawing sits in the
# middle of the frame instead of leaving the frame's right part empty.
HEAD_VIEW_WIDTH = 335
CENTRE_HEAD_VIEW = (f"<style>body{{margin:8px}}#vis svg{{display:block;width:{HEAD_VIEW_WIDTH}px;"
                    "margin:0 auto;overflow:visible}</style>")
_ROW_PX, _TOP_PX = 22.5, 30  # bertviz's BOXHEIGHT and TEXT_TOP
_MENU_PX = 28  # the "Layer:" menu's line, when it is shown
_MARGIN_PX = 16 + 12  # the body's margins, and room for the last token's descenders


def head_view_height(n_tokens: int, menu: bool = False) -> int:
    """The height in px a head view of `n_tokens` tokens needs to show every token: bertviz draws
    one 22.5 px row per token under a 30 px band of head colours, plus the layer menu's line when
    there is more than one layer.

    Example: head_view_height(18) -> 463; head_view_height(40) -> 958
    """
    return int(-(-(n_tokens * _ROW_PX + _TOP_PX) // 1)) + _MARGIN_PX + (_MENU_PX if menu else 0)


def head_view_html(
    attn: np.ndarray, tokens: list[str], layers: list[int] | None = None
) -> ViewHtml:
    """bertviz's head view of one attention capture, as offline HTML.

    attn: [L, H, T, T] float array (layer, head, query, key), rows summing to 1.
    tokens: the T token strings. layers: which layers to include (default all);
    only those are embedded, and the layer menu lists only those.

    Example: head_view_html(np.full((2, 1, 3, 3), 1 / 3, np.float32),
    ["a", "b", "c"], layers=[1]) -> ViewHtml whose page shows "Layer: 1" only.
    """
    from bertviz import head_view  # heavy (torch, IPython): import on use

    chosen = _check(attn, tokens, layers)
    out = head_view(
        attention=_as_bertviz(attn, chosen), tokens=list(tokens),
        include_layers=chosen, html_action="return",
    )
    view = _finish(out.data, "head_view.js")
    # One layer: bertviz's "Layer: [n]" menu has nothing to choose (the page's own slider picks
    # the layer) and is English inside an Italian page; hidden, the head menu stays.
    page = (HIDE_LAYER_MENU if len(chosen) == 1 else "") + CENTRE_HEAD_VIEW + view.html
    return ViewHtml(html=page, offline=view.offline, n_bytes=len(page.encode("utf-8")))


def model_view_html(
    attn: np.ndarray,
    tokens: list[str],
    layers: list[int] | None = None,
    heads: list[int] | None = None,
    display_mode: str = "light",
) -> ViewHtml:
    """bertviz's model view (a grid of every layer x head), as offline HTML.

    Same `attn`, `tokens`, `layers` as head_view_html; `heads` keeps only some
    heads (default all); display_mode is "light" or "dark".

    Example: model_view_html(np.full((2, 2, 3, 3), 1 / 3, np.float32),
    ["a", "b", "c"], heads=[0]) -> ViewHtml with a 2 x 1 grid of thumbnails.
    """
    from bertviz import model_view

    chosen = _check(attn, tokens, layers)
    n_heads = attn.shape[1]
    chosen_heads = sorted(set(heads)) if heads is not None else list(range(n_heads))
    if not chosen_heads or not all(0 <= h < n_heads for h in chosen_heads):
        raise ValueError(f"heads must be a non-empty subset of 0..{n_heads - 1}, got {heads}")
    out = model_view(
        attention=_as_bertviz(attn, chosen), tokens=list(tokens),
        include_layers=chosen, include_heads=chosen_heads,
        display_mode=display_mode, html_action="return",
    )
    return _finish(out.data, "model_view.js")


def as_document(html: str, lang: str, title: str) -> str:
    """A view's page as a whole HTML document in the course's language, with a title: bertviz writes
    a fragment, and an iframe's document needs its own `lang` (a screen reader's pronunciation) and
    `<title>` (the name a screen reader gives the frame's document), as axe-core's WCAG rules ask.

    Example: as_document("<div id='vis'></div>", "it", "Vista") -> '<!DOCTYPE html><html lang="it">
             <head><meta charset="utf-8"><title>Vista</title></head><body><div id='vis'></div></body></html>'
    """
    import html as _html

    return (f'<!DOCTYPE html><html lang="{_html.escape(lang)}"><head><meta charset="utf-8">'
            f"<title>{_html.escape(title)}</title></head><body>{html}</body></html>")


def _check(attn: np.ndarray, tokens: list[str], layers: list[int] | None) -> list[int]:
    if attn.ndim != 4 or attn.shape[2] != attn.shape[3]:
        raise ValueError(f"attn must be [L, H, T, T], got shape {attn.shape}")
    n_layers, _, t, _ = attn.shape
    if t != len(tokens):
        raise ValueError(f"attn has T={t} positions but {len(tokens)} tokens were given")
    chosen = sorted(set(layers)) if layers is not None else list(range(n_layers))
    # bertviz reads an empty include_layers as "all layers": refuse it instead.
    if not chosen or not all(0 <= layer < n_layers for layer in chosen):
        raise ValueError(f"layers must be a non-empty subset of 0..{n_layers - 1}, got {layers}")
    return chosen


def _as_bertviz(attn: np.ndarray, chosen: list[int]) -> list:
    """bertviz wants one torch tensor [1, H, T, T] per layer, indexed by layer.

    Chosen layers are rounded in float64, so that JSON prints 0.1235 rather than
    the float32 value 0.12349999696016312. The others are empty [1, H, 0, 0]
    stand-ins: bertviz only indexes the layers in include_layers, and reads the
    head count from the first entry.
    """
    import torch

    n_heads = attn.shape[1]
    return [
        torch.from_numpy(np.round(attn[layer].astype(np.float64), _DECIMALS)[None])  # [1, H, T, T]
        if layer in chosen
        else torch.empty((1, n_heads, 0, 0))
        for layer in range(attn.shape[0])
    ]


def _finish(html: str, js_name: str) -> ViewHtml:
    """Split bertviz's page, keep one escaped copy of its JSON, point URLs home."""
    import bertviz

    template = (Path(bertviz.__file__).parent / js_name).read_text(encoding="utf-8")
    before, mid, after = template.split(_MARKER)  # the marker appears exactly twice
    head, sep, script = html.partition(_SCRIPT_OPEN)
    if not sep or not script.endswith(_SCRIPT_CLOSE):
        raise RuntimeError("unexpected bertviz HTML layout (this module expects bertviz 1.4.1)")
    js = script[: -len(_SCRIPT_CLOSE)]
    # js == before + J + mid + J + after, J being bertviz's json.dumps(params):
    # lengths find J even when a token happens to contain `mid`.
    n = (len(js) - len(before) - len(mid) - len(after)) // 2
    params = js[len(before): len(before) + n]
    if js != before + params + mid + params + after:
        raise RuntimeError("unexpected bertviz script layout (expects bertviz 1.4.1)")

    # json.dumps escapes non-ASCII (emoji, U+2028) but not <, > or &, so a token
    # "</script>" would close the script tag. Outside strings JSON has none of
    # these characters, so escaping them everywhere only touches string contents.
    safe = params.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    js = before + safe + mid + _MARKER + after

    offline = vendored() and _CDN_REQUIRE in head and all(url in js for url in _CDN_PATHS)
    if offline:
        head = head.replace(_CDN_REQUIRE, f"{STATIC_URL}/require.js")
        for cdn, local in _CDN_PATHS.items():
            js = js.replace(cdn, local)
    page = head + _SCRIPT_OPEN + js + _SCRIPT_CLOSE
    return ViewHtml(html=page, offline=offline, n_bytes=len(page.encode("utf-8")))


SIZE_TOKENS = 64  # the text length at which the lesson tells a whole model view's size


@lru_cache(maxsize=16)
def weights_bytes(n_layers: int, n_heads: int, n_tokens: int) -> int:
    """About how many bytes the model view's page would carry for every layer and head of a model
    at `n_tokens` tokens: the JSON of one layer's causal weights (each query spread evenly over the
    keys it may read, rounded as the views round them), times the layers.

    Example: weights_bytes(18, 4, 64) -> about 2 MB (Gemma 3 270M); weights_bytes(30, 9, 64) -> about 7 MB
    """
    t = np.arange(1, n_tokens + 1, dtype=np.float64)
    rows = np.tril(np.ones((n_tokens, n_tokens))) / t[:, None]  # [T, T] causal, each row sums to 1
    layer = np.round(np.broadcast_to(rows, (n_heads, n_tokens, n_tokens)), _DECIMALS)  # [H, T, T]
    return n_layers * len(json.dumps(layer.tolist()))
