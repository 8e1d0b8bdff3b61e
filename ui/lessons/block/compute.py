"""The block lesson's cached computations: the attention/MLP split of every block, one layer's MLP
branches and its collapse, the token strings the lens shows, the charts' plotly JSON, the norm's
check against the model's own module and the MLP width's arithmetic. Keyed by plain strings and
numbers: the model never re-runs for a slider.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lib.lessons import block as blk
from lib.lessons.reference import REFERENCE_MODELS
from lib.model.arithmetic import dims
from lib.model.capture import DEFAULT_MAX_TOKENS, Capture
from lib.model.models import LoadedModel
from lib.model.tokens import readable_tokens
from ui.lessons.block import lens_service
from ui.lessons.block.figures import curves_figure, diagram_figure, lens_heatmap
from ui.shell.cache import derived, get_capture, get_model
from ui.shell.core import num, t
from ui.views.live_chart import as_spec


SEED_MODEL = "Llama-3 8B"  # the model whose MLP width seed 001 works out


@derived  # 2 × [L, T, D] floats each: 70 MB at 512 tokens
def get_contributions(model_name: str, text: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> blk.Contributions:
    return blk.contributions(get_model(model_name), get_capture(model_name, text, max_tokens))


@derived
def get_branches(model_name: str, text: str, max_tokens: int, layer: int) -> blk.MlpBranches:
    contrib = get_contributions(model_name, text, max_tokens)
    return blk.mlp_branches(get_model(model_name), get_capture(model_name, text, max_tokens), layer,
                            contrib.attn_out[layer])


@derived
def get_collapse(model_name: str, text: str, max_tokens: int, layer: int) -> blk.Collapse:
    branches = get_branches(model_name, text, max_tokens, layer)
    return blk.mlp_collapse(get_model(model_name), layer, branches.normed)


@derived
def token_strings(model_name: str, ids: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(readable_tokens(get_model(model_name).tokenizer, list(ids)))


@derived
def diagram_spec(_lm: LoadedModel, model_key: str, n_tokens: int, lang: str) -> dict:
    """The diagram's plotly JSON, built once per model, text length and language (its dozens of
    shapes and labels, built through plotly's object model, were a third of the lesson's first run)."""
    info = _lm.info
    labels = {"norm": t(f"arch.{info.norm}"), "attention": t("block.diagram.attention"),
              "mlp": t("block.diagram.mlp", act=t(f"arch.{info.activation}")), "add": t("block.diagram.add"),
              "in": t("block.diagram.in"), "out": t("block.diagram.out", layers=num(info.n_layers)),
              "residual": t("block.diagram.residual")}
    return diagram_figure(blk.block_steps(_lm, n_tokens), labels, num).to_dict()


def norm_checks(lm: LoadedModel, cap: Capture, layer: int) -> np.ndarray:
    """[T] the largest gap between our norm and the model's own module, token by token."""
    module = blk.block_norm(lm, layer, "attn")
    params = blk.norm_params(module, lm.info.norm)
    theirs = blk.module_output(lm, module, cap.resid[layer])  # [T, D]
    ours = np.stack([blk.norm_steps(x, params).out for x in cap.resid[layer]])
    return np.abs(theirs - ours).max(axis=-1)


@derived
def curves_spec(own: str, lang: str) -> dict:
    """The activation curves' plotly JSON, built once per activation and language."""
    labels = {k: t(f"block.act.{k}") for k in blk.ACTIVATIONS} | {"own": t("block.act.own"), "y": t("block.act.y")}
    return curves_figure(blk.activation_curves(), own, labels).to_dict()


def is_gated(lm: LoadedModel) -> bool:
    """True when the MLP has a gate branch (SwiGLU), False for a plain one (GPT-2's GELU)."""
    return lm.adapter.mlp_branches(lm.adapter.blocks(lm.model)[0])[0] is not None


def own_activation(lm: LoadedModel) -> str:
    _, _, act = lm.adapter.mlp_branches(lm.adapter.blocks(lm.model)[0])
    return blk.which_activation(act)


def dff_table(lm: LoadedModel) -> tuple[pd.DataFrame, dict[str, blk.DffArithmetic]]:
    info = lm.info
    ref = dims(REFERENCE_MODELS[SEED_MODEL])
    seed = blk.dff_arithmetic(ref.D, ref.F, blk.attention_params(ref.D, ref.H, ref.Hkv, ref.Dh))
    live = blk.dff_arithmetic(info.d_model, info.d_mlp,
                              blk.attention_params(info.d_model, info.n_heads, info.n_kv_heads, info.d_head))
    gated = is_gated(lm)
    pct = lambda x: f"{num(100 * x, 1)}%" if x is not None else "—"  # noqa: E731
    rows = [("block.dff.row.d", lambda a, g: num(a.d)),
            ("block.dff.row.classic", lambda a, g: num(a.classic)),
            ("block.dff.row.eight_thirds", lambda a, g: num(a.eight_thirds, 2)),
            ("block.dff.row.scaled", lambda a, g: num(a.scaled, 2)),
            ("block.dff.row.rounded", lambda a, g: num(a.rounded)),
            ("block.dff.row.actual", lambda a, g: num(a.actual)),
            ("block.dff.row.share_eight", lambda a, g: pct(a.mlp_share(a.eight_thirds, True))),
            ("block.dff.row.share_actual", lambda a, g: pct(a.mlp_share(a.actual, g)))]
    table = pd.DataFrame({t("block.dff.col.step"): [t(k) for k, _ in rows],
                          SEED_MODEL: [f(seed, True) for _, f in rows],
                          t("block.dff.col.live"): [f(live, gated) for _, f in rows]})
    return table, {"seed": seed, "live": live}


@derived
def lens_heatmap_spec(model_name: str, text: str, max_tokens: int, lang: str) -> dict:
    """The lens grid's plotly JSON, built once per text and language."""
    lens, cap = lens_service.result(model_name, text, max_tokens)[0], get_capture(model_name, text, max_tokens)
    words = [list(token_strings(model_name, tuple(int(x) for x in lens.top_ids[l, :, 0])))
             for l in range(lens.n_layers + 1)]
    labels = {"hover": t("block.lens.hover"), "color": t("block.lens.color"), "x": t("block.resid.x"),
              "y": t("block.resid.y"), "title": t("block.lens.title")}
    return as_spec(lens_heatmap(lens, words, [cap.tokens[int(i)] for i in lens.positions], labels, num))
