"""Server settings a teacher or an operator sets in the environment (docs/deploy.md, "Settings").

- `ITT_CAPTURE_BUDGET_MB` (default 384): bytes, in MB, that all cached captures may hold together,
  shared by every learner of the server; the least recently used capture goes first.
- `ITT_HUB_MODELS` (default "on"): "off" keeps learners to the built-in model; a request for a
  Hugging Face model then gets a message saying this server does not load them.
- `ITT_HUB_MAX_PARAMS_M` (default 1500): the largest hub model the server loads, in millions of
  parameters (checked from its config before any weight is downloaded).

At most one hub model is resident beside the built-in one, whatever these say.
Example: Settings.from_env({"ITT_HUB_MODELS": "off"}).hub_models -> False
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

OFF = {"off", "0", "false", "no"}


@dataclass(frozen=True)
class Settings:
    capture_budget_bytes: int = 384 * 2**20
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
            capture_budget_bytes=int(number("ITT_CAPTURE_BUDGET_MB", default.capture_budget_bytes / 2**20) * 2**20),
            hub_models=env.get("ITT_HUB_MODELS", "on").strip().lower() not in OFF,
            hub_max_params=int(number("ITT_HUB_MAX_PARAMS_M", default.hub_max_params / 1e6) * 1e6),
        )
