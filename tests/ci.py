"""One rule for what a test needs from the machine: missing here, it skips; on CI (CI=true), it
fails, so a check that must run there never passes by being skipped."""

from __future__ import annotations

import os
import shutil

import pytest


def on_ci() -> bool:
    return os.environ.get("CI") == "true"


def skip_or_fail(reason: str) -> None:
    """Skip the test for `reason`, or fail it when CI=true.

    Example: `if shutil.which("hf") is None: skip_or_fail("the hf command is not installed")`
    """
    if on_ci():
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


def need(tool: str) -> str:
    """The path of the command `tool`; a missing one skips the test here and fails it on CI."""
    path = shutil.which(tool)
    if path is None:
        skip_or_fail(f"{tool} is missing: run `make test` as root (scripts/setup.sh --test installs it)")
    return path
