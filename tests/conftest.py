"""Shared fixtures: the real embedded model (loaded once per session) and tiny random models.

Tiny models use a byte-level tokenizer with no merges (256 ids, one per byte), built here, so
they need neither the network nor the real model's files.
"""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def navigation_v2(monkeypatch):
    """Run app.py on every rerun, as the real server does once st.navigation has been called.

    AppTest builds a fresh PagesManager per run, which sees our `pages/` folder and falls back to
    the old pages-directory mode: from the second run on it would execute the page file alone,
    skipping app.py (sidebar, model, navigation). The real runtime leaves that mode for good on
    the first st.navigation call; this fixture does the same for AppTest.
    """
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


@pytest.fixture(scope="session")
def real():
    """The embedded SmolLM2-135M, converted on first use (the slow part of a cold run)."""
    from lib.models import load_model

    return load_model()


@pytest.fixture(scope="session")
def byte_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from lib.tokens import byte_decoder

    vocab = {ch: b for ch, b in byte_decoder().items()}
    vocab["<|endoftext|>"] = 256
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>")


def _tiny(config, tokenizer, name):
    from transformers import AutoModelForCausalLM

    from lib.models import wrap_model

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    return wrap_model(model, tokenizer, name)


@pytest.fixture(scope="session")
def tiny_llama(byte_tokenizer):
    """Random Llama: 2 layers, 4 query heads sharing 2 KV heads (GQA), RoPE."""
    from transformers import LlamaConfig

    cfg = LlamaConfig(vocab_size=257, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                      tie_word_embeddings=False)
    return _tiny(cfg, byte_tokenizer, "tiny-llama")


@pytest.fixture(scope="session")
def tiny_gpt2(byte_tokenizer):
    """Random GPT-2: 2 layers, 4 heads, learned positions."""
    from transformers import GPT2Config

    cfg = GPT2Config(vocab_size=257, n_embd=32, n_layer=2, n_head=4, n_positions=128)
    return _tiny(cfg, byte_tokenizer, "tiny-gpt2")
