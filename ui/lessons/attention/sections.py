"""The attention lesson's page sections (pages/05_attention.py): the chosen head and what follows
it, the overview, GQA, the masks, the scaling demo, the cost and bertviz; each reads its data from
`compute` and its figures from `figures`, and draws it with Streamlit.
"""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from lib.lessons import attention as att
from lib.lessons.bertviz_view import as_document, head_view_height
from lib.lessons.reference import REFERENCE_MODELS
from lib.model.capture import Capture
from ui.lessons.attention.compute import (FAR_TOKENS, HEATMAP_MAX_TOKENS, KV_TOKENS, STEP_TOKENS, bertviz, cost_spec,
                                          gqa_spec, kv_shared, layer_heads, layer_steps, mask_spec, memory_spec,
                                          overview_spec, scaling, scaling_options)
from ui.lessons.attention.figures import COLORSCALE, FLASH_COLOURS, block_options, esc, token_labels
from ui.shell import core, styles
from ui.shell.core import num, t
from ui.views import browser, follow
from ui.views.export import modebar_config
from ui.views.figures import PALETTE, Spec
from ui.views.live_chart import live_chart


STEP_TABS = ("qkv", "scores", "scale", "mask", "softmax", "sum", "concat")  # the formula's steps, one tab each
OVERVIEW_TOKENS = 16  # each of the L x H thumbnails shows the first tokens only


BERTVIZ_HEAD_TOKENS = 48  # bertviz's HTML grows with layers x heads x T²
BERTVIZ_MODEL_TOKENS = 24
BERTVIZ_MODEL_LAYERS = 4


# The page's section that holds the layer and head sliders (pages/05_attention.py): its browser view
# answers a head move and a layer already sent; a layer not sent yet reruns it with the sections
# below that draw the chosen layer (`take_layer`), bertviz's among them while it is open.
LIVE_SECTION = "attention.live"
BERTVIZ_SECTION = "attention.bertviz"
BERTVIZ_ON = "attention.bertviz_on"  # whether bertviz's views are open (its switch: `bertviz_switch`)
BERTVIZ_SWITCH = "attention.bertviz_switch"


