"""`make image` once per test process, for the two files that run the image (test_image.py,
test_compose.py; one unit on one worker, tests/schedule.py): the second found every layer cached
and still paid about a minute of podman reading the 2 GB its `COPY --from` steps copy."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import time

from drivers.browser import REPO
from tests.ci import need

IMAGE = "inside-transformer"
BUILD_TIMEOUT_S = 3000   # a cold build: base, pip install, model conversion (docs/deploy.md)


@functools.cache
def make_image(podman_flags: str | None = None) -> tuple[int, str]:
    """`make image` with podman (`podman_flags`: PODMAN_FLAGS, None for the script's default; runc
    where the machine has it): (its exit status, its output's end); its time is printed."""
    env = dict(os.environ, ENGINE="podman", IMAGE=IMAGE)
    if podman_flags is not None:
        env["PODMAN_FLAGS"] = podman_flags
    start = time.monotonic()
    r = subprocess.run(["make", "--no-print-directory", "image"], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=BUILD_TIMEOUT_S)
    print(f"\n[image] make image: {time.monotonic() - start:.0f} s")
    return r.returncode, (r.stdout + r.stderr)[-6000:]


def built() -> str:
    """The image's name, once `make image` has built it (the `image` fixture, tests/conftest.py)."""
    need("podman")
    status, output = make_image(podman_flags())
    assert status == 0, output
    return IMAGE


def podman_flags() -> str | None:
    """PODMAN_FLAGS for this machine: the script's default (runc) where runc is installed, else none."""
    return None if shutil.which("runc") else ""
