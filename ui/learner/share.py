"""Share this view: a link that opens the same lesson, language, model, text and widget values.

`apply(page)` runs before the page (from app.py): a link's parameters go into session state,
where the widgets find them; the parameters then leave the address bar, so a later reload starts
from what the learner does next, not from the link again. What a link asked for and could not
have (unknown or malformed parameters, an unreadable text) is said in a notice on that lesson.

`control(page)` draws the sidebar button; its dialog builds the link from the session's current
values (a button click reruns the whole app, so values moved inside fragments are current).

SHARED lists, per lesson, the widgets a link carries: parameter name -> session key and kind.
A test runs every lesson and checks each key is a widget value of that kind there.
"""

from __future__ import annotations

import time
import urllib.parse

import streamlit as st

from lib.learner import share_link as sl
from lib.learner.share_link import Param
from lib.lessons import bpe
from lib.model import arithmetic as A
from lib.model.models import DEFAULT_MODEL
from ui.lessons.embeddings import sections as EV
from ui.lessons.kvcache import sections as KV
from ui.lessons.sampling import sections as SV
from ui.lessons.attention import sections as AV
from ui.shell import nav
from ui.shell.core import MAX_CHARS, lang, model, model_name, num, t, text
from ui.views import browser

LAYERS, LAST_LAYER, LAST_HEAD = ("layers", 0), ("layers", -1), ("heads", -1)
SHARED: dict[str, dict[str, Param]] = {
    "numbers": {"layer": Param("numbers.layer", "int", lo=0, hi=LAST_LAYER)},
    "tokenization": {
        "corpus": Param("tokenization.corpus", "strs"),
        "pattern": Param("tokenization.pattern", "str", tuple(bpe.PATTERNS)),
        "target": Param("tokenization.target", "int"),  # the view clamps it, with a notice
        "view": Param("tokenization.real.view", "str", ("readable", "raw")),
        "ids": Param("tokenization.real.show_ids", "bool"),
    },
    "embeddings": {
        "dims": Param("embeddings.dims", "int", lo=4, hi=("dims", 0)),
        "words": Param("embeddings.words", "str"),
        "query": Param("embeddings.query", "str"),
        "k": Param("embeddings.k", "int", lo=3, hi=30),
        "metric": Param("embeddings.metric", "str", ("cosine", "euclidean")),
        "pca_add": Param("embeddings.pca_add", "bool"),
        "word": Param("embeddings.ctx_word", "str"),
        "a": Param("embeddings.ctx_a", "str"),
        "b": Param("embeddings.ctx_b", "str"),
        "depth": Param("embeddings.depth", "int", lo=0, hi=LAYERS),
    },
    "position": {  # the view's sliders and boxes clamp a stale value themselves, with a notice
        "sentence": Param("position.sentence", "str"),
        "seed": Param("position.seed", "int", lo=0, hi=1_000_000),
        "m": Param("position.m", "int", lo=0),
        "pair": Param("position.pair", "int", lo=0),
        "n": Param("position.n", "int", lo=0),
        "k": Param("position.k", "int", lo=0),
        "shift": Param("position.shift", "int", lo=0),
        "layer": Param("position.layer", "int", lo=0),
        "head": Param("position.head", "int", lo=0),
        "live_pair": Param("position.live_pair", "int", lo=0),
        "which": Param("position.which", "str", ("q", "k")),
    },
    "attention": {  # chosen_head brings values back in range, the flash and scaling views their tile size and d_head
        "layer": Param("attention.layer", "int", lo=0),
        "head": Param("attention.head", "int", lo=0),
        "dh": Param("attention.dh", "int", lo=1),
        "block": Param("attention.block", "int", lo=1),
    },
    "block": {
        "norm_layer": Param("block.norm_layer", "int", lo=0),  # clamped by the view
        "norm_token": Param("block.norm_token", "int", lo=0),
        "resid_token": Param("block.resid_token", "int", lo=0),
        "mlp_layer": Param("block.mlp_layer", "int", lo=0, hi=LAST_LAYER),
        "lens_layer": Param("block.lens_layer", "int", lo=0, hi=LAYERS),
        "lens_pos": Param("block.lens_pos", "int", lo=0),
    },
    "sampling": {
        "temperature": Param("sampling.temperature", "float", lo=0.0, hi=2.0),
        "top_k": Param("sampling.top_k", "int", lo=0, hi=SV.TOP_K_MAX),
        "top_p": Param("sampling.top_p", "float", lo=0.0, hi=1.0),
        "seed": Param("sampling.seed", "int", lo=0, hi=SV.SEED_MAX),
        "max_new": Param("sampling.max_new", "int", lo=1, hi=SV.MAX_NEW),
    },
    "kvcache": {
        "context": Param("kvcache.context_pick", "int", tuple(KV.CONTEXTS)),
        "tokens": Param("kvcache.context", "int"),  # the calculator's boxes clamp with a notice
        "users": Param("kvcache.users", "int"),
        "card_gb": Param("kvcache.card_gb", "float"),
        "cache": Param("kvcache.cache_dtype", "str", tuple(A.CACHE_DTYPES)),
        "weights": Param("kvcache.weight_dtype", "str", tuple(A.WEIGHT_DTYPES)),
        "measure": Param("kvcache.measure_tokens", "int", tuple(KV.MEASURE_TOKENS)),
    },
}

