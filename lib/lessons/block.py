"""One transformer block taken apart: the norms, the residual stream, the MLP and its width.

Everything works on a `lib.model.capture.Capture` and, where a weight is needed, on the model's own
modules (found through the adapter, called under `loaded.lock` and `torch.inference_mode()`),
and returns its work as data:

- `rms_norm`, `layer_norm`, `norm_steps`: the two normalisations as pure numpy functions, and
  every intermediate of one of them on a real residual vector (mean, RMS, x / RMS, gain g).
- `block_steps`: the block in its exact order for the loaded family (pre-norm in both: norm,
  attention, add, norm, MLP, add), with the module names and the live tensor shapes.
- `residual_norms`, `contributions`: the length of the residual stream at every layer and token,
  and what each block's attention and MLP wrote on it. The capture holds the residual before and
  after each block, so resid[l+1] - resid[l] is attention + MLP; the attention part is
  recomputed from the captured weights and values with the model's own output projection
  (`attention_outputs`), and the MLP part is the rest. Recomputing (instead of hooking one more
  module in lib/model/capture.py) keeps the shared capture contract unchanged and small; the tests
  prove the split by running the model's own MLP on resid[l] + attention and finding the rest.
- `linear_collapse`, `affine_map`: two linear layers in a row are one linear layer, shown with
  numbers on the live model's up and down projections.
- `activation_curves`: ReLU, GELU (exact and tanh), SiLU.
- `mlp_branches`, `top_neurons`: SwiGLU's gate and up branches recomputed for one layer (their
  product equals the captured MLP activation), and the neurons that fire hardest.
- `dff_arithmetic`: how a gated MLP's width is chosen (8/3·d, times 1.3, rounded up to a multiple
  of 1024: 14336 for d = 4096), applied to any width.

Deliberately left out: QK-norm (the attention lesson's territory), training (why pre-norm trains
better is told, not simulated), dropout, Gemma's (1 + g) RMSNorm, and any streamlit call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from lib.model.capture import Capture
from lib.model.models import LoadedModel

# --------------------------------------------------------------------------- the two norms


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm over the last axis: x / sqrt(mean(x²) + eps) · g.

    No mean is subtracted: the vector is only rescaled, never shifted.
    Example: rms_norm(np.array([3.0, 4.0]), np.ones(2), 0.0) -> [0.8485, 1.1314]  (RMS = 3.5355)
    """
    x = np.asarray(x, dtype=np.float64)
    rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return x / rms * np.asarray(weight, dtype=np.float64)


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, eps: float) -> np.ndarray:
    """LayerNorm over the last axis: (x - mean) / sqrt(var + eps) · g + b (biased variance, as torch).

    Example: layer_norm(np.array([3.0, 4.0]), np.ones(2), None, 0.0) -> [-1.0, 1.0]
    """
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    out = (x - mean) / np.sqrt(var + eps) * np.asarray(weight, dtype=np.float64)
    return out + np.asarray(bias, dtype=np.float64) if bias is not None else out


@dataclass(frozen=True)
class NormParams:
    """A norm module's learned numbers. `kind` is "rmsnorm" or "layernorm"."""

    kind: str
    weight: np.ndarray  # [D] the gain g
    bias: np.ndarray | None  # [D] LayerNorm's shift b; None for RMSNorm
    eps: float


def norm_params(module: torch.nn.Module, kind: str) -> NormParams:
    """Read g, b and eps from a norm module (Llama's RMSNorm keeps eps as `variance_epsilon`).

    Example: norm_params(lm.model.model.norm, "rmsnorm").weight.shape -> (576,)
    """
    eps = getattr(module, "variance_epsilon", None)
    if eps is None:
        eps = getattr(module, "eps")
    bias = getattr(module, "bias", None)
    weight = module.weight.detach().float().numpy().copy()
    if kind == "rmsnorm":
        # The gain the module really applies, read by running it on a vector of ones (its RMS is
        # sqrt(1 + eps)): Gemma stores w and multiplies by (1 + w), Llama stores the gain itself.
        with torch.inference_mode():
            ones = torch.ones((1, weight.shape[0]), dtype=module.weight.dtype)
            weight = (module(ones).double()[0] * np.sqrt(1.0 + float(eps))).numpy().astype(np.float32)
    return NormParams(kind=kind, weight=weight,
                      bias=None if bias is None else bias.detach().float().numpy().copy(), eps=float(eps))


