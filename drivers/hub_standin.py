"""A local stand-in of the Hugging Face Hub's file API, for tests that take the real download path.

The real clients (huggingface_hub, then transformers reading the cache) talk to it through
`HF_ENDPOINT`; nothing of theirs is mocked. It answers what huggingface_hub asks for a model:

- `GET /api/models/<id>` and `/api/models/<id>/revision/<rev>` (`?blobs=true`): the model info,
  with the commit (`sha`) and every file's name and size (`siblings`).
- `GET /api/models/<id>/tree/<rev>`: the file listing.
- `HEAD` and `GET /<id>/resolve/<rev>/<file>`: a file, with the headers hf_hub_download needs
  (`X-Repo-Commit`, `ETag`, `Content-Length`, and for weights `X-Linked-Size`/`X-Linked-Etag`);
  `Range: bytes=N-` resumes.
- Errors as the hub sends them: 404 with `X-Error-Code: RepoNotFound`, `EntryNotFound` or
  `RevisionNotFound`.

Every request is recorded (`requests`), a repository can be throttled (`throttle`, bytes per
second) and a server can go away in the middle of a file (`die_after`, bytes sent of that file).
Repositories are folders on disk (`Repo`), built here from tiny random models (`build_repo`).
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

WEIGHT_SUFFIXES = (".safetensors", ".bin")
CHUNK = 16 * 1024

_API = re.compile(r"^/api/models/(?P<repo>[^/]+(?:/[^/]+)??)(?:/revision/(?P<rev>[^/]+)|/tree/(?P<tree>[^/]+))?$")
_RESOLVE = re.compile(r"^/(?P<repo>[^/]+(?:/[^/]+)?)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")


@dataclass
class Repo:
    """One repository: its files (read from `folder`), a fixed commit, and how it is served."""

    repo_id: str
    folder: Path
    throttle: int | None = None  # bytes per second for files above CHUNK bytes
    die_after: int | None = None  # the server goes away after sending this many bytes of a weight file
    sha: str = ""
    files: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sha = hashlib.sha1(self.repo_id.encode()).hexdigest()
        self.files = {p.name: p.read_bytes() for p in sorted(self.folder.iterdir()) if p.is_file()}

    def info(self) -> dict:
        siblings = []
        for name, data in self.files.items():
            s = {"rfilename": name, "size": len(data), "blobId": hashlib.sha1(data).hexdigest()}
            if name.endswith(WEIGHT_SUFFIXES):
                s["lfs"] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "pointerSize": 134}
            siblings.append(s)
        config = json.loads(self.files["config.json"]) if "config.json" in self.files else {}
        return {"id": self.repo_id, "modelId": self.repo_id, "sha": self.sha, "private": False, "gated": False,
                "disabled": False, "siblings": siblings, "tags": ["transformers"],
                "config": {k: config[k] for k in ("model_type", "architectures", "auto_map") if k in config},
                "lastModified": "2026-01-01T00:00:00.000Z"}


class HubStandIn:
    """The server: `url` for HF_ENDPOINT, `requests` as (method, path) in arrival order."""

    def __init__(self, repos: list[Repo]):
        self.repos = {r.repo_id: r for r in repos}
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet test output
                pass

            def do_HEAD(self) -> None:
                stand_in._handle(self, head=True)

            def do_GET(self) -> None:
                stand_in._handle(self, head=False)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True, name="hub-stand-in")
        self._thread.start()
        self.gone = False

    def stop(self) -> None:
        """Stop answering and close the port (what a hub that goes away looks like to a client)."""
        if not self.gone:
            self.gone = True
            self.server.shutdown()
            self.server.server_close()

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()

    def requested(self, repo_id: str, suffixes: tuple[str, ...] = WEIGHT_SUFFIXES) -> list[tuple[str, str]]:
        """The requests for `repo_id`'s files ending with `suffixes` (by default, its weights)."""
        with self._lock:
            return [(m, p) for m, p in self.requests
                    if f"/{repo_id}/resolve/" in p and p.split("?")[0].endswith(suffixes)]

    # -- answering
    def _handle(self, h: BaseHTTPRequestHandler, head: bool) -> None:
        path = h.path.split("?")[0]
        with self._lock:
            self.requests.append((h.command, h.path))
        m = _API.match(path)
        if m and not head:
            repo = self.repos.get(m["repo"])
            if repo is None:
                return self._error(h, 404, "RepoNotFound", "Repository not found")
            rev = m["rev"] or m["tree"]
            if rev is not None and rev not in ("main", repo.sha):
                return self._error(h, 404, "RevisionNotFound", "Invalid rev id")
            if m["tree"] is not None:
                body = [{"type": "file", "path": n, "size": len(d), "oid": hashlib.sha1(d).hexdigest()}
                        for n, d in repo.files.items()]
                return self._json(h, body)
            return self._json(h, repo.info())
        m = _RESOLVE.match(path)
        if m:
            repo = self.repos.get(m["repo"])
            if repo is None:
                return self._error(h, 404, "RepoNotFound", "Repository not found")
            if m["rev"] not in ("main", repo.sha):
                return self._error(h, 404, "RevisionNotFound", "Invalid rev id")
            data = repo.files.get(m["file"])
            if data is None:
                return self._error(h, 404, "EntryNotFound", "Entry not found", repo.sha)
            return self._file(h, repo, m["file"], data, head)
        self._error(h, 404, None, "Not found")

    def _error(self, h, status: int, code: str | None, message: str, sha: str | None = None) -> None:
        body = json.dumps({"error": message}).encode()
        h.send_response(status)
        if code:
            h.send_header("X-Error-Code", code)
        h.send_header("X-Error-Message", message)
        if sha:
            h.send_header("X-Repo-Commit", sha)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)

    def _json(self, h, obj) -> None:
        body = json.dumps(obj).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def _file(self, h, repo: Repo, name: str, data: bytes, head: bool) -> None:
        start = 0
        rng = h.headers.get("Range")
        if rng and (m := re.match(r"bytes=(\d+)-$", rng.strip())):
            start = min(int(m[1]), len(data))
        etag = hashlib.sha256(data).hexdigest() if name.endswith(WEIGHT_SUFFIXES) else hashlib.sha1(data).hexdigest()
        h.send_response(206 if start else 200)
        h.send_header("X-Repo-Commit", repo.sha)
        h.send_header("ETag", f'"{etag}"')
        if name.endswith(WEIGHT_SUFFIXES):
            h.send_header("X-Linked-Etag", f'"{etag}"')
            h.send_header("X-Linked-Size", str(len(data)))
        if start:
            h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        h.send_header("Content-Length", str(len(data) - start))
        h.send_header("Accept-Ranges", "bytes")
        h.end_headers()
        if head:
            return
        body = memoryview(data)[start:]
        sent = 0
        throttle = repo.throttle if len(data) > CHUNK else None
        for i in range(0, len(body), CHUNK):
            piece = body[i:i + CHUNK]
            if repo.die_after is not None and name.endswith(WEIGHT_SUFFIXES) and sent + len(piece) > repo.die_after:
                h.wfile.write(piece[:max(0, repo.die_after - sent)])
                h.wfile.flush()
                h.close_connection = True
                threading.Thread(target=self.stop, daemon=True).start()
                try:
                    h.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            try:
                h.wfile.write(piece)
            except OSError:
                return
            sent += len(piece)
            if throttle:
                time.sleep(len(piece) / throttle)


