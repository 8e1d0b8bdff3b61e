"""Writing with the model one token at a time, with the KV cache, and timing each step.

`generate(loaded, text, ...)` reads the prompt in one forward pass (the prefill), which fills the
key/value cache and gives the distribution of the first new token; then each new token is fed
alone, reading the cached keys and values of everything before it. Every step keeps its work:
the distribution after the filters of `lib.lessons.sampling` (top candidates only, to stay small), the
chosen token, the uniform number that chose it, and the time it took. The prefill is timed as
part of the first step (time to first token); the others are the per-token times.

The shared model is used under `loaded.lock` (one forward at a time, so no capture hook of
another session can fire inside ours) and `torch.inference_mode()`. The lock is taken per forward
pass, not for the whole generation, so other sessions are not kept waiting for 50 steps; the
timers start after the lock is acquired.

Transformers 5 names the cache argument `cache` (`past_key_values` is deprecated) and returns it
as `outputs.cache`; positions are taken from the cache's length, for RoPE and for GPT-2's learned
positions alike.

Deliberately left out: chat templates (the text is continued as it is), batches, beam search,
streaming to the page, repetition penalties, speculative decoding.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from lib.lessons.sampling import filter_steps, make_rng, sample
from lib.model.capture import DEFAULT_MAX_TOKENS, EmptyTextError
from lib.model.models import LoadedModel
from lib.model.tokens import readable_tokens

MAX_NEW_TOKENS = 50
TOP_N = 10  # candidates kept per step for the page


@dataclass(frozen=True)
class Step:
    """One generated token and the distribution it was drawn from.

    `top_*` describe the TOP_N candidates with the highest scores (the model's order), with
    their probability after the filters (`top_probs`) and the model's own (`top_model`, T = 1).
    """

    token_id: int
    token: str
    prob: float  # after the filters: the chance this token had of being drawn
    prob_model: float  # the model's own probability (temperature 1, no filters)
    rank: int  # 1 = the model's top candidate
    n_kept: int  # tokens the filters left in play
    u: float | None  # the uniform number of the draw; None when greedy
    top_ids: tuple[int, ...]
    top_tokens: tuple[str, ...]
    top_probs: tuple[float, ...]
    top_model: tuple[float, ...]
    forward_s: float  # the forward pass alone (the prefill, for the first step)
    seconds: float  # forward pass + filters + draw


@dataclass(frozen=True)
class Generation:
    """A whole generation: the prompt, the steps, why it stopped, and the settings used.

    `stop` is "eos" (the model wrote an end-of-sequence token, kept as the last step),
    "max_tokens", "context" (the model's context window is full) or "interrupted".
    """

    model_name: str
    prompt_ids: tuple[int, ...]
    prompt_tokens: tuple[str, ...]
    prompt_truncated: bool
    steps: tuple[Step, ...]
    stop: str
    text: str  # the new tokens decoded
    temperature: float
    top_k: int | None
    top_p: float | None
    seed: int

    @property
    def token_ids(self) -> tuple[int, ...]:
        return tuple(s.token_id for s in self.steps)

    @property
    def first_token_s(self) -> float:
        """Time to first token: prefill of the whole prompt, filters and draw."""
        return self.steps[0].seconds if self.steps else float("nan")

    @property
    def per_token_s(self) -> float:
        """Median time of each following token (nan with fewer than two tokens)."""
        rest = [s.seconds for s in self.steps[1:]]
        return float(np.median(rest)) if rest else float("nan")


def eos_ids(loaded: LoadedModel) -> frozenset[int]:
    """The end-of-sequence ids: the generation config's (an int or a list) and the tokenizer's.

    Example: SmolLM2-135M-Instruct -> {2} (<|im_end|>)
    """
    found: set[int] = set()
    gen = getattr(loaded.model, "generation_config", None)
    for source in (getattr(gen, "eos_token_id", None), loaded.model.config.eos_token_id,
                   getattr(loaded.tokenizer, "eos_token_id", None)):
        if source is None:
            continue
        found |= {int(x) for x in (source if isinstance(source, (list, tuple)) else [source])}
    return frozenset(found)


def prompt_ids(loaded: LoadedModel, text: str, max_prompt_tokens: int = DEFAULT_MAX_TOKENS) -> tuple[list[int], bool]:
    """The prompt's token ids as the capture reads them (same tokenizer call, same cut), and
    whether it was cut. The cut also leaves room for one new token in the context window.
    """
    if text is None or not text.strip():
        raise EmptyTextError("empty text")
    ids = list(loaded.tokenizer(text)["input_ids"])
    limit = max_prompt_tokens
    context = loaded.info.context_length
    if context:
        limit = min(limit, context - 1)
    return ids[:limit], len(ids) > limit


def _forward(loaded: LoadedModel, ids: list[int], cache) -> tuple[np.ndarray, object, float]:
    """One forward pass under the model's lock: logits of the last position [V], the cache, seconds."""
    with loaded.lock, torch.inference_mode():
        start = time.perf_counter()
        out = loaded.model(input_ids=torch.tensor([ids], dtype=torch.long), cache=cache, use_cache=True)
        logits = out.logits[0, -1].float().numpy().copy()  # [V]
        return logits, out.cache, time.perf_counter() - start


def generate(loaded: LoadedModel, text: str, max_new_tokens: int = MAX_NEW_TOKENS, temperature: float = 1.0,
             top_k: int | None = None, top_p: float | None = None, seed: int = 0,
             max_prompt_tokens: int = DEFAULT_MAX_TOKENS, eos: frozenset[int] | None = None,
             should_stop: Callable[[], bool] | None = None, top_n: int = TOP_N) -> Generation:
    """Continue `text` for up to `max_new_tokens` tokens with the KV cache.

    Each step applies temperature, top-k and top-p (`lib.lessons.sampling.filter_steps`) and draws with one
    numpy Generator seeded by `seed`, so the same settings give the same text; temperature 0 is
    greedy and equals `model.generate(do_sample=False)`. `should_stop()` is asked after each token.
    Example: generate(load_model(), "The capital of France is", 5, temperature=0).text -> " Paris..."
    """
    ids, truncated = prompt_ids(loaded, text, max_prompt_tokens)
    stop_ids = eos_ids(loaded) if eos is None else frozenset(eos)
    context = loaded.info.context_length or 10**9
    rng = make_rng(seed)
    tok = loaded.tokenizer
    steps: list[Step] = []
    stop = "max_tokens"
    n_new = max(0, int(max_new_tokens))
    cache = None
    feed = ids
    while len(steps) < n_new:
        start = time.perf_counter()
        logits, cache, forward_s = _forward(loaded, feed, cache)
        work = filter_steps(logits, temperature, top_k, top_p)
        if work.greedy:
            token, u = int(np.argmax(work.final)), None
        else:
            draw = sample(work.final, rng)
            token, u = draw.token, draw.u
        top = work.order[:top_n]
        rank = int(np.flatnonzero(work.order == token)[0]) + 1
        steps.append(Step(
            token_id=token, token=readable_tokens(tok, [token])[0], prob=float(work.final[token]),
            prob_model=float(work.model[token]), rank=rank, n_kept=work.n_kept, u=u,
            top_ids=tuple(int(i) for i in top), top_tokens=tuple(readable_tokens(tok, [int(i) for i in top])),
            top_probs=tuple(float(work.final[i]) for i in top), top_model=tuple(float(work.model[i]) for i in top),
            forward_s=forward_s, seconds=time.perf_counter() - start))
        if token in stop_ids:
            stop = "eos"
            break
        if len(steps) >= n_new:
            break
        if len(ids) + len(steps) >= context:
            stop = "context"
            break
        if should_stop is not None and should_stop():
            stop = "interrupted"
            break
        feed = [token]  # only the new token: the cache holds the keys and values of the rest
    new_ids = [s.token_id for s in steps]
    return Generation(
        model_name=loaded.info.name, prompt_ids=tuple(ids), prompt_tokens=tuple(readable_tokens(tok, ids)),
        prompt_truncated=truncated, steps=tuple(steps), stop=stop, text=tok.decode(new_ids),
        temperature=float(temperature), top_k=top_k, top_p=top_p, seed=int(seed))