def apply_norm(params: NormParams, x: np.ndarray) -> np.ndarray:
    """Our numpy version of the module `params` was read from.

    Example: apply_norm(norm_params(ln_f, "layernorm"), x) equals ln_f(x) to float precision
    """
    if params.kind == "rmsnorm":
        return rms_norm(x, params.weight, params.eps)
    return layer_norm(x, params.weight, params.bias, params.eps)


@dataclass(frozen=True)
class NormSteps:
    """Every intermediate of normalising one vector x [D] (float64)."""

    kind: str
    x: np.ndarray  # [D] the input
    mean: float  # what LayerNorm subtracts and RMSNorm does not
    rms: float  # sqrt(mean(x²) + eps)
    std: float  # sqrt(var(x) + eps), LayerNorm's divisor
    eps: float
    scaled: np.ndarray  # [D] x / rms: length sqrt(D) before the gain
    weight: np.ndarray  # [D] g
    out: np.ndarray  # [D] what this model's norm produces (RMSNorm or LayerNorm)
    rms_out: np.ndarray  # [D] RMSNorm with the same g
    layer_out: np.ndarray  # [D] LayerNorm with the same g (and b, if the model has one)


def norm_steps(x: np.ndarray, params: NormParams) -> NormSteps:
    """Normalise x [D] both ways with the same gain, keeping the intermediates.

    Example: norm_steps(np.array([3.0, 4.0]), NormParams("rmsnorm", np.ones(2), None, 0.0)).rms
             -> 3.5355  (sqrt((9 + 16) / 2))
    """
    x = np.asarray(x, dtype=np.float64)
    mean = float(x.mean())
    rms = math.sqrt(float(np.mean(x * x)) + params.eps)
    std = math.sqrt(float(np.mean((x - mean) ** 2)) + params.eps)
    rms_out = rms_norm(x, params.weight, params.eps)
    layer_out = layer_norm(x, params.weight, params.bias, params.eps)
    return NormSteps(kind=params.kind, x=x, mean=mean, rms=rms, std=std, eps=params.eps, scaled=x / rms,
                     weight=params.weight.astype(np.float64), out=rms_out if params.kind == "rmsnorm" else layer_out,
                     rms_out=rms_out, layer_out=layer_out)


def block(loaded: LoadedModel, layer: int):
    """The block module of `layer` (checked)."""
    blocks = loaded.adapter.blocks(loaded.model)
    if not 0 <= layer < len(blocks):
        raise IndexError(f"layer {layer} outside 0..{len(blocks) - 1}")
    return blocks[layer]


def block_norm(loaded: LoadedModel, layer: int, which: str) -> torch.nn.Module:
    """The norm before the attention (`which="attn"`) or before the MLP (`"mlp"`) of a block,
    or the final norm before the unembedding (`"final"`, any layer).

    Example: block_norm(lm, 3, "attn") -> lm.model.model.layers[3].input_layernorm
    """
    if which == "final":
        return loaded.adapter.final_norm(loaded.model)
    attn_norm, mlp_norm = loaded.adapter.norms(block(loaded, layer))
    return {"attn": attn_norm, "mlp": mlp_norm}[which]


def module_output(loaded: LoadedModel, module: Callable, x: np.ndarray) -> np.ndarray:
    """Run one of the model's modules on x, under its lock and without gradients."""
    with loaded.lock, torch.inference_mode():
        return module(torch.from_numpy(np.array(x, dtype=np.float32))).float().numpy()


