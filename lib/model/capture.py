"""One forward run of the live model with hooks, returned as one immutable `Capture`.

This is the only module that touches PyTorch hooks. Hooks are global state on a model that every
browser session shares, and a hook registered by one thread fires in another thread's forward
pass; so `_hooked` registers them inside a context manager, under the model's lock, and removes
them in `finally`, also when the forward pass raises.

What a capture gives (batch dimension dropped, float32 numpy arrays, read-only):
  token_ids [T], tokens (readable strings), offsets [T, 2] into the text,
  embeddings [T, D] (input to the first block: token rows, plus learned positions for GPT-2),
  q_pre [L, H, T, Dh], k_pre [L, Hkv, T, Dh] (projections, before RoPE),
  q [L, H, T, Dh], k [L, Hkv, T, Dh] (after RoPE: what the dot product really sees),
  v [L, Hkv, T, Dh], attn [L, H, T, T], resid [L+1, T, D] (input of each block, then the last
  block's output, before the final norm), mlp [L, T, F] (input of the MLP's down projection),
  logits [T, V].

What it stores and what it recomputes. A capture is kept in a cache shared by a whole class, so it
stores only what cannot be derived cheaply: ids, offsets, q_pre, k_pre, v, the RoPE angles (cos,
sin), resid and mlp. The rest is computed on each access, with the model's own operations:
q and k rotate q_pre and k_pre; attention is softmax(q·kᵀ·scale + causal mask) per layer, with the
model's own scale (and sliding window where a config has one); logits are the final norm and the
unembedding applied to resid[-1]. At 512 tokens of SmolLM2 that is 240 MB instead of 620 MB: the
[L, H, T, T] attention alone would be 280 MB and the [T, V] logits 100 MB. Tests hold the
recomputed values to the model's own (`output_attentions`, a plain forward's logits).
`nbytes` is what a capture holds, for the cache's byte budget.

RoPE is applied inside a function, not a module, so no hook sees the rotated q and k. We hook the
rotary module's (cos, sin) and the projections, and rotate them here with the same half-split
formula Hugging Face's Llama uses (`lib.lessons.rope.apply_rotary`, the one implementation); tests prove
the result reproduces the model's own attention.

Local and global layers (Gemma 3). The rotary module runs once per layer type, each with its own
base; the capture keeps both angle tables (`rope` for the global layers, `rope_local` for the
sliding ones), marks which layers are local (`local`), and masks keys beyond the window on those
layers only. q and k are captured after Gemma's q/k RMSNorm, which is what RoPE rotates.
Deliberately left out: batches, generation (the sampling lesson owns it), gradients.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Iterator

import numpy as np
import torch

from lib.lessons.rope import apply_rotary
from lib.model.models import LoadedModel
from lib.model.tokens import readable_tokens

DEFAULT_MAX_TOKENS = 512
MAX_WINDOW_TOKENS = 2 * DEFAULT_MAX_TOKENS  # the most a capture reads to show a sliding window


class EmptyTextError(ValueError):
    """The text is empty or only whitespace: the page asks for some text instead."""


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Capture:
    """Everything one forward run computed. Arrays are read-only; see the module docstring."""

    model_name: str
    text: str
    token_ids: np.ndarray
    tokens: tuple[str, ...]
    offsets: np.ndarray
    q_pre: np.ndarray  # [L, H, T, Dh]
    k_pre: np.ndarray  # [L, Hkv, T, Dh]
    v: np.ndarray  # [L, Hkv, T, Dh]
    resid: np.ndarray  # [L+1, T, D]
    mlp: np.ndarray  # [L, T, F]
    truncated: bool  # the text had more than max_tokens tokens and was cut
    n_tokens_total: int  # tokens in the whole text, before any cut
    rope: tuple[np.ndarray, np.ndarray] | None = None  # (cos, sin) [T, Dh] each; None: no RoPE
    scales: tuple[float, ...] = ()  # per layer, the attention's score scale (1/sqrt(Dh) usually)
    window: int | None = None  # sliding-window width, where the config has one
    # Per layer, whether it is a local (sliding-window) layer; empty: every layer alike (the window,
    # if any, applies to all of them, as in Mistral).
    local: tuple[bool, ...] = ()
    rope_local: tuple[np.ndarray, np.ndarray] | None = None  # (cos, sin) of the local layers, if they differ
    # [n, D] residual rows -> [n, V] logits through the model's final norm and unembedding
    head: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False)

    @property
    def embeddings(self) -> np.ndarray:
        """[T, D] the input of the first block (token rows, plus learned positions for GPT-2)."""
        return self.resid[0]

    @property
    def n_tokens(self) -> int:
        return int(self.token_ids.shape[0])

    @property
    def n_layers(self) -> int:
        return int(self.q_pre.shape[0])

    @property
    def n_heads(self) -> int:
        return int(self.q_pre.shape[1])

    @property
    def n_kv_heads(self) -> int:
        return int(self.k_pre.shape[1])

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays this capture holds (what the cache's budget counts)."""
        arrays = [self.token_ids, self.offsets, self.q_pre, self.k_pre, self.v, self.resid, self.mlp]
        arrays += list(self.rope or ()) + list(self.rope_local or ())
        return int(sum(a.nbytes for a in arrays)) + sum(len(t) for t in self.tokens) + len(self.text)

    def kv_head(self, head: int) -> int:
        """The key/value head a query head reads (GQA: consecutive query heads share one).

        Example: with 9 query heads and 3 KV heads, kv_head(4) -> 1
        """
        return head // (self.n_heads // self.n_kv_heads)

    def is_local(self, layer: int) -> bool:
        """Whether `layer` is a local (sliding-window) layer. Example: Gemma 3 270M, layer 5 -> False"""
        return bool(self.local[layer]) if self.local else self.window is not None

    def layer_window(self, layer: int) -> int | None:
        """The window that masks this layer's keys for this text (None: the text fits in it)."""
        if self.local and not self.local[layer]:
            return None
        return self.window

    def layer_rope(self, layer: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(cos, sin) [T, Dh] that rotate this layer's q and k (each layer type has its own base)."""
        if self.rope_local is not None and self.local and self.local[layer]:
            return self.rope_local
        return self.rope

    # -- recomputed on access
    def _rotated(self, x: np.ndarray, layer: int | None = None) -> np.ndarray:
        rope = self.rope if layer is None else self.layer_rope(layer)
        if rope is None:
            return x
        cos, sin = (torch.from_numpy(np.array(c)) for c in rope)
        with torch.inference_mode():
            return rotate_half_split(torch.from_numpy(np.array(x)), cos, sin).numpy()

    def q_layer(self, layer: int) -> np.ndarray:
        """[H, T, Dh] queries of one layer, after RoPE."""
        return self._rotated(self.q_pre[layer], layer)

    def k_layer(self, layer: int) -> np.ndarray:
        """[Hkv, T, Dh] keys of one layer, after RoPE."""
        return self._rotated(self.k_pre[layer], layer)

    @property
    def q(self) -> np.ndarray:
        """[L, H, T, Dh] queries after RoPE: what the dot product really sees."""
        return _frozen(np.stack([self.q_layer(i) for i in range(self.n_layers)]))

    @property
    def k(self) -> np.ndarray:
        """[L, Hkv, T, Dh] keys after RoPE."""
        return _frozen(np.stack([self.k_layer(i) for i in range(self.n_layers)]))

    def attn_layer(self, layer: int, heads: slice | list[int] | None = None, upto: int | None = None) -> np.ndarray:
        """[H, T, T] attention weights of one layer (or of some of its heads), as the model computes
        them: softmax over keys of q·kᵀ·scale, future keys masked (and keys beyond the window).
        `upto`: among the first `upto` tokens only, [H, upto, upto]: the same weights as the whole
        text's top-left corner (a row reads no later key), without computing the rest."""
        hs = range(self.n_heads) if heads is None else (
            range(self.n_heads)[heads] if isinstance(heads, slice) else heads)
        hs = list(hs)
        n = self.n_tokens if upto is None else max(0, min(int(upto), self.n_tokens))
        with torch.inference_mode():
            q = torch.from_numpy(self._rotated(self.q_pre[layer, hs], layer)[..., :n, :])  # [h, n, Dh]
            k = torch.from_numpy(self._rotated(self.k_pre[layer, [self.kv_head(h) for h in hs]], layer)[..., :n, :])
            scores = torch.matmul(q, k.transpose(-1, -2)) * self.scales[layer]  # [h, T, T]
            t = scores.shape[-1]
            i = torch.arange(t)
            # The mask goes in before the softmax: a future key gets -inf, so weight exactly 0 and
            # the remaining weights of the row still sum to 1.
            masked = i[None, :] > i[:, None]
            window = self.layer_window(layer)
            if window is not None:
                masked |= i[None, :] <= i[:, None] - window
            scores = scores.masked_fill(masked, float("-inf"))
            return _frozen(torch.softmax(scores, dim=-1, dtype=torch.float32).numpy())

    @property
    def attn(self) -> np.ndarray:
        """[L, H, T, T] attention weights of every head (recomputed: 280 MB at 512 tokens of
        SmolLM2; prefer `attn_layer` or `attention` where one layer or head is enough)."""
        return _frozen(np.stack([self.attn_layer(i) for i in range(self.n_layers)]))

    def attention(self, layer: int, head: int) -> np.ndarray:
        """[T, T] attention weights of one head; row i is what token i reads."""
        return self.attn_layer(layer, [head])[0]

    def query(self, layer: int, head: int) -> np.ndarray:
        """[T, Dh] queries of one head, after RoPE."""
        return self._rotated(self.q_pre[layer, head], layer)

    def key(self, layer: int, head: int) -> np.ndarray:
        """[T, Dh] keys read by query head `head`, after RoPE."""
        return self._rotated(self.k_pre[layer, self.kv_head(head)], layer)

    def value(self, layer: int, head: int) -> np.ndarray:
        """[T, Dh] values read by query head `head`."""
        return self.v[layer, self.kv_head(head)]

    def logits_at(self, positions) -> np.ndarray:
        """[n, V] (or [V] for one int position) logits: the final norm and the unembedding on
        resid[-1], as the model's own last step."""
        if self.head is None:
            raise RuntimeError("this capture has no model head to compute logits")
        one = isinstance(positions, (int, np.integer))
        rows = self.resid[-1][[int(positions)] if one else positions]
        out = self.head(rows)
        return out[0] if one else out

    @property
    def logits(self) -> np.ndarray:
        """[T, V] logits at every position (100 MB at 512 tokens of SmolLM2: computed on access)."""
        return _frozen(self.logits_at(slice(None)))


def rotate_half_split(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE in Hugging Face's half-split convention: x·cos + rotate_half(x)·sin.

    Dimension i is paired with i + Dh/2 (not with i + 1 as in Meta's interleaved form).
    x: [n, T, Dh]; cos, sin: [T, Dh]. Delegates to `lib.lessons.rope.apply_rotary`, the one implementation.
    """
    return apply_rotary(x, cos, sin)


def _first(output):
    return output[0] if isinstance(output, (tuple, list)) else output


def hook_count(model) -> int:
    """How many hooks of this module are registered on `model` (0 outside a capture).

    transformers installs its own output-recording hooks on a model's first forward pass; they
    stay, inactive unless a caller asks for outputs, so only hooks defined here are counted.
    """
    return sum(
        getattr(fn, "__module__", None) == __name__
        for m in model.modules()
        for fn in (*m._forward_hooks.values(), *m._forward_pre_hooks.values())
    )


@contextmanager
def _hooked(loaded: LoadedModel) -> Iterator[dict]:
    """Register the capture hooks under the model's lock; yield the dict they fill."""
    ad = loaded.adapter
    model = loaded.model
    n_layers = loaded.info.n_layers
    store: dict = {"resid": [None] * (n_layers + 1), "mlp": [None] * n_layers,
                   "q": [None] * n_layers, "k": [None] * n_layers, "v": [None] * n_layers}
    with loaded.lock:
        handles = []
        try:
            rot = ad.rotary(model)
            if rot is not None:
                def save_rope(m, args, kwargs, out):
                    # Gemma 3 calls its rotary module once per layer type (third argument).
                    kind = args[2] if len(args) > 2 else kwargs.get("layer_type")
                    if kind is None:
                        store["rope"] = out
                    else:
                        store.setdefault("rope_by_type", {})[kind] = out
                handles.append(rot.register_forward_hook(save_rope, with_kwargs=True))
            blocks = ad.blocks(model)

            def block_in(m, args, kwargs):
                store["resid"][0] = args[0] if args else kwargs["hidden_states"]

            handles.append(blocks[0].register_forward_pre_hook(block_in, with_kwargs=True))
            for i, block in enumerate(blocks):
                handles.append(block.register_forward_hook(
                    lambda m, a, out, i=i: store["resid"].__setitem__(i + 1, _first(out))))
                handles.append(ad.mlp_out(block).register_forward_pre_hook(
                    lambda m, args, i=i: store["mlp"].__setitem__(i, args[0])))
                for module, which in ad.qkv_sources(block):
                    def save(m, a, out, i=i, which=which):
                        if which == "qkv":  # GPT-2's fused projection: [1, T, 3D] -> thirds
                            for name, part in zip("qkv", out.chunk(3, dim=-1)):
                                store[name][i] = part
                        elif ad.qk_heads_first and which in ("q", "k"):  # [1, H, T, Dh] -> [1, T, H, Dh]
                            store[which][i] = out.transpose(1, 2)
                        else:
                            store[which][i] = out
                    handles.append(module.register_forward_hook(save))
            yield store
        finally:
            for h in handles:
                h.remove()


def _heads(x: torch.Tensor, d_head: int) -> torch.Tensor:
    """[1, T, n*Dh] or [1, T, n, Dh] -> [n, T, Dh]."""
    t = x.shape[1]
    return x.reshape(t, -1, d_head).transpose(0, 1)


def run_capture(loaded: LoadedModel, text: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> Capture:
    """Run `text` through the model once and return every activation listed above.

    Text longer than `max_tokens` tokens is cut (Capture.truncated says so).
    Example: run_capture(load_model(), "Il gatto dorme").attn.shape -> (30, 9, T, T)
    """
    if text is None or not text.strip():
        raise EmptyTextError("empty text")
    tok = loaded.tokenizer
    enc = tok(text, return_offsets_mapping=True)
    ids_all = list(enc["input_ids"])
    offsets_all = list(enc["offset_mapping"])
    ids = ids_all[:max_tokens]
    offsets = offsets_all[:max_tokens]
    d_head = loaded.info.d_head
    input_ids = torch.tensor([ids], dtype=torch.long)

    with _hooked(loaded) as store, torch.inference_mode():
        # logits_to_keep=1: the [T, V] logits of the forward pass are not kept (the capture
        # recomputes them on access), so a 512-token run does not allocate 100 MB for them.
        out = loaded.model(input_ids=input_ids, use_cache=False, logits_to_keep=1)

    def stack(name: str) -> np.ndarray:
        return torch.stack([_heads(x, d_head) for x in store[name]]).float().numpy()

    q_pre, k_pre = stack("q"), stack("k")
    def angles(out) -> tuple[np.ndarray, np.ndarray]:
        cos, sin = (c[0].float().numpy() for c in out)  # [T, Dh] each
        return _frozen(cos), _frozen(sin)

    rope = rope_local = None
    local: tuple[bool, ...] = ()
    if "rope" in store:
        rope = angles(store["rope"])
    by_type = store.get("rope_by_type") or {}
    if by_type:
        types = loaded.info.layer_types
        local = tuple(t == "sliding_attention" for t in types)
        if "full_attention" in by_type:
            rope = angles(by_type["full_attention"])
        if "sliding_attention" in by_type:
            rope_local = angles(by_type["sliding_attention"])
            rope = rope if rope is not None else rope_local
    resid = torch.stack([r[0] for r in store["resid"]]).float().numpy()
    cap = Capture(
        model_name=loaded.info.name,
        text=text,
        token_ids=_frozen(np.asarray(ids, dtype=np.int64)),
        tokens=tuple(readable_tokens(tok, ids)),
        offsets=_frozen(np.asarray(offsets, dtype=np.int64).reshape(-1, 2)),
        q_pre=_frozen(q_pre),
        k_pre=_frozen(k_pre),
        v=_frozen(stack("v")),
        resid=_frozen(resid),
        mlp=_frozen(torch.stack([m[0] for m in store["mlp"]]).float().numpy()),
        truncated=len(ids_all) > max_tokens,
        n_tokens_total=len(ids_all),
        rope=rope,
        scales=attention_scales(loaded),
        window=_window(loaded, len(ids)),
        head=partial(head_logits, loaded),
        local=local,
        rope_local=rope_local,
    )
    del store, out
    return cap


def attention_scales(loaded: LoadedModel) -> tuple[float, ...]:
    """Per layer, the factor on q·kᵀ before the softmax, read from the attention module's own
    `scaling` (1/√Dh in both families; GPT-2 configs with `scale_attn_by_inverse_layer_idx` divide
    it by layer + 1), else 1/√Dh."""
    out = []
    for block in loaded.adapter.blocks(loaded.model):
        scaling = getattr(loaded.adapter.attention(block), "scaling", None)
        out.append(float(scaling) if scaling is not None else 1.0 / math.sqrt(loaded.info.d_head))
    return tuple(out)


def max_tokens_for(loaded: LoadedModel) -> int:
    """How many tokens a capture reads on this model: DEFAULT_MAX_TOKENS, or twice the sliding
    window of a model with local layers (Gemma 3: 1,024), so that the window's mask shows; never
    more than MAX_WINDOW_TOKENS (a Mistral-style window of 4,096 would mean [T, T] maps of 8,192²).

    Example: SmolLM2 -> 512; Gemma 3 270M (window 512) -> 1024; a window of 4,096 -> 1024
    """
    window = loaded.info.sliding_window
    return min(max(DEFAULT_MAX_TOKENS, 2 * int(window)), MAX_WINDOW_TOKENS) if window else DEFAULT_MAX_TOKENS


def _window(loaded: LoadedModel, n_tokens: int) -> int | None:
    """The sliding-window width if the model uses one narrower than the text, else None."""
    config = loaded.model.config
    window = getattr(config, "sliding_window", None)
    if not window or getattr(config, "use_sliding_window", True) is False or window >= n_tokens:
        return None
    return int(window)


def head_logits(loaded: LoadedModel, x: np.ndarray) -> np.ndarray:
    """[n, V] logits of residual rows x [n, D]: the model's final norm, then its unembedding.

    No lock: these two modules carry no hooks and keep no state, so a learner reading logits never
    waits behind another learner's forward pass.
    """
    model, ad = loaded.model, loaded.adapter
    with torch.inference_mode():
        h = torch.from_numpy(np.array(x, dtype=np.float32))
        return ad.unembed(model)(ad.final_norm(model)(h)).float().numpy()