# ------------------------------------------------------------------------------------ repositories


def build_repo(folder: Path, config, tokenizer, weights: str = "safetensors") -> Path:
    """Save a tiny random model of `config` (seeded) with `tokenizer` as a hub repository folder.

    `weights`: "safetensors" (what the course loads) or "bin" (pickled PyTorch only).
    """
    import torch
    from transformers import AutoModelForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    if weights == "bin":
        torch.save(model.state_dict(), folder / "pytorch_model.bin")
        (folder / "model.safetensors").unlink()
    return folder


def remote_code_repo(folder: Path, marker: Path) -> Path:
    """A repository whose config names its own architecture and code (auto_map); that code, if ever
    imported, would write `marker`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({
        "model_type": "evil_llama", "architectures": ["EvilForCausalLM"],
        "auto_map": {"AutoConfig": "configuration_evil.EvilConfig", "AutoModelForCausalLM": "modeling_evil.EvilForCausalLM"},
        "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 257}))
    code = f"from pathlib import Path\nPath({str(marker)!r}).write_text('executed')\n"
    (folder / "configuration_evil.py").write_text(code)
    (folder / "modeling_evil.py").write_text(code)
    (folder / "model.safetensors").write_bytes(b"\0" * 64)
    return folder


# ------------------------------------------------------------------------------------ families
# The fixtures `hub_server` and `hub` that serve them are in tests/conftest.py.

OWNER = "standin"


def family_configs() -> dict[str, object]:
    """Tiny configs of every supported family, and the Gemma 3 layer patterns: mixed (two RoPE
    bases), local only, global only, and mixed with one base for both."""
    from transformers import (Gemma3TextConfig, GPT2Config, LlamaConfig, MistralConfig, Qwen2Config,
                              Qwen3Config)

    small = dict(vocab_size=257, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=128, tie_word_embeddings=False)

    def gemma(types, local_base=10.0, global_base=10000.0):
        return Gemma3TextConfig(
            vocab_size=257, hidden_size=32, intermediate_size=64, num_hidden_layers=len(types), num_attention_heads=4,
            num_key_value_heads=1, head_dim=16, max_position_embeddings=128, sliding_window=4, layer_types=types,
            rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": local_base},
                             "full_attention": {"rope_type": "default", "rope_theta": global_base}},
            query_pre_attn_scalar=16, pad_token_id=0, bos_token_id=2, eos_token_id=1)

    local, full = "sliding_attention", "full_attention"
    return {
        "tiny-gpt2": GPT2Config(vocab_size=257, n_embd=32, n_layer=2, n_head=4, n_positions=128, bos_token_id=256,
                                eos_token_id=256),
        "tiny-llama": LlamaConfig(**small),
        "tiny-qwen2": Qwen2Config(**small),
        "tiny-qwen3": Qwen3Config(**small, head_dim=8),
        "tiny-mistral": MistralConfig(**small, sliding_window=4),
        "tiny-gemma3": gemma([local, local, full]),
        "tiny-gemma3-local": gemma([local, local, local]),
        "tiny-gemma3-global": gemma([full, full, full]),
        "tiny-gemma3-one-base": gemma([local, full, local], local_base=10000.0),
    }


FAMILIES = tuple(family_configs())