# --------------------------------------------------------------------------- the block, in order


@dataclass(frozen=True)
class Step:
    """One operation of the forward pass. `kind`: embed, norm, attention, add, mlp, final_norm,
    unembed. `module` is the module's dotted name in the model ("" for the additions), with the
    layer number replaced by "{l}"; shapes use the live T, D, H, Hkv, Dh, F, V."""

    kind: str
    module: str
    shape_in: tuple[int, ...]
    shape_out: tuple[int, ...]
    inner: tuple[tuple[str, tuple[int, ...]], ...] = ()  # named intermediate shapes


def _names(model) -> dict[int, str]:
    return {id(m): name for name, m in model.named_modules()}


def block_steps(loaded: LoadedModel, n_tokens: int) -> list[Step]:
    """The forward pass in its exact order: embed, one block (the same for every layer), final
    norm, unembedding. The block is pre-norm in every family: each sub-layer reads a normalised
    copy of the residual and adds its result back to the un-normalised one. A family with
    post-norms (Gemma 3's "sandwich") also normalises each sub-layer's output before the add.

    Example: [s.kind for s in block_steps(lm, 5)] ->
             [embed, norm, attention, add, norm, mlp, add, final_norm, unembed]
    Example (post-norms): [embed, norm, attention, norm, add, norm, mlp, norm, add, final_norm, unembed]
    """
    ad, info, model = loaded.adapter, loaded.info, loaded.model
    names = _names(model)
    b0 = ad.blocks(model)[0]
    prefix = names[id(b0)]
    generic = prefix[: prefix.rfind(".") + 1] + "{l}" if "." in prefix else "{l}"

    def name(module) -> str:
        full = names.get(id(module), "")
        return generic + full[len(prefix):] if full.startswith(prefix) else full

    T, D, H, Hkv, Dh, F, V = (n_tokens, info.d_model, info.n_heads, info.n_kv_heads, info.d_head, info.d_mlp,
                              info.vocab_size)
    attn_norm, mlp_norm = ad.norms(b0)
    gate, up, _ = ad.mlp_branches(b0)
    attention = (("q", (H, T, Dh)), ("k", (Hkv, T, Dh)), ("v", (Hkv, T, Dh)), ("scores", (H, T, T)),
                 ("heads", (T, H * Dh)))
    mlp_inner = tuple((n, (T, F)) for n, m in (("gate", gate), ("up", up)) if m is not None) + (("act", (T, F)),)
    post = ad.post_norms(b0) if ad.post_norms is not None else (None, None)
    after = [[Step("norm", name(p), (T, D), (T, D))] if p is not None else [] for p in post]
    return [
        Step("embed", name(ad.embed(model)), (T,), (T, D)),
        Step("norm", name(attn_norm), (T, D), (T, D)),
        Step("attention", name(ad.attention(b0)), (T, D), (T, D), attention),
        *after[0],
        Step("add", "", (T, D), (T, D)),
        Step("norm", name(mlp_norm), (T, D), (T, D)),
        Step("mlp", name(ad.mlp_out(b0)).rsplit(".", 1)[0], (T, D), (T, D), mlp_inner),
        *after[1],
        Step("add", "", (T, D), (T, D)),
        Step("final_norm", name(ad.final_norm(model)), (T, D), (T, D)),
        Step("unembed", name(ad.unembed(model)), (T, D), (T, V)),
    ]


# --------------------------------------------------------------------------- the residual stream


def residual_norms(resid: np.ndarray) -> np.ndarray:
    """[L+1, T] the length of the residual vector at the input of each block (and at the end).

    Example: residual_norms(np.ones((2, 3, 4))) -> [[2, 2, 2], [2, 2, 2]]
    """
    return np.linalg.norm(np.asarray(resid, dtype=np.float64), axis=-1)


