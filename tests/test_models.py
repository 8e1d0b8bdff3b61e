"""Model loading: the embedded model, hub-id validation, and every failure path, offline."""

import pytest
import torch

from lib.model import models
from lib.model.models import DEFAULT_MODEL, ModelLoadError, load_model, validate_model_id


@pytest.mark.parametrize("name", ["gpt2", "distilgpt2", "HuggingFaceTB/SmolLM2-135M-Instruct",
                                  "Qwen/Qwen2.5-0.5B", "meta-llama/Llama-3.2-1B", " gpt2 "])
def test_valid_ids(name):
    assert validate_model_id(name) == name.strip()


@pytest.mark.parametrize("name", ["", "   ", "https://huggingface.co/gpt2", "/etc/passwd", "../secret",
                                  "a/b/c", "owner/..", "rm -rf /", "🤖", "x" * 300, "C:\\models\\x", "gpt2;ls"])
def test_invalid_ids(name):
    with pytest.raises(ModelLoadError) as e:
        validate_model_id(name)
    assert e.value.code == "invalid_id"


def test_local_folder_is_refused(tmp_path, monkeypatch):
    (tmp_path / "mymodel").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelLoadError) as e:
        validate_model_id("mymodel")
    assert e.value.code == "local_path"


# What a hub id meets on the network (offline, not found, too large, unsupported, remote code, pickled
# weights, a broken download) is tested against a local stand-in of the hub: tests/test_hub.py.


def test_tiny_models_are_normalized(tiny_llama, tiny_gpt2):
    li, gi = tiny_llama.info, tiny_gpt2.info
    assert (li.family, li.positional, li.norm, li.activation) == ("llama", "rope", "rmsnorm", "swiglu")
    assert (li.n_layers, li.n_heads, li.n_kv_heads, li.d_head, li.d_model, li.group_size) == (2, 4, 2, 8, 32, 2)
    assert (gi.family, gi.positional, gi.norm, gi.activation) == ("gpt2", "learned", "layernorm", "gelu")
    assert (gi.n_layers, gi.n_heads, gi.n_kv_heads, gi.d_head, gi.d_mlp, gi.context_length) == (2, 4, 4, 8, 128, 128)
    for info in (li, gi):
        assert info.n_params == info.n_params_formula
    assert gi.rope_theta is None and li.rope_theta is not None


def test_embedded_model_numbers(real):
    i = real.info
    assert i.name == DEFAULT_MODEL
    assert (i.n_layers, i.n_heads, i.n_kv_heads, i.d_head, i.d_model, i.d_mlp, i.vocab_size) == \
        (30, 9, 3, 64, 576, 1536, 49152)
    assert i.d_model == i.n_heads * i.d_head
    assert i.n_params == i.n_params_formula == 134_515_008
    assert i.tied_embeddings and i.rope_theta == 1e5 and i.context_length == 8192
    assert real.model.config._attn_implementation == "eager" and not real.model.training


def test_converted_weights_match_the_gguf(real):
    """The safetensors conversion gives the same logits as loading the GGUF directly."""
    from transformers import AutoModelForCausalLM

    src = models.gguf_path()
    gguf_model = AutoModelForCausalLM.from_pretrained(src.parent, gguf_file=src.name, dtype=torch.float32,
                                                      attn_implementation="eager").eval()
    ids = real.tokenizer("Dentro il Transformer: the model's numbers, 2026.", return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        a = gguf_model(ids).logits
        b = real.model(ids).logits
    assert torch.allclose(a, b, atol=1e-4, rtol=0)


def test_conversion_happens_once(real):
    folder = models.converted_dir()
    assert (folder / "config.json").exists() and (folder / "model.safetensors").exists()
    assert models.convert_gguf() == folder  # already there: returns at once
