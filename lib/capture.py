"""One forward run of the live model with hooks, returned as one immutable `Capture`.

This is the only module that touches PyTorch hooks. Hooks are global state on a model that every
browser session shares, and a hook registered by one thread fires in another thread's forward
pass; so `_hooked` registers them inside a context manager, under the model's lock, and removes
them in `finally`, also when the forward pass raises.

What is captured (batch dimension dropped, float32 numpy arrays, read-only):
  token_ids [T], tokens (readable strings), offsets [T, 2] into the text,
  embeddings [T, D] (input to the first block: token rows, plus learned positions for GPT-2),
  q_pre [L, H, T, Dh], k_pre [L, Hkv, T, Dh] (projections, before RoPE),
  q [L, H, T, Dh], k [L, Hkv, T, Dh] (after RoPE: what the dot product really sees),
  v [L, Hkv, T, Dh], attn [L, H, T, T], resid [L+1, T, D] (input of each block, then the last
  block's output, before the final norm), mlp [L, T, F] (input of the MLP's down projection),
  logits [T, V].

RoPE is applied inside a function, not a module, so no hook sees the rotated q and k. We hook the
rotary module's (cos, sin) and the projections, and rotate them here with the same half-split
formula Hugging Face's Llama uses (`lib.rope.apply_rotary`, the one implementation); tests prove
the result reproduces the model's own attention.
Deliberately left out: batches, generation (the sampling lesson owns it), gradients.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import torch

from lib.models import LoadedModel
from lib.rope import apply_rotary
from lib.tokens import readable_tokens

DEFAULT_MAX_TOKENS = 512


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
    embeddings: np.ndarray
    q_pre: np.ndarray
    k_pre: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    attn: np.ndarray
    resid: np.ndarray
    mlp: np.ndarray
    logits: np.ndarray
    truncated: bool  # the text had more than max_tokens tokens and was cut
    n_tokens_total: int  # tokens in the whole text, before any cut

    @property
    def n_tokens(self) -> int:
        return int(self.token_ids.shape[0])

    @property
    def n_layers(self) -> int:
        return int(self.attn.shape[0])

    @property
    def n_heads(self) -> int:
        return int(self.attn.shape[1])

    @property
    def n_kv_heads(self) -> int:
        return int(self.k.shape[1])

    def kv_head(self, head: int) -> int:
        """The key/value head a query head reads (GQA: consecutive query heads share one).

        Example: with 9 query heads and 3 KV heads, kv_head(4) -> 1
        """
        return head // (self.n_heads // self.n_kv_heads)

    def attention(self, layer: int, head: int) -> np.ndarray:
        """[T, T] attention weights of one head; row i is what token i reads."""
        return self.attn[layer, head]

    def query(self, layer: int, head: int) -> np.ndarray:
        """[T, Dh] queries of one head, after RoPE."""
        return self.q[layer, head]

    def key(self, layer: int, head: int) -> np.ndarray:
        """[T, Dh] keys read by query head `head`, after RoPE."""
        return self.k[layer, self.kv_head(head)]

    def value(self, layer: int, head: int) -> np.ndarray:
        """[T, Dh] values read by query head `head`."""
        return self.v[layer, self.kv_head(head)]


def rotate_half_split(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE in Hugging Face's half-split convention: x·cos + rotate_half(x)·sin.

    Dimension i is paired with i + Dh/2 (not with i + 1 as in Meta's interleaved form).
    x: [n, T, Dh]; cos, sin: [T, Dh]. Delegates to `lib.rope.apply_rotary`, the one implementation.
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
    store: dict = {"resid": [None] * (n_layers + 1), "attn": [None] * n_layers, "mlp": [None] * n_layers,
                   "q": [None] * n_layers, "k": [None] * n_layers, "v": [None] * n_layers}
    with loaded.lock:
        handles = []
        try:
            rot = ad.rotary(model)
            if rot is not None:
                handles.append(rot.register_forward_hook(lambda m, a, out: store.__setitem__("rope", out)))
            blocks = ad.blocks(model)

            def block_in(m, args, kwargs):
                store["resid"][0] = args[0] if args else kwargs["hidden_states"]

            handles.append(blocks[0].register_forward_pre_hook(block_in, with_kwargs=True))
            for i, block in enumerate(blocks):
                handles.append(block.register_forward_hook(
                    lambda m, a, out, i=i: store["resid"].__setitem__(i + 1, _first(out))))
                handles.append(ad.attention(block).register_forward_hook(
                    lambda m, a, out, i=i: store["attn"].__setitem__(i, out[1])))
                handles.append(ad.mlp_out(block).register_forward_pre_hook(
                    lambda m, args, i=i: store["mlp"].__setitem__(i, args[0])))
                for module, which in ad.qkv_sources(block):
                    def save(m, a, out, i=i, which=which):
                        if which == "qkv":  # GPT-2's fused projection: [1, T, 3D] -> thirds
                            for name, part in zip("qkv", out.chunk(3, dim=-1)):
                                store[name][i] = part
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
        out = loaded.model(input_ids=input_ids, use_cache=False)

    def stack(name: str) -> np.ndarray:
        return torch.stack([_heads(x, d_head) for x in store[name]]).float().numpy()

    q_pre, k_pre = stack("q"), stack("k")
    if "rope" in store:
        cos, sin = (c[0].float() for c in store["rope"])  # [T, Dh] each
        with torch.inference_mode():
            q = torch.stack([rotate_half_split(_heads(x, d_head).float(), cos, sin) for x in store["q"]]).numpy()
            k = torch.stack([rotate_half_split(_heads(x, d_head).float(), cos, sin) for x in store["k"]]).numpy()
    else:  # learned absolute positions (GPT-2): nothing rotates q and k
        q, k = q_pre, k_pre
    resid = torch.stack([r[0] for r in store["resid"]]).float().numpy()
    return Capture(
        model_name=loaded.info.name,
        text=text,
        token_ids=_frozen(np.asarray(ids, dtype=np.int64)),
        tokens=tuple(readable_tokens(tok, ids)),
        offsets=_frozen(np.asarray(offsets, dtype=np.int64).reshape(-1, 2)),
        embeddings=_frozen(resid[0]),
        q_pre=_frozen(q_pre),
        k_pre=_frozen(k_pre),
        q=_frozen(q),
        k=_frozen(k),
        v=_frozen(stack("v")),
        attn=_frozen(torch.stack([a[0] for a in store["attn"]]).float().numpy()),
        resid=_frozen(resid),
        mlp=_frozen(torch.stack([m[0] for m in store["mlp"]]).float().numpy()),
        logits=_frozen(out.logits[0].float().numpy()),
        truncated=len(ids_all) > max_tokens,
        n_tokens_total=len(ids_all),
    )
