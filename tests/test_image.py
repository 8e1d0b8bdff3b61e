"""The container image, built and run for real: `make image`, then one container of it with podman.

The container runs as the image's user (uid 10001), with a read-only root file system and the
learner's home (the class store's SQLite file, the hub models' cache) on a folder mounted from the
host, on a free port of the host network. The test waits for Streamlit's health check, runs the
image's own HEALTHCHECK, opens a lesson through Streamlit's websocket protocol (drivers.stclient)
and in Chromium, then checks that every process of the container runs as 10001, that `podman diff`
finds nothing written to the image's file system, and that the server never met a read-only file
system in its log.

The build is `make image` itself (deploy/build-image.sh), with ENGINE=podman: podman's layer cache
and the Debian base's tar (.cache/image/) make a second run take seconds while the sources the
build copies are unchanged. Without podman the test skips, or fails under CI=true (`make test`
installs podman as root: scripts/setup.sh --test).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from drivers.browser import CHROMIUM, CHROMIUM_ARGS, _free_port, goto, healthy, track
from drivers.stclient import Learner
from lib.course import i18n
from tests import image_build
from tests.ci import need

pytestmark = pytest.mark.slow

UID = 10001
# podman where crun refuses the machine's cgroup layout (deploy/build-image.sh builds with the same).
PODMAN = ["podman", "--runtime", "runc"]
RUN_FLAGS = ["--ulimit", "nofile=20000:20000", "--ulimit", "nproc=4096:4096", "--network", "host"]
START_TIMEOUT_S = 180    # the container's server answering its health check
LESSON = "tokenization"


def _podman() -> list[str]:
    need("podman")
    if shutil.which("runc") is None:
        return ["podman"]
    return PODMAN


def _diff(podman: list[str], container: str) -> set[str]:
    """`podman diff`: the paths the container changed in its image's file system ("C /etc", "A /x")."""
    r = subprocess.run([*podman, "diff", container], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return {line.strip() for line in r.stdout.splitlines() if line.strip()}


def image_name(container: str) -> str:
    """The image a container runs (by id: the tag may have moved on since)."""
    return subprocess.run(["podman", "inspect", "-f", "{{.Image}}", container], capture_output=True, text=True,
                          timeout=60).stdout.strip()


def _run(scenario) -> None:
    """An async scenario on its own thread (Playwright's sync API may own this thread's loop)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, scenario()).result()


@pytest.fixture(scope="module")
def container(image, tmp_path_factory):
    """One container of the image: (name, url, home folder on the host)."""
    podman = _podman()
    home = tmp_path_factory.mktemp("learner-home")
    os.chown(home, UID, UID)
    port = _free_port()
    name = f"itt-image-test-{os.getpid()}"
    subprocess.run([*podman, "rm", "-f", name], capture_output=True)
    r = subprocess.run([*podman, "run", "-d", "--name", name, *RUN_FLAGS, "--read-only",
                        "--user", f"{UID}:{UID}", "-v", f"{home}:/home/learner",
                        "-e", f"STREAMLIT_SERVER_PORT={port}", image],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not healthy(url):
            state = subprocess.run([*podman, "inspect", "-f", "{{.State.Running}}", name],
                                   capture_output=True, text=True).stdout.strip()
            if state != "true" or time.monotonic() > deadline:
                logs = subprocess.run([*podman, "logs", name], capture_output=True, text=True)
                pytest.fail(f"the container never became healthy (running: {state}):\n"
                            f"{(logs.stdout + logs.stderr)[-4000:]}", pytrace=False)
            time.sleep(1)
        yield name, url, home
    finally:
        subprocess.run([*podman, "rm", "-f", "-t", "10", name], capture_output=True, timeout=120)


@pytest.mark.timeout(image_build.BUILD_TIMEOUT_S + 600)
def test_the_image_serves_a_lesson_as_its_user_on_a_read_only_root(container):
    podman = _podman()
    name, url, home = container

    # The image's own HEALTHCHECK (kept by the docker format of the build) passes.
    r = subprocess.run([*podman, "healthcheck", "run", name], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr

    # A lesson over HTTP, through Streamlit's own websocket protocol: its title, no exception.
    title = i18n.ui("en")[f"lesson.{LESSON}.title"]

    async def learner():
        async with Learner(url, LESSON, "lang=en", timeout_s=240) as me:
            await me.open()
            return me.exceptions, me.texts()

    out: dict = {}

    async def scenario():
        out["exceptions"], out["texts"] = await learner()

    _run(scenario)
    assert out["exceptions"] == []
    assert any(title in t for t in out["texts"]), out["texts"][:10]

    # The same lesson in Chromium, when it is here (tests/e2e need it anyway).
    if os.path.exists(CHROMIUM):
        def in_chromium() -> None:
            # On a thread of its own: the browser tests' Playwright (a session fixture) may hold this one.
            from playwright.sync_api import sync_playwright

            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
                try:
                    page = browser.new_page(viewport={"width": 1280, "height": 900})
                    track(page)
                    goto(page, f"{url}/{LESSON}?lang=en", title, timeout=240_000)
                    assert page.locator('[data-testid="stException"]').count() == 0
                finally:
                    browser.close()

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(in_chromium).result()
    elif os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {CHROMIUM} is missing", pytrace=False)

    # Every process of the container runs as the image's user, none as root.
    r = subprocess.run([*podman, "top", name, "huser", "user", "args"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = [line.split(None, 2) for line in r.stdout.splitlines()[1:] if line.strip()]
    assert rows and all(row[0] == str(UID) for row in rows), r.stdout
    assert any("streamlit" in row[2] for row in rows), r.stdout

    # Nothing written outside the volume: the container's layer holds no more than that of a
    # container of the same image that ran nothing (podman's own mount points: /etc/hosts,
    # /etc/resolv.conf...), and the server never met the read-only root in its log.
    changed = _diff(podman, name)
    baseline = f"{name}-baseline"
    subprocess.run([*podman, "run", "--name", baseline, *RUN_FLAGS, "--read-only", "--user", f"{UID}:{UID}",
                    "-v", f"{home}:/home/learner", image_name(name), "true"],
                   capture_output=True, text=True, timeout=120)
    try:
        assert changed <= _diff(podman, baseline), sorted(changed)
    finally:
        subprocess.run([*podman, "rm", "-f", baseline], capture_output=True, timeout=60)
    logs = subprocess.run([*podman, "logs", name], capture_output=True, text=True, timeout=60)
    assert "Read-only file system" not in logs.stdout + logs.stderr, (logs.stdout + logs.stderr)[-4000:]
    # What the server did write went to the volume, owned by the learner's user.
    written = [p for p in Path(home).rglob("*")]
    assert all(p.stat().st_uid == UID for p in written), [(p, p.stat().st_uid) for p in written]
