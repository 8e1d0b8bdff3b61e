"""The Hugging Face Hub as the course meets it: is it reachable, what a repository holds, and its
files downloaded into the local cache with progress a page can show.

Every network access for a hub model goes through here, with huggingface_hub's own client
(`HfApi.model_info`, `hf_hub_download`): one listing of the repository (names and sizes of its
files, pinned to one commit), then the files the course needs, one by one, into the standard
Hugging Face cache (`HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`).
transformers then reads that folder and never touches the network itself.

A machine without internet is told so within seconds: `reachable()` opens one TCP connection to
the hub (or to the proxy in between) with a short timeout before anything else, and remembers a
failure for `OFFLINE_MEMORY` seconds so that the next learner does not wait again. In offline
mode, or when the hub cannot be reached, a model already in the cache (`hf download`) still loads.

Deliberately left out: tokens and private or gated repositories, datasets, uploads, any file
holding code (`*.py` is never fetched), weights in a format other than safetensors.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

DEFAULT_ENDPOINT = "https://huggingface.co"
REACH_TIMEOUT = 3.0  # seconds for the first TCP connection to the hub
OFFLINE_MEMORY = 120.0  # seconds an unreachable hub is remembered as such
LISTING_TIMEOUT = 10.0  # seconds for the repository listing, once the hub is known to answer
REPORT_EVERY = 0.25  # seconds between two progress reports of a download
# huggingface_hub counts a plain HTTP download's progress once per chunk it reads, 10 MB by default:
# ten seconds between two reports on a 1 MB/s school line. A quarter of a megabyte keeps the bar
# moving and costs nothing measurable (Xet downloads report on their own rhythm).
CHUNK_BYTES = 256 * 1024

# Files a tokenizer or generation defaults may need, besides config.json and the weights.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json", "merges.txt",
                   "tokenizer.model", "added_tokens.json", "generation_config.json", "chat_template.jinja",
                   "chat_template.json")
SAFETENSORS = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"


def endpoint() -> str:
    """The hub's address: `HF_ENDPOINT` (a mirror, or the test suite's stand-in), else huggingface.co.

    Read at each call (huggingface_hub reads it once, at import). Example: endpoint() -> "https://huggingface.co"
    """
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def cache_folder() -> Path:
    """The Hugging Face cache this course reads and writes, the one `hf download` fills."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def offline_mode() -> bool:
    """Whether the teacher set `HF_HUB_OFFLINE=1` (or `TRANSFORMERS_OFFLINE=1`): only the cache is read."""
    return any(os.environ.get(v, "").strip().upper() in ("1", "ON", "YES", "TRUE")
               for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


# ------------------------------------------------------------------------------------ reachability

_unreachable: dict[str, float] = {}  # "host:port" -> when it last failed
_unreachable_lock = threading.Lock()


def _target(url: str) -> tuple[str, int]:
    """The host and port a request to `url` really connects to: the proxy's when one is set for it."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        p = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        return p.hostname or "", p.port or (443 if p.scheme == "https" else 80)
    return host, parts.port or (443 if parts.scheme == "https" else 80)


def _connects(host: str, port: int, timeout: float) -> bool:
    """Whether a TCP connection opens within `timeout` seconds, name resolution included.

    The resolver has no timeout of its own (a machine with a configured but unreachable DNS server
    waits for it), so the attempt runs in a daemon thread that is simply not waited for longer.
    """
    result: list[bool] = []

    def attempt() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                result.append(True)
        except OSError:
            result.append(False)

    worker = threading.Thread(target=attempt, daemon=True, name="hub-reachable")
    worker.start()
    worker.join(timeout)
    return bool(result and result[0])


def reachable(url: str | None = None, timeout: float = REACH_TIMEOUT) -> bool:
    """Whether the hub at `url` (default: `endpoint()`) accepts a connection within `timeout` seconds.

    A failure is remembered for `OFFLINE_MEMORY` seconds (answered at once meanwhile); a success is
    not remembered, it costs one connection. Example: reachable("http://nonexistent.invalid") -> False
    """
    host, port = _target(url or endpoint())
    key = f"{host}:{port}"
    with _unreachable_lock:
        failed = _unreachable.get(key)
        if failed is not None and time.monotonic() - failed < OFFLINE_MEMORY:
            return False
    ok = bool(host) and _connects(host, port, timeout)
    with _unreachable_lock:
        if ok:
            _unreachable.pop(key, None)
        else:
            _unreachable[key] = time.monotonic()
    return ok


def forget_unreachable() -> None:
    """Forget every remembered failure (the next request checks again)."""
    with _unreachable_lock:
        _unreachable.clear()


# ------------------------------------------------------------------------------------ listing


@dataclass(frozen=True)
class Listing:
    """A repository's top-level files at one commit: name -> size in bytes (None if the hub did not say)."""

    repo_id: str
    sha: str
    files: dict[str, int | None]

    def weights(self) -> list[str]:
        """The safetensors weights transformers reads: one file, or the index (its shards come after it)."""
        if SAFETENSORS in self.files:
            return [SAFETENSORS]
        if SAFETENSORS_INDEX in self.files:
            return [SAFETENSORS_INDEX]
        return []

    def other_weights(self) -> list[str]:
        """Weights in formats this course does not load (pickled PyTorch, TensorFlow, Flax, GGUF...)."""
        return [f for f in self.files if f.endswith((".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".gguf"))]

    def tokenizer_files(self) -> list[str]:
        return [f for f in TOKENIZER_FILES if f in self.files]


def listing(repo_id: str, timeout: float = LISTING_TIMEOUT) -> Listing:
    """The repository's files and their sizes, from one `api/models/<id>?blobs=true` request.

    Raises huggingface_hub's errors (RepositoryNotFoundError for an unknown or private id) and
    httpx2's (ConnectError, TimeoutException) as they come.
    Example: listing("gpt2").weights() -> ["model.safetensors"]
    """
    from huggingface_hub import HfApi

    info = HfApi(endpoint=endpoint()).model_info(repo_id, files_metadata=True, timeout=timeout)
    files = {s.rfilename: s.size for s in (info.siblings or []) if "/" not in s.rfilename}
    return Listing(repo_id=repo_id, sha=str(info.sha or "main"), files=files)


def cached_snapshot(repo_id: str) -> Path | None:
    """The cache's folder of a repository already downloaded, if one holds a config: the `main`
    revision's (what `hf download` records), else the newest snapshot (what `download` leaves:
    it asks for one commit, and the cache then records no branch).

    Example: after `hf download gpt2`, cached_snapshot("gpt2") -> ~/.cache/huggingface/hub/models--gpt2/snapshots/<sha>
    """
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.file_download import repo_folder_name

    path = try_to_load_from_cache(repo_id, "config.json", cache_dir=str(cache_folder()))
    if isinstance(path, str):
        return Path(path).parent
    snapshots = cache_folder() / repo_folder_name(repo_id=repo_id, repo_type="model") / "snapshots"
    configs = sorted(snapshots.glob("*/config.json"), key=lambda p: p.stat().st_mtime) if snapshots.is_dir() else []
    return configs[-1].parent if configs else None


# ------------------------------------------------------------------------------------ download


@dataclass(frozen=True)
class DownloadStatus:
    """Where a download stands: the current file (index from 1) and the whole set, in bytes.

    `speed` is bytes per second since the first byte of this download; `eta` the seconds left at
    that speed (None until it is known).
    """

    file: str
    index: int
    n_files: int
    done: int
    total: int | None
    all_done: int
    all_total: int
    speed: float
    eta: float | None

    @property
    def fraction(self) -> float:
        """Share of all bytes downloaded. Example: 50 of 200 bytes -> 0.25"""
        return min(1.0, self.all_done / self.all_total) if self.all_total else 0.0


Report = Callable[[DownloadStatus], None]


class _Tracker:
    """Bytes done per file and overall, reported at most every REPORT_EVERY seconds (and at each
    file's end). One per download; the bar class below feeds it."""

    def __init__(self, sizes: dict[str, int | None], report: Report, clock: Callable[[], float] = time.monotonic):
        self.sizes, self.report, self.clock = sizes, report, clock
        self.names = list(sizes)
        self.all_total = sum(s or 0 for s in sizes.values())
        self.before = 0  # bytes of the files finished (or found in the cache) before the current one
        self.file, self.done, self.started, self.last, self.fetched = "", 0, None, float("-inf"), 0

    def begin(self, name: str) -> None:
        self.file, self.done = name, 0

    def end(self, name: str) -> None:
        size = self.sizes.get(name) or self.done
        self.before += size
        self.done = size
        self._send(force=True)

    def add(self, n: int) -> None:
        now = self.clock()
        if self.started is None:
            self.started = now
        self.done += n
        self.fetched += n
        if now - self.last >= REPORT_EVERY:
            self._send()

    def _send(self, force: bool = False) -> None:
        now = self.clock()
        self.last = now
        elapsed = now - self.started if self.started is not None else 0.0
        speed = self.fetched / elapsed if elapsed > 0 else 0.0
        all_done = min(self.before + (0 if force else self.done), self.all_total) if self.all_total else 0
        eta = (self.all_total - all_done) / speed if speed > 0 and self.all_total else None
        self.report(DownloadStatus(file=self.file, index=self.names.index(self.file) + 1, n_files=len(self.names),
                                   done=self.done, total=self.sizes.get(self.file), all_done=all_done,
                                   all_total=self.all_total, speed=speed, eta=eta))


def _bar_class(tracker: _Tracker) -> type:
    """A tqdm stand-in for huggingface_hub's `tqdm_class`: it draws nothing and counts bytes into
    `tracker`. huggingface_hub builds it with tqdm's keyword arguments and calls `update(n)` per
    chunk (plain HTTP) or per reconstructed piece (Xet, which also calls `update_transfer`)."""

    class PageBar:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.n = kwargs.get("initial") or 0
            self.total = kwargs.get("total")
            if self.n:
                tracker.add(self.n)

        def update(self, n: int | float = 1) -> None:
            self.n += n
            tracker.add(int(n))

        def update_transfer(self, n: int | float = 1) -> None:  # Xet's network bytes: `update` counts the file's
            pass

        def close(self) -> None:
            pass

        def __enter__(self) -> "PageBar":
            return self

        def __exit__(self, *exc: Any) -> None:
            self.close()

        def __getattr__(self, name: str) -> Callable[..., None]:
            # refresh, set_description, set_postfix, reset...: nothing to draw.
            return lambda *a, **k: None

    return PageBar


def download(lst: Listing, names: list[str], report: Report | None = None) -> Path:
    """Download `names` of the listed repository (at its pinned commit) into the cache; return
    the snapshot folder. Files already there are not fetched again. `report` gets a DownloadStatus
    per file and every REPORT_EVERY seconds meanwhile.

    Example: download(listing("gpt2"), ["config.json", "model.safetensors"]) -> .../models--gpt2/snapshots/<sha>
    """
    from huggingface_hub import constants, hf_hub_download

    constants.DOWNLOAD_CHUNK_SIZE = min(constants.DOWNLOAD_CHUNK_SIZE, CHUNK_BYTES)  # read at each download
    tracker = _Tracker({n: lst.files.get(n) for n in names}, report or (lambda s: None))
    bar = _bar_class(tracker)
    folder = None
    for name in names:
        tracker.begin(name)
        path = hf_hub_download(lst.repo_id, name, revision=lst.sha, cache_dir=str(cache_folder()),
                               endpoint=endpoint(), tqdm_class=bar, etag_timeout=LISTING_TIMEOUT)
        tracker.end(name)
        folder = Path(path).parent
    assert folder is not None, "nothing to download"
    return folder
