"""lib/lessons/generate: greedy equals transformers' generate, the cache changes nothing, EOS, seeds, limits."""

import threading

import numpy as np
import pytest
import torch

from lib.lessons.generate import eos_ids, generate, prompt_ids
from lib.lessons.sampling import softmax
from lib.model.capture import EmptyTextError, hook_count, run_capture

PROMPT = "The capital of France is"


def hf_greedy(lm, text, n, eos):
    ids = torch.tensor([prompt_ids(lm, text)[0]])
    with torch.inference_mode():
        out = lm.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                max_new_tokens=n, eos_token_id=sorted(eos), pad_token_id=sorted(eos)[0])
    return out[0, ids.shape[1]:].tolist()


@pytest.mark.parametrize("fixture,n", [("tiny_llama", 20), ("tiny_gpt2", 20), ("real", 8)])
def test_greedy_equals_transformers_generate(fixture, n, request):
    lm = request.getfixturevalue(fixture)
    gen = generate(lm, PROMPT, n, temperature=0.0)
    assert list(gen.token_ids) == hf_greedy(lm, PROMPT, n, eos_ids(lm))
    assert all(s.u is None and s.prob == 1.0 and s.n_kept == 1 and s.rank == 1 for s in gen.steps)
    assert gen.text == lm.tokenizer.decode(list(gen.token_ids))


@pytest.mark.parametrize("fixture", ["tiny_llama", "tiny_gpt2"])
def test_the_cache_changes_nothing(fixture, request):
    """Each step's distribution equals a full forward pass, without cache, over everything so far."""
    lm = request.getfixturevalue(fixture)
    gen = generate(lm, PROMPT, 12, temperature=1.0, seed=5)
    full = list(gen.prompt_ids) + list(gen.token_ids)
    with torch.inference_mode():
        logits = lm.model(input_ids=torch.tensor([full]), use_cache=False).logits[0].numpy()
    for i, step in enumerate(gen.steps):
        row = softmax(logits[len(gen.prompt_ids) - 1 + i].astype(np.float64))
        np.testing.assert_allclose(step.top_model, row[list(step.top_ids)], atol=1e-5)
        assert step.top_ids[0] == int(np.argmax(row))


def test_first_step_matches_the_capture(real):
    """The prefill's distribution is the capture's last row: same tokens, same model."""
    text = "Il gatto dorme sul tappeto perché"
    cap = run_capture(real, text)
    gen = generate(real, text, 1, temperature=0.0)
    assert gen.prompt_ids == tuple(cap.token_ids.tolist())
    row = softmax(cap.logits[-1].astype(np.float64))
    np.testing.assert_allclose(gen.steps[0].top_model, row[list(gen.steps[0].top_ids)], atol=1e-5)
    assert gen.first_token_s > 0 and gen.steps[0].forward_s <= gen.steps[0].seconds


def test_stops_at_end_of_sequence(tiny_llama):
    free = generate(tiny_llama, PROMPT, 15, temperature=0.0, eos=frozenset())
    assert free.stop == "max_tokens" and len(free.steps) == 15
    stop_token = free.token_ids[4]
    first = free.token_ids.index(stop_token)
    gen = generate(tiny_llama, PROMPT, 15, temperature=0.0, eos=frozenset({stop_token}))
    assert gen.stop == "eos"
    assert gen.token_ids == free.token_ids[: first + 1]  # the end token is kept as the last step
    assert gen.token_ids == tuple(hf_greedy(tiny_llama, PROMPT, 15, {stop_token}))


def test_eos_ids_of_the_real_model(real):
    assert eos_ids(real) == {2}
    assert real.tokenizer.convert_ids_to_tokens(2) == "<|im_end|>"


def test_same_seed_same_text_and_filters_respected(tiny_gpt2):
    a = generate(tiny_gpt2, PROMPT, 10, temperature=1.5, top_k=20, top_p=0.9, seed=11)
    b = generate(tiny_gpt2, PROMPT, 10, temperature=1.5, top_k=20, top_p=0.9, seed=11)
    assert a.token_ids == b.token_ids and [s.u for s in a.steps] == [s.u for s in b.steps]
    texts = {generate(tiny_gpt2, PROMPT, 10, temperature=1.5, seed=s).token_ids for s in range(5)}
    assert len(texts) > 1
    for s in a.steps:
        assert s.rank <= s.n_kept <= 20  # the chosen token is one the filters left in play
        assert 0 < s.prob and 0 <= s.u < 1
        assert abs(sum(s.top_probs) - 1) < 1e-9 or s.n_kept > len(s.top_ids)


def test_interrupted_and_context_limits(tiny_gpt2):
    calls = []
    gen = generate(tiny_gpt2, PROMPT, 30, temperature=1.0, should_stop=lambda: calls.append(1) or len(calls) >= 3)
    assert gen.stop == "interrupted" and len(gen.steps) == 3
    # tiny_gpt2 has 128 positions: a long prompt is cut to leave room for one token, then stops.
    long_text = "a" * 400
    ids, cut = prompt_ids(tiny_gpt2, long_text)
    assert len(ids) == 127 and cut
    gen = generate(tiny_gpt2, long_text, 10, temperature=0.0)
    assert gen.stop == "context" and len(gen.steps) == 1 and gen.prompt_truncated
    assert generate(tiny_gpt2, PROMPT, 0).steps == ()
    for empty in ("", "   \n"):
        with pytest.raises(EmptyTextError):
            generate(tiny_gpt2, empty, 5)


def test_runs_under_the_lock_in_inference_mode_and_leaves_no_hooks(tiny_llama):
    seen = []
    handle = tiny_llama.model.register_forward_pre_hook(
        lambda m, args: seen.append((tiny_llama.lock._is_owned(), torch.is_inference_mode_enabled())))
    try:
        generate(tiny_llama, PROMPT, 4, temperature=0.0)
    finally:
        handle.remove()
    assert seen == [(True, True)] * 4  # the prefill and three single-token steps
    assert hook_count(tiny_llama.model) == 0


def test_waits_for_a_capture_running_in_another_thread(tiny_llama):
    """While another thread holds the model's lock (a capture with hooks), generation waits."""
    started, release = threading.Event(), threading.Event()

    def hold():
        with tiny_llama.lock:
            started.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    started.wait(10)
    result = []
    g = threading.Thread(target=lambda: result.append(generate(tiny_llama, PROMPT, 2, temperature=0.0)))
    g.start()
    g.join(0.3)
    assert g.is_alive() and not result  # blocked on the lock
    release.set()
    g.join(30)
    t.join(10)
    assert len(result[0].steps) == 2