def attention_outputs(loaded: LoadedModel, cap: Capture) -> np.ndarray:
    """[L, T, D] what each block's attention added to the residual stream.

    Recomputed from the capture: each head's weights times its values, the heads side by side
    (head-major, as the model concatenates them), then the model's own output projection.
    Example: attention_outputs(lm, cap).shape -> (30, T, 576)
    """
    L, T = cap.n_layers, cap.n_tokens
    group = cap.n_heads // cap.n_kv_heads
    out = []
    with loaded.lock, torch.inference_mode():
        for layer in range(L):
            # One layer's weights at a time (`cap.attn` recomputes every layer on each access).
            w = torch.from_numpy(np.array(cap.attn_layer(layer)))  # [H, T, T]
            v = torch.from_numpy(np.array(cap.v[layer])).repeat_interleave(group, dim=0)  # [H, T, Dh]
            heads = (w @ v).transpose(0, 1).reshape(T, -1)  # [T, H*Dh]
            block = loaded.adapter.blocks(loaded.model)[layer]
            written = loaded.adapter.o_proj(block)(heads)
            if loaded.adapter.post_norms is not None:  # Gemma's sandwich: a norm after the attention, too
                written = loaded.adapter.post_norms(block)[0](written)
            out.append(written.float().numpy())
    return np.stack(out)


@dataclass(frozen=True)
class Contributions:
    """What every block wrote on the residual stream. Norms are Euclidean lengths (float64)."""

    resid_norm: np.ndarray  # [L+1, T]
    attn_out: np.ndarray  # [L, T, D] the attention's output, added first
    mlp_out: np.ndarray  # [L, T, D] the MLP's output: resid[l+1] - resid[l] - attn_out[l]
    attn_norm: np.ndarray  # [L, T]
    mlp_norm: np.ndarray  # [L, T]
    delta_norm: np.ndarray  # [L, T] length of the whole block's update


def contributions(loaded: LoadedModel, cap: Capture) -> Contributions:
    """Split each block's update resid[l+1] - resid[l] into its attention and MLP parts.

    Example: c = contributions(lm, cap); c.attn_out[3] + c.mlp_out[3] == cap.resid[4] - cap.resid[3]
    """
    resid = np.asarray(cap.resid, dtype=np.float32)
    attn = attention_outputs(loaded, cap)
    delta = resid[1:] - resid[:-1]  # [L, T, D]
    mlp = delta - attn
    norm = lambda a: np.linalg.norm(a.astype(np.float64), axis=-1)  # noqa: E731
    return Contributions(resid_norm=residual_norms(resid), attn_out=attn, mlp_out=mlp, attn_norm=norm(attn),
                         mlp_norm=norm(mlp), delta_norm=norm(delta))


# --------------------------------------------------------------------------- why a non-linearity


def affine_map(loaded: LoadedModel, module: Callable, d_in: int) -> tuple[np.ndarray, np.ndarray]:
    """A linear (or affine) module as numbers: (A [d_in, d_out], b [d_out]) with module(x) = x A + b.

    Read by running the module on the identity and on zero, so Linear ([out, in] weights) and
    GPT-2's Conv1D ([in, out]) need no special case.
    Example: affine_map(lm, up_proj, 576)[0].shape -> (576, 1536)
    """
    with loaded.lock, torch.inference_mode():
        dtype = next(module.parameters()).dtype
        b = module(torch.zeros((1, d_in), dtype=dtype)).double().numpy()[0]
        a = module(torch.eye(d_in, dtype=dtype)).double().numpy() - b
    return a, b


