"""Shared fixtures: the real embedded models (each loaded once per session) and tiny random models.

Tiny models use a byte-level tokenizer with no merges (256 ids, one per byte), built here, so
they need neither the network nor the real model's files.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
import torch


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` (pyproject.toml's addopts): xdist's loadfile schedule, with the files that
    share a walk through the app in one unit and the longest units first (tests/schedule.py)."""
    if config.getvalue("dist") == "loadfile":
        from tests.schedule import make_scheduler

        return make_scheduler(config, log)
    return None


def pytest_configure(config):
    """A class store of this process's own (a SQLite file in a temporary folder) for the app's
    servers and pages the tests start: never the developer's store in the app's cache folder, and
    never another xdist worker's. Tests that need another store set ITT_DATABASE_URL themselves."""
    folder = tempfile.mkdtemp(prefix="itt-test-store-")
    config._itt_store_folder = folder
    os.environ["ITT_DATABASE_URL"] = f"sqlite:///{folder}/classroom.sqlite3"


def pytest_unconfigure(config):
    folder = getattr(config, "_itt_store_folder", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


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
    """The embedded SmolLM2-135M, converted on first use (the slow part of a cold run).

    The very object the pages get under AppTest (ui.shell.cache.get_model, which calls
    lib.model.models.load_model): the test session loads each built-in model once, as a server does.
    """
    from lib.model.models import DEFAULT_MODEL
    from ui.shell.cache import get_model

    return get_model(DEFAULT_MODEL)


@pytest.fixture(scope="session")
def byte_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from lib.model.tokens import byte_decoder

    vocab = {ch: b for ch, b in byte_decoder().items()}
    vocab["<|endoftext|>"] = 256
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>")


def _tiny(config, tokenizer, name):
    from transformers import AutoModelForCausalLM

    from lib.model.models import wrap_model

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


@pytest.fixture(scope="session")
def tiny_gemma(byte_tokenizer):
    """Random Gemma 3 text model: 3 layers (local, local, global), 4 query heads sharing 1 KV head
    (MQA), d_head 16 with d_model 32 (H·Dh = 64 != 32), sliding window 4, RoPE bases 10 (local)
    and 10,000 (global). Its RMSNorm gains are randomized (transformers starts them at 0, i.e. a gain
    of 1) so that q/k norms and sandwich norms change something."""
    from transformers import Gemma3TextConfig

    cfg = Gemma3TextConfig(
        vocab_size=257, hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=1, head_dim=16, max_position_embeddings=128, sliding_window=4,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"],
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10.0},
                         "full_attention": {"rope_type": "default", "rope_theta": 10000.0}},
        query_pre_attn_scalar=16, pad_token_id=0, bos_token_id=2, eos_token_id=1)
    lm = _tiny(cfg, byte_tokenizer, "tiny-gemma")
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in lm.model.named_parameters():
            if "norm" in name:
                p.copy_(0.5 * torch.randn(p.shape, generator=gen))
    return lm


@pytest.fixture(scope="session")
def real_gemma():
    """The embedded Gemma 3 270M, converted on first use (minutes the first time, once); shared
    with the pages under AppTest, as `real` is."""
    from lib.model.models import GEMMA_MODEL
    from ui.shell.cache import get_model

    return get_model(GEMMA_MODEL)


@pytest.fixture(scope="session")
def image() -> str:
    """The app's image, built by `make image` with podman once per test process (tests/image_build.py):
    test_image.py runs it alone, test_compose.py in the school-server stack."""
    from tests import image_build

    return image_build.built()


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL server for the whole run (drivers/postgres.py), stopped at the end.

    Missing PostgreSQL skips the tests that need it, except on CI (CI=true), where it fails them:
    `make test` installs Debian's postgresql as root.
    """
    from drivers.postgres import PostgresMissing, PostgresServer
    from tests.ci import skip_or_fail

    try:
        server = PostgresServer()
    except PostgresMissing as e:
        skip_or_fail(str(e))
    try:
        yield server.start()
    finally:
        server.stop()


# --- the hub's stand-in (drivers/hub_standin.py) ----------------------------------------------

@pytest.fixture(scope="session")
def hub_server(tmp_path_factory, byte_tokenizer):
    """One stand-in for the session, serving every family (`standin/<name>`), the same tiny Llama
    a larger Llama throttled (`standin/slow-llama`,
    and the same as `-it` and `-en`), one with pickled weights only (`standin/bin-only`), one
    over the size limit (`standin/too-big`), an encoder (`standin/bert`) and one that needs its own code (`standin/remote-code`)."""
    from transformers import LlamaConfig

    from drivers.hub_standin import OWNER, HubStandIn, Repo, build_repo, family_configs, remote_code_repo

    root = tmp_path_factory.mktemp("hub")
    configs = family_configs()
    repos = [Repo(f"{OWNER}/{name}", build_repo(root / name, cfg, byte_tokenizer)) for name, cfg in configs.items()]
    # ~2.3 MB of weights at 2 MB/s: a download of about a second, several chunks of lib.model.hub.CHUNK_BYTES.
    slow = LlamaConfig(vocab_size=257, hidden_size=128, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, max_position_embeddings=128, tie_word_embeddings=False)
    build_repo(root / "slow-llama", slow, byte_tokenizer)
    for alias in ("slow-llama", "slow-llama-it", "slow-llama-en"):  # one per test that needs it not yet loaded
        repos.append(Repo(f"{OWNER}/{alias}", root / "slow-llama", throttle=2_000_000))
    repos.append(Repo(f"{OWNER}/bin-only", build_repo(root / "bin-only", configs["tiny-llama"], byte_tokenizer, "bin")))
    big = root / "too-big"
    big.mkdir()
    (big / "config.json").write_text(LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336,
                                                 num_hidden_layers=32, num_attention_heads=32,
                                                 num_key_value_heads=8).to_json_string())
    (big / "model.safetensors").write_bytes(b"\0" * 1024)
    repos.append(Repo(f"{OWNER}/too-big", big))
    from transformers import BertConfig

    bert = root / "bert"
    bert.mkdir()
    (bert / "config.json").write_text(BertConfig().to_json_string())
    (bert / "model.safetensors").write_bytes(b"\0" * 1024)
    repos.append(Repo(f"{OWNER}/bert", bert))
    marker = root / "remote-code-ran"
    repos.append(Repo(f"{OWNER}/remote-code", remote_code_repo(root / "remote-code", marker)))
    server = HubStandIn(repos)
    server.marker = marker
    yield server
    server.stop()


@pytest.fixture
def hub(hub_server, tmp_path, monkeypatch):
    """The session's stand-in as the hub of this test: HF_ENDPOINT points at it, an empty cache,
    online, the request log empty."""
    from lib.model import hub as hub_lib

    monkeypatch.setenv("HF_ENDPOINT", hub_server.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # read once at import, from the environment then
    hub_lib.forget_unreachable()
    hub_server.reset()
    yield hub_server
    hub_lib.forget_unreachable()
