"""Server settings a teacher or an operator sets in the environment (docs/deploy.md, "Settings").

- `ITT_CACHE_BUDGET_MB` (default 384): bytes, in MB, that everything the server caches of the
  models' work may hold together (the captures and what the lessons derive from them), shared by
  every learner of the server; the least recently used entry goes first.
- `ITT_HUB_MODELS` (default "on"): "off" keeps learners to the built-in model; a request for a
  Hugging Face model then gets a message saying this server does not load them.
- `ITT_HUB_MAX_PARAMS_M` (default 1500): the largest hub model the server loads, in millions of
  parameters (checked from its config before any weight is downloaded).

At most one hub model is resident beside the built-in one, whatever these say.
Example: Settings.from_env({"ITT_HUB_MODELS": "off"}).hub_models -> False

`replica_env` gives each of several replicas on one machine its share of the cores as torch's
thread count (`OMP_NUM_THREADS`, read by torch at start), unless the operator set one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

OFF = {"off", "0", "false", "no"}


@dataclass(frozen=True)
class Settings:
    cache_budget_bytes: int = 384 * 2**20
    hub_models: bool = True
    hub_max_params: int = 1_500_000_000

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Settings":
        """Read the settings; a malformed value keeps its default (and never stops the server)."""
        env = os.environ if env is None else env
        default = cls()

        def number(name: str, fallback: float) -> float:
            try:
                value = float(env.get(name, ""))
            except ValueError:
                return fallback
            return value if value > 0 else fallback

        return cls(
            cache_budget_bytes=int(number("ITT_CACHE_BUDGET_MB", default.cache_budget_bytes / 2**20) * 2**20),
            hub_models=env.get("ITT_HUB_MODELS", "on").strip().lower() not in OFF,
            hub_max_params=int(number("ITT_HUB_MAX_PARAMS_M", default.hub_max_params / 1e6) * 1e6),
        )


def threads_per_replica(replicas: int, cores: int | None = None) -> int:
    """torch's threads for each of `replicas` servers on one machine of `cores` cores (default: this
    one's): its share, at least 1.

    Two threads per forward pass on two cores are faster for one learner, but with two replicas (or
    a forward pass and a logit lens at once) they are four threads on two cores: the OpenMP workers
    wait for each other spinning, CPU no learner gets (docs/performance.md, "Threads").
    Example: threads_per_replica(2, 2) -> 1; threads_per_replica(1, 4) -> 4; threads_per_replica(3, 8) -> 2
    """
    cores = cores or os.cpu_count() or 1
    return max(1, cores // max(1, replicas))


def replica_env(env: Mapping[str, str], replicas: int, cores: int | None = None) -> dict[str, str]:
    """`env` for a replica: OMP_NUM_THREADS set to its share of the cores, unless `env` has one.

    Example: replica_env({}, 2, 2)["OMP_NUM_THREADS"] -> "1"
    """
    out = dict(env)
    out.setdefault("OMP_NUM_THREADS", str(threads_per_replica(replicas, cores)))
    return out