@dataclass(frozen=True)
class Collapse:
    """Two affine layers applied one after the other, and the single layer they amount to."""

    two_steps: np.ndarray  # [n, d_out] W2(W1 x + b1) + b2
    one_step: np.ndarray  # [n, d_out] (W1 W2) x + (b1 W2 + b2): one matrix
    max_diff: float  # between the two: rounding error only
    with_act: np.ndarray  # [n, d_out] W2 act(W1 x + b1) + b2
    act_diff: float  # between with_act and one_step: no single matrix does this
    scale: float  # the largest |two_steps| entry, to read the differences against
    params_two: int  # numbers in W1 and W2 (and b1, b2 when they are not all zero)
    params_one: int  # numbers in the collapsed matrix (and its bias, when not all zero)


def linear_collapse(x: np.ndarray, a1: np.ndarray, b1: np.ndarray, a2: np.ndarray, b2: np.ndarray,
                    act: Callable[[np.ndarray], np.ndarray]) -> Collapse:
    """Show W2(W1x) = (W2W1)x with numbers (row-vector convention: x A), and that `act` breaks it.

    Example: with a1 = [[2.]], a2 = [[3.]], zero biases, x = [[1.], [-1.]] and ReLU:
             two_steps = [[6.], [-6.]] = one_step; with_act = [[6.], [0.]]
    """
    x, a1, b1, a2, b2 = (np.asarray(m, dtype=np.float64) for m in (x, a1, b1, a2, b2))
    hidden = x @ a1 + b1  # [n, F]
    two = hidden @ a2 + b2
    a, b = a1 @ a2, b1 @ a2 + b2  # [D, D], [D]: the one matrix
    one = x @ a + b
    with_act = act(hidden) @ a2 + b2
    biases = lambda v: v.size if np.any(v) else 0  # noqa: E731  (Llama's projections have none)
    return Collapse(two_steps=two, one_step=one, max_diff=float(np.abs(two - one).max()), with_act=with_act,
                    act_diff=float(np.abs(with_act - one).max()), scale=float(np.abs(two).max()),
                    params_two=a1.size + biases(b1) + a2.size + biases(b2), params_one=a.size + biases(b))