# Settings a browser view holds (ui/views/browser.py): the server knows them only when a button carried them,
# so the share dialog's link gets them in the browser, from the page store's object named here.
IN_BROWSER: dict[str, tuple[str, tuple[str, ...], str]] = {  # lesson: (store name, params, link token key)
    "sampling": ("sampling.settings", SV.SETTINGS, SV.LINK_KEY),
    "kvcache": ("kvcache.settings", KV.SETTINGS, KV.LINK_KEY),
    "attention": ("attention.chosen", ("layer", "head", "block", "dh"), AV.CHOSEN_TOKEN),
    "tokenization": ("tokenization.settings", ("target", "view", "ids"), "tokenization.link_settings"),
    "block": ("block.settings", ("norm_token", "resid_token", "lens_layer", "lens_pos"), "block.link_settings"),
    "position": ("position.settings", ("m", "pair", "n", "k", "shift", "head", "live_pair", "which"),
                 "position.link_settings"),
    "embeddings": ("embeddings.settings", EV.SETTINGS, EV.LINK_KEY),
}

NOTICES_KEY = "app.share.notices"
PENDING_KEY = "app.share.pending"


def lesson_of(page) -> str | None:
    """The lesson id of a page from st.navigation (the default page's url_path is empty)."""
    path = getattr(page, "url_path", "") or nav.LESSONS[0].id
    return path if path in SHARED else None


def apply(page) -> None:
    """Before the model loads: a link's text and model into session state, its widget values kept
    for `render` (their bounds depend on the model); then the parameters leave the address bar."""
    params = {k: st.query_params.get(k) for k in st.query_params.keys()}
    if getattr(page, "url_path", "") == nav.FINAL.id and "seed" in params:
        class_seed(params.pop("seed"))  # stays in the address: a reload is still the class's quiz
    if set(params) <= {"lang"}:
        return
    shell = {k: v for k, v in params.items() if k in sl.RESERVED}
    view = sl.parse(shell, {}, langs=("it", "en"))
    if view.text is not None:
        st.session_state["app.text"] = view.text[:MAX_CHARS]
    if view.model is not None and view.model != model_name():
        st.session_state["app.model_pending"] = view.model
    st.session_state[PENDING_KEY] = ({k: v for k, v in params.items() if k not in sl.RESERVED}, view.notices)
    for name in params:
        if name != "lang":
            del st.query_params[name]


CLASS_SEED_KEY = "app.class_seed"
CLASS_SEED_MAX = 10**6


def class_seed(raw: str | None) -> None:
    """A final-quiz link's `seed=`: the class's quiz (the same questions, in the same order, for
    everyone who opens it), kept for the session; a malformed one is said on the quiz page."""
    value = (raw or "").strip()
    if value.isdigit() and 0 < int(value) < CLASS_SEED_MAX:
        st.session_state[CLASS_SEED_KEY] = int(value)
    else:
        st.session_state["app.class_seed_bad"] = "".join(c for c in value[:20] if c.isalnum())


def _take_values(page) -> None:
    """Once the model is loaded: the link's widget values, checked against its sizes."""
    pending = st.session_state.pop(PENDING_KEY, None)
    if pending is None:
        return
    query, notices = pending
    lesson = lesson_of(page)
    info = model().info
    sizes = {"layers": info.n_layers, "heads": info.n_heads, "dims": min(info.d_model, 128)}
    view = sl.parse(query, SHARED.get(lesson, {}), sizes=sizes)
    st.session_state.update(view.values)
    if lesson in IN_BROWSER and view.values:  # the browser view takes a link's values once
        st.session_state[IN_BROWSER[lesson][2]] = str(time.time_ns())
    st.session_state[NOTICES_KEY] = (lesson, notices + view.notices)


def notices(page) -> None:
    """On the lesson a link opened: what it asked for and could not have (until the learner moves on)."""
    kept = st.session_state.get(NOTICES_KEY)
    if not kept:
        return
    lesson, items = kept
    if lesson != lesson_of(page):
        del st.session_state[NOTICES_KEY]
        return
    if items:
        names = ", ".join(f"`{name}`" for _, name in items)
        st.warning(t("share.ignored", n=num(len(items)), names=names))


def link(lesson: str) -> tuple[str, bool]:
    """The URL of this view, and whether the learner's text was too long to go in it."""
    name = model_name()
    query, too_long = sl.build(lang(), None if name == DEFAULT_MODEL else name, text(),
                               dict(st.session_state), SHARED[lesson])
    root = (st.context.url or "").rstrip("/")
    head, _, last = root.rpartition("/")
    if last in SHARED or last == nav.FINAL.id:
        root = head
    base = f"{root}/" if lesson == nav.LESSONS[0].id else f"{root}/{lesson}"
    return f"{base}?{urllib.parse.urlencode(query)}", too_long


def _dialog(lesson: str) -> None:
    url, too_long = link(lesson)
    st.caption(t("share.explain"))
    if lesson in IN_BROWSER:
        store, names, _ = IN_BROWSER[lesson]
        browser.view("link", "app.share.link", {"url": url, "store": store, "names": list(names), "labels": {
            "link": t("share.title"), "copy": t("share.copy"), "copied": t("share.copied")}})
    else:
        st.code(url, language=None, wrap_lines=True)
    if too_long:
        st.warning(t("share.too_long", n=num(len(text()))))


def render(page) -> None:
    """Before the page runs: a link's values and notices on top of the lesson, the share button."""
    _take_values(page)
    notices(page)
    control(page)


def control(page) -> None:
    """The sidebar's "share this view" button (lessons only), and its dialog when clicked."""
    lesson = lesson_of(page)
    if lesson is None:
        return
    if st.sidebar.button(t("share.button"), key="app.share", width="stretch"):
        st.dialog(t("share.title"), width="large")(_dialog)(lesson)