def selected(lm, cap: Capture) -> tuple[int, int, float]:
    """The chosen layer and head (from session state, clamped) and the layer's scale: each section of
    the page reads them in its own fragment, so each one follows the sliders."""
    layer, head = att.clamp_head(cap.n_layers, cap.n_heads, st.session_state.get("attention.layer", cap.n_layers // 2),
                                 st.session_state.get("attention.head", 0))
    return layer, head, att.module_scale(lm, layer)


LAYER_KEY = "attention.view"  # the browser view of the chosen layer's heads


def take_layer() -> None:
    """The view's trigger: a layer the browser has not been sent, with the head chosen there."""
    value = (st.session_state.get(LAYER_KEY) or {}).get("layer")
    if isinstance(value, dict):
        set_chosen(value)
        st.rerun(layer_sections())  # one run: the live view and the sections below get the layer


def layer_sections() -> list[str]:
    """The sections a new layer reruns: the live view, the formula, the mask, flash attention, and
    bertviz while it is open."""
    return [LIVE_SECTION, *STEP_SECTIONS] + ([BERTVIZ_SECTION] if st.session_state.get(BERTVIZ_ON) else [])


def take_bertviz_layer() -> None:
    """The view's trigger for a layer already sent while bertviz's head view draws another: bertviz
    alone reruns (its page is built on the server), for that layer."""
    value = (st.session_state.get(LAYER_KEY) or {}).get("bertviz")
    if _count(value):
        set_chosen({"layer": value})
        st.rerun(BERTVIZ_SECTION)


def _switch_bertviz() -> None:
    """bertviz's switch was pressed: open or close its views, on the layer the browser shows now
    (the page store's, which a layer already sent changed without telling the server)."""
    values = (st.session_state.get(BERTVIZ_SWITCH) or {}).get("click")
    if not isinstance(values, dict):
        return
    st.session_state[BERTVIZ_ON] = not st.session_state.get(BERTVIZ_ON, False)
    set_chosen(values.get("attention.chosen"))


def bertviz_switch() -> bool:
    """bertviz's switch (a toggle button that carries the browser's chosen layer to the server):
    whether its views are open."""
    browser.action(BERTVIZ_SWITCH, t("attention.bertviz.show"), ["attention.chosen"],
                   pressed=bool(st.session_state.get(BERTVIZ_ON)), help=t("attention.bertviz.show_help"),
                   on_click=_switch_bertviz)
    return bool(st.session_state.get(BERTVIZ_ON))


def _count(value) -> bool:
    """A whole number from the browser that can be a layer or a head (not a bool, not negative)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def set_chosen(chosen) -> None:
    """The layer and head the browser chose, as its views send them: {"layer": 3, "head": 1}, the
    head optional. Anything else (no layer, a layer that is not a whole number) changes nothing; a
    head that is not a whole number is left as the server knew it."""
    if not isinstance(chosen, dict) or not _count(chosen.get("layer")):
        return
    st.session_state["attention.layer"] = chosen["layer"]
    if _count(chosen.get("head")):
        st.session_state["attention.head"] = chosen["head"]


def chosen_head(n_layers: int, n_heads: int) -> tuple[int, int]:
    """The layer and head the server knows (a link, an overview click, the last layer sent), brought
    back in range with a warning when a bigger model's choice does not fit this one."""
    asked = (st.session_state.get("attention.layer", n_layers // 2), st.session_state.get("attention.head", 0))
    layer, head = att.clamp_head(n_layers, n_heads, *asked)
    if (layer, head) != asked:
        st.warning(t("attention.clamped", layer=num(layer), head=num(head), n_layers=num(n_layers),
                     n_heads=num(n_heads)))
    st.session_state["attention.layer"], st.session_state["attention.head"] = layer, head
    return layer, head


def heatmap_cut(cap: Capture) -> None:
    """Says that the heatmap draws the first tokens only, when the text is longer."""
    if cap.n_tokens > HEATMAP_MAX_TOKENS:
        st.caption(t("attention.heatmap_cut", n=num(HEATMAP_MAX_TOKENS), total=num(cap.n_tokens)))


def live_data(cap: Capture, layer: int, head: int) -> dict:
    """The view's data: the chosen layer's heads (a coarse choice: another layer is asked for)."""
    lang = core.lang()
    sent = layer_heads(core.model_name(), cap.text, core.cut(cap), layer, lang)
    labels = {"layer": t("attention.layer"), "head": t("attention.head"), "x": t("attention.axis.key"),
              "y": t("attention.axis.query"), "weight": t("attention.axis.weight"), "hover": t("attention.hover"),
              "hidden": t("attention.hover_hidden"), "table": t("chart.as_table"),
              "corner": f"{t('attention.axis.query')} / {t('attention.axis.key')}",
              "pattern": t("attention.pattern.col"), "share": t("attention.pattern.share"),
              "loading": t("attention.view.loading"), "unavailable": t("views.unavailable")}
    return dict(sent, key=browser.data_key(core.model_name(), cap.text, lang, layer, head, st.session_state.get(CHOSEN_TOKEN)),
                text_key=browser.data_key(core.model_name(), cap.text, lang), lang=lang,
                n_layers=cap.n_layers, n_heads=cap.n_heads, tokens=token_labels(cap.tokens, sent["n"]),
                ticks=[esc(x) for x in cap.tokens[:sent["n"]]],
                labels=labels, colorscale=COLORSCALE, config=modebar_config("attention.heatmap"),
                chosen={"layer": layer, "head": head, "token": st.session_state.get(CHOSEN_TOKEN, "")})


CHOSEN_TOKEN = "attention.server_choice"  # changes when the server chooses the head (a link, a click)


def open_clicked_head() -> None:
    """Callback of the overview: a click on a thumbnail opens that head (it only sets state)."""
    event = st.session_state.get("attention.overview")
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    for p in points:
        data = p.get("customdata")
        if data is not None and len(data) >= 2:
            st.session_state["attention.layer"], st.session_state["attention.head"] = int(data[0]), int(data[1])
            st.session_state[CHOSEN_TOKEN] = str(time.time_ns())  # the view takes this head
            for taken in ("attention.block", "attention.dh"):  # a link's, already taken by the flash and scaling views
                st.session_state.pop(taken, None)
            # The click is in the overview's own section: rerun the live view's and the head's sections.
            st.rerun(layer_sections())


# The page's sections further down that draw the chosen head (the formula's steps, the unmasked
# heatmap, flash attention): browser views (static/views/attention_steps.js) that follow the head
# through the page store. Their data is every head of the chosen layer, sent once per (model, text,
# language, layer); the live view's layer trigger reruns them with it (`take_layer`).
STEP_SECTIONS = ("attention.formula", "attention.mask", "attention.flash")


STEP_VIEW = "attention_steps"


def steps_data(cap: Capture, layer: int, head: int, part: str) -> dict:
    """One of the three sections' data (`part`: "formula", "mask" or "flash"): the chosen layer's
    heads, keyed on (model, text, language, layer), never on the head: a head move sends nothing."""
    lang = core.lang()
    sent = layer_steps(core.model_name(), cap.text, core.cut(cap), layer, lang)
    token = st.session_state.get(CHOSEN_TOKEN, "")
    labels = {"head": t("attention.head"), "loading": t("attention.view.loading"),
              "unavailable": t("views.unavailable"), "table": t("chart.as_table")}
    extra: dict = {}
    if part == "formula":
        labels |= {f"tab_{s}": t(f"attention.step.{s}") for s in STEP_TABS}
        labels |= {"tabs": t("attention.formula.header"), "concat_title": t("attention.step.concat_title"),
                   "head_n": t("attention.head_n"), "share": t("attention.step.concat_share")}
        extra = {"tokens": token_labels(cap.tokens, STEP_TOKENS), "palette": PALETTE,
                 "config": modebar_config("attention.step.concat_chart")}
    elif part == "mask":
        labels |= {"x": t("attention.axis.key"), "y": t("attention.axis.query"), "weight": t("attention.axis.weight"),
                   "hover": t("attention.hover"), "title": t("attention.unmasked.title"),
                   "metric": t("attention.unmasked.metric"), "help": t("attention.unmasked.help"),
                   "one_token": t("attention.unmasked.one_token"),
                   "corner": f"{t('attention.axis.query')} / {t('attention.axis.key')}"}
        n = sent["mask"]["n"]
        extra = {"tokens": token_labels(cap.tokens, n), "ticks": [esc(x) for x in cap.tokens[:n]],
                 "colorscale": COLORSCALE, "config": modebar_config("attention.unmasked_chart")}
    else:
        labels |= {k: t(f"attention.flash.{k}") for k in ("block", "step", "todo", "skipped", "done", "current", "x",
                                                           "y", "tile", "max", "sum", "rescale", "diff", "naive_mem",
                                                           "tiled_mem", "mem_caption", "cut")}
        labels["corner"] = f"{t('attention.flash.y')} / {t('attention.flash.x')}"
        n = sent["flash"]["n"]
        asked = st.session_state.get("attention.block")  # a link's tile size, taken once by the view
        asked = asked if isinstance(asked, int) and asked in block_options(n) else None
        extra = {"tokens": token_labels(cap.tokens, n), "total": cap.n_tokens, "far": FAR_TOKENS,
                 "colours": list(FLASH_COLOURS), "config": modebar_config("attention.flash_chart"),
                 "asked_block": asked}
    chosen = {"layer": layer, "head": head, "token": token}
    if part == "flash":
        chosen["block"] = extra["asked_block"] or sent["flash"]["default"]
    return dict(sent[part], part=part, layer=layer, labels=labels, lang=lang, n_heads=cap.n_heads, **extra,
                key=browser.data_key(core.model_name(), cap.text, lang, layer, part, token),
                text_key=browser.data_key(core.model_name(), cap.text, lang, part), chosen=chosen)


def overview(cap: Capture, scores: dict[str, np.ndarray]) -> None:
    n = min(cap.n_tokens, OVERVIEW_TOKENS)
    if cap.n_tokens > n:
        st.caption(t("attention.overview_cut", n=num(n), total=num(cap.n_tokens)))
    spec = overview_spec(core.model_name(), cap.text, core.cut(cap), n, core.lang(), scores)
    st.plotly_chart(Spec(spec), key="attention.overview", on_select=open_clicked_head, selection_mode="points",
                    config={"displayModeBar": False})


def gqa_section(info, cap: Capture | None, config: dict, live_name: str, mark: str = "") -> None:
    """GQA's groups, whether the capture's heads of a group share their keys and values, and what
    that saves. Far below the first screen: computed when the learner reaches it (`mark`: the
    page's inputs, ui.views.follow); the check reads every layer's keys and values. The figure and the
    check are kept per model, text and language, so a full run of the page rebuilds neither."""
    with follow.when_reached("attention.gqa_box", mark) as now:
        if not now:
            return
        lang = core.lang()
        left, right = st.columns([2, 3])
        live_chart(gqa_spec(info.n_heads, info.n_kv_heads, lang), key="attention.gqa_chart", where=left)
        with right:
            if info.n_kv_heads == info.n_heads:
                st.info(t("attention.gqa.none"))
            elif cap is not None:
                same = kv_shared(core.model_name(), cap.text, core.cut(cap), info.n_heads, info.n_kv_heads)
                st.success(t("attention.gqa.shared" if same else "attention.gqa.not_shared",
                             g=num(info.group_size)))
            saving = {v.name: v for v in att.kv_variants(config, KV_TOKENS)}["grouped"].saving
            st.metric(t("attention.gqa.saving"), f"{num(saving, 1)}×")
        styles.table(kv_table(live_name, config, lang), "attention.kv_table")
        st.caption(t("attention.kv.caption", tokens=num(KV_TOKENS)))


def kv_table(live_name: str, config: dict, lang: str) -> pd.DataFrame:
    """The KV cache of each attention variant, for the live model and Llama-3 8B (a fresh frame:
    `config` is the model's config dict, the language picks the labels)."""
    rows = []
    for name, cfg in ((live_name, config), ("Llama-3 8B", REFERENCE_MODELS["Llama-3 8B"])):
        for v, own in att.shown_variants(att.kv_variants(cfg, KV_TOKENS)):
            variant = t(f"attention.kv.{v.name}")
            rows.append({t("attention.kv.model"): name,
                         t("attention.kv.variant"): t("attention.kv.own", variant=variant) if own else variant,
                         t("attention.kv.heads"): num(v.n_kv_heads),
                         t("attention.kv.mb"): num(v.bytes / 1e6, 1),
                         t("attention.kv.saving"): f"{num(v.saving, 1)}×",
                         t("attention.kv.effect"): t(f"attention.kv.effect.{v.name}")})
    return pd.DataFrame(rows)


def mask_kinds() -> None:
    """The three kinds of mask (the same for every text and head: drawn outside the head's fragment)."""
    live_chart(mask_spec(core.lang()), key="attention.mask_chart")


@st.fragment
def scaling_section(d_head: int, mark: str = "") -> None:
    """The scaling demo (the same for every text): computed when the learner reaches it (`mark`:
    the model, ui.views.follow), then drawn in the browser (static/views/attention_steps.js, "scaling")
    from every d_head's results sent once: moving d_head runs nothing here."""
    with follow.when_reached("attention.scaling_box", mark) as now:
        if not now:
            return
        browser.view(STEP_VIEW, "attention.scaling_view", scaling_data(d_head))


def scaling_data(d_head: int) -> dict:
    """The scaling view's data: every d_head's results, the labels, the d_head to start from (the
    model's, or a link's once)."""
    lang = core.lang()
    options = scaling_options(int(d_head))
    token = st.session_state.get(CHOSEN_TOKEN, "")
    asked = st.session_state.get("attention.dh")  # a link's d_head, taken once by the view
    asked = asked if isinstance(asked, int) and asked in [o["dh"] for o in options] else None
    demo = scaling(int(d_head), 0)
    keys = len(demo.weights_raw)
    labels = {k: t(f"attention.scaling.{k}") for k in ("dh", "var_raw", "var_scaled", "max_raw", "max_scaled", "spread",
                                                         "row", "raw", "scaled", "key")}
    labels |= {"table": t("chart.as_table"), "unavailable": t("views.unavailable"),
               "caption": t("attention.scaling.seed", n=num(len(demo.raw)), seed=num(demo.seed),
                            rows=num(len(demo.raw) // keys), keys=num(keys)),
               "from": t("attention.scaling.bin_from"), "to": t("attention.scaling.bin_to"),
               "count": t("attention.scaling.bin_count")}
    return {"part": "scaling", "options": options, "default": int(d_head), "asked_dh": asked, "lang": lang,
            "labels": labels, "palette": PALETTE, "config": modebar_config("attention.scaling_chart"),
            "chosen": {"dh": asked or int(d_head), "token": token}, "layer": 0, "n_heads": 1,
            "key": browser.data_key("scaling", int(d_head), lang, token), "text_key": browser.data_key("scaling", lang)}


def cost_section(info, n_tokens: int | None, live_name: str, mark: str = "") -> None:
    """What attention costs as the text grows, and its memory: computed when the learner reaches it
    (`mark`: the page's inputs, ui.views.follow)."""
    with follow.when_reached("attention.cost_box", mark) as now:
        if not now:
            return
        width = info.n_heads * info.d_head
        lang = core.lang()
        n_local = sum(x == "sliding_attention" for x in info.layer_types)
        win = dict(window=info.sliding_window, n_local=n_local)
        left, right = st.columns(2)
        live_chart(cost_spec(live_name, width, info.n_layers, n_tokens, lang, info.sliding_window, n_local,
                             info.context_length), key="attention.cost_chart", where=left)
        live_chart(memory_spec(info.d_head, lang), key="attention.memory_chart", where=right)
        if n_tokens:
            st.markdown(t("attention.cost.yours_text", n=num(n_tokens),
                          flops=num(att.attention_flops(n_tokens, width, info.n_layers) / 1e6, 1),
                          causal=num(att.attention_flops(n_tokens, width, info.n_layers, causal=True) / 1e6, 1),
                          windowed=num(att.attention_flops(n_tokens, width, info.n_layers, causal=True, **win) / 1e6, 1),
                          n_local=num(n_local), window=num(info.sliding_window or 0),
                          l=num(info.n_layers), d=num(width)))


def bertviz_section(model_name: str, cap: Capture, layer: int) -> None:
    """bertviz's two views, in tabs that know which one is open: only that view's page is built
    and sent (each is a document of its own for the browser to load)."""
    tabs = st.tabs([t("attention.bertviz.head_tab"), t("attention.bertviz.model_tab")], key="attention.bertviz_tab",
                   on_change="rerun")
    if tabs[0].open:
        # The container's key names the layer drawn: the live view (static/views/attention.js) asks
        # for bertviz's rerun when the learner shows another layer it was already sent.
        with tabs[0], st.container(key=f"attention.bertviz_head_{layer}"):
            n = min(cap.n_tokens, BERTVIZ_HEAD_TOKENS)
            st.caption(t("attention.bertviz.head_cap", layer=num(layer), n=num(n), total=num(cap.n_tokens)))
            view = bertviz(model_name, cap.text, core.cut(cap), "head", (layer,), n)
            if not view.offline:
                st.warning(t("bertviz.cdn"))
            st.iframe(as_document(view.html, core.lang(), t("attention.bertviz.head_tab")), height=head_view_height(n))
    if tabs[1].open:
        with tabs[1]:
            default = [layer]
            kept = [c for c in st.session_state.get("attention.bertviz_layers", default) if 0 <= c < cap.n_layers]
            st.session_state["attention.bertviz_layers"] = kept[:BERTVIZ_MODEL_LAYERS] or default
            chosen = st.multiselect(t("attention.bertviz.layers", max=num(BERTVIZ_MODEL_LAYERS)),
                                    options=list(range(cap.n_layers)), max_selections=BERTVIZ_MODEL_LAYERS,
                                    key="attention.bertviz_layers") or default
            n = min(cap.n_tokens, BERTVIZ_MODEL_TOKENS)
            st.caption(t("attention.bertviz.model_cap", n=num(n), total=num(cap.n_tokens), layers=num(len(chosen))))
            view = bertviz(model_name, cap.text, core.cut(cap), "model", tuple(sorted(chosen)), n)
            if not view.offline:
                st.warning(t("bertviz.cdn"))
            st.iframe(as_document(view.html, core.lang(), t("attention.bertviz.model_tab")), height=140 * len(chosen) + 160)