def mlp_collapse(loaded: LoadedModel, layer: int, x: np.ndarray) -> Collapse:
    """The collapse on the live model: the up (GPT-2: c_fc) and down projections of `layer` with
    nothing between them, applied to x [n, D] (the block's normalised inputs); `act` is the
    model's own activation function.

    Example: mlp_collapse(lm, 5, x).max_diff -> ~1e-13 (float64 rounding)
    """
    _, up, act = loaded.adapter.mlp_branches(block(loaded, layer))
    down = loaded.adapter.mlp_out(block(loaded, layer))
    a1, b1 = affine_map(loaded, up, loaded.info.d_model)
    a2, b2 = affine_map(loaded, down, a1.shape[1])

    def model_act(h: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return act(torch.from_numpy(h)).numpy()

    return linear_collapse(x, a1, b1, a2, b2, model_act)


ACTIVATIONS: tuple[str, ...] = ("relu", "gelu", "gelu_tanh", "silu")


def activation_curves(lo: float = -4.0, hi: float = 4.0, n: int = 161) -> dict[str, np.ndarray]:
    """The activation functions on an even grid: "x" and one array per name in ACTIVATIONS.

    relu = max(0, x); gelu = x·Φ(x) (Φ: the normal distribution's CDF); gelu_tanh is its tanh
    approximation (GPT-2's "gelu_new"); silu = x·σ(x), the "Swish" in SwiGLU.
    Example: activation_curves(-1, 1, 3)["relu"] -> [0, 0, 1]
    """
    x = torch.linspace(lo, hi, n, dtype=torch.float64)
    fns = {"relu": torch.relu, "gelu": torch.nn.functional.gelu,
           "gelu_tanh": lambda v: torch.nn.functional.gelu(v, approximate="tanh"), "silu": torch.nn.functional.silu}
    return {"x": x.numpy(), **{k: fns[k](x).numpy() for k in ACTIVATIONS}}


def which_activation(act: Callable) -> str:
    """The name in ACTIVATIONS whose curve the model's activation module follows, read by running
    it on the grid (no look-up of config names such as "gelu_new" or "silu").

    Example: which_activation(torch.nn.SiLU()) -> "silu"
    """
    curves = activation_curves()
    with torch.inference_mode():
        y = act(torch.from_numpy(curves["x"])).double().numpy()
    return min(ACTIVATIONS, key=lambda k: float(np.abs(y - curves[k]).max()))


# --------------------------------------------------------------------------- SwiGLU on the live model


@dataclass(frozen=True)
class MlpBranches:
    """One layer's MLP recomputed for every token. For GPT-2, `gate` is None and act = act(up)."""

    layer: int
    normed: np.ndarray  # [T, D] the MLP's input: norm(resid[l] + attention)
    gate: np.ndarray | None  # [T, F] gate_proj(x), before the activation
    up: np.ndarray  # [T, F] up_proj(x) (GPT-2: c_fc(x))
    act: np.ndarray  # [T, F] act(gate) (GPT-2: act(up))
    product: np.ndarray  # [T, F] act(gate) · up: what the down projection reads (GPT-2: act(up))
    out: np.ndarray  # [T, D] the down projection: the MLP's contribution to the residual
    max_diff_capture: float  # |product - capture.mlp[layer]|, the check that this is the model's own


def mlp_branches(loaded: LoadedModel, cap: Capture, layer: int, attn_out: np.ndarray) -> MlpBranches:
    """Recompute the MLP of `layer` branch by branch with the model's modules.

    `attn_out` [T, D] is that layer's attention output (from `attention_outputs`).
    Example: mlp_branches(lm, cap, 5, c.attn_out[5]).max_diff_capture -> ~1e-6
    """
    b = block(loaded, layer)
    gate_m, up_m, act_fn = loaded.adapter.mlp_branches(b)
    _, norm = loaded.adapter.norms(b)
    down = loaded.adapter.mlp_out(b)
    mid = torch.from_numpy(np.asarray(cap.resid[layer], dtype=np.float32) + np.asarray(attn_out, dtype=np.float32))
    with loaded.lock, torch.inference_mode():
        x = norm(mid)  # [T, D]
        up = up_m(x)  # [T, F]
        gate = gate_m(x) if gate_m is not None else None
        act = act_fn(gate if gate is not None else up)
        product = act * up if gate is not None else act
        out = down(product)  # [T, D]
    product_np = product.float().numpy()
    return MlpBranches(layer=layer, normed=x.float().numpy(), gate=None if gate is None else gate.float().numpy(),
                       up=up.float().numpy(), act=act.float().numpy(), product=product_np, out=out.float().numpy(),
                       max_diff_capture=float(np.abs(product_np - cap.mlp[layer]).max()))


@dataclass(frozen=True)
class Neuron:
    """One MLP neuron (a column of F) and where it fires hardest among the tokens looked at."""

    index: int
    value: float  # the activation with the largest magnitude, sign kept
    position: int  # the token where that happens


def top_neurons(mlp: np.ndarray, k: int = 10, positions: np.ndarray | None = None) -> list[Neuron]:
    """The k neurons with the largest |activation| over the tokens (all, or only `positions`).

    mlp: [T, F], one layer of `Capture.mlp`. Ties keep the lower index.
    Example: top_neurons(np.array([[0., -5., 1.], [2., 0., 0.]]), 2)
             -> [Neuron(1, -5.0, 0), Neuron(0, 2.0, 1)]
    """
    mlp = np.asarray(mlp, dtype=np.float64)
    pos = np.arange(mlp.shape[0]) if positions is None else np.asarray(positions, dtype=np.int64)
    if pos.size == 0:
        return []
    sub = np.abs(mlp[pos])  # [P, F]
    where = sub.argmax(axis=0)  # [F] the row of each neuron's peak
    peak = sub[where, np.arange(sub.shape[1])]
    order = np.argsort(-peak, kind="stable")[:k]
    return [Neuron(index=int(f), value=float(mlp[pos[where[f]], f]), position=int(pos[where[f]])) for f in order]


# --------------------------------------------------------------------------- how wide the MLP is


@dataclass(frozen=True)
class DffArithmetic:
    """The width of a gated MLP worked out step by step, next to the width a model really uses."""

    d: int
    classic: int  # 4·d: the two-matrix MLP of GPT-2 and the 2017 paper
    eight_thirds: float  # 8/3·d: three matrices with the parameters of the classic two
    scaled: float  # eight_thirds · multiplier
    multiplier: float
    multiple: int
    rounded: int  # scaled rounded up to a multiple of `multiple`
    actual: int | None  # the loaded model's F (None when only the recipe is asked for)
    attn_params: int | None  # one layer's attention parameters (to compare the MLP against)

    def mlp_params(self, f: float, gated: bool = True) -> float:
        """Parameters of an MLP of width f: 3·d·f gated, 2·d·f classic (biases left out)."""
        return (3 if gated else 2) * self.d * f

    def mlp_share(self, f: float, gated: bool = True) -> float | None:
        """The MLP's share of one layer's matrices (attention + MLP), or None without attention."""
        if self.attn_params is None:
            return None
        m = self.mlp_params(f, gated)
        return m / (m + self.attn_params)


def dff_arithmetic(d: int, actual: int | None = None, attn_params: int | None = None,
                   multiplier: float = 1.3, multiple: int = 1024) -> DffArithmetic:
    """The recipe of Llama-3's MLP width applied to a model width d.

    A classic MLP has 2 matrices of d·4d; a gated one has 3, so at equal cost its width drops to
    2/3 of 4d = 8/3·d. Llama-3 then widens it by 1.3 and rounds up to a multiple of 1024 (its
    reference code rounds up; for d = 4096 up and nearest agree).
    Example: dff_arithmetic(4096).rounded -> 14336   (10922.7 -> 14199.5 -> 14 · 1024)
    """
    if d <= 0 or multiple <= 0:
        raise ValueError("d and multiple must be positive")
    eight = 8 * d / 3
    scaled = eight * multiplier
    rounded = multiple * math.ceil(scaled / multiple - 1e-9)
    return DffArithmetic(d=d, classic=4 * d, eight_thirds=eight, scaled=scaled, multiplier=multiplier,
                         multiple=multiple, rounded=rounded, actual=actual, attn_params=attn_params)


def attention_params(d: int, n_heads: int, n_kv_heads: int, d_head: int) -> int:
    """One layer's attention matrices: q and o of d·H·Dh each, k and v of d·Hkv·Dh each.

    Example: attention_params(4096, 32, 8, 128) -> 41,943,040 (Llama-3 8B)
    """
    return 2 * d * n_heads * d_head + 2 * d * n_kv_heads * d_head



def dff_verdict(a: DffArithmetic, gated: bool = True, slack: int = 256) -> str:
    """Which recipe the model's actual width follows.

    A plain (not gated) MLP: "classic" when F = 4·d (GPT-2), else "other". A gated one: "recipe"
    for 8/3·d × multiplier rounded up (Llama-3); "eight_thirds" for 8/3·d itself, or rounded up by
    less than `slack` (Llama-2 7B: 10922.7 -> 11008); else "other". The gate matters: for d = 768
    the Llama-3 recipe also lands on 3072 = 4·d, by coincidence.
    Example: dff_verdict(dff_arithmetic(576, 1536)) -> "eight_thirds"
    """
    if a.actual is None:
        return "other"
    if not gated:
        return "classic" if a.actual == a.classic else "other"
    if a.actual == a.rounded:
        return "recipe"
    if 0 <= a.actual - a.eight_thirds < slack or a.actual == round(a.eight_thirds):
        return "eight_thirds"
    return "other"
