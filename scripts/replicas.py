"""A class on one machine in one command: N replicas of the course and nginx in front.

    make replicas N=2              # or: .venv/bin/python scripts/replicas.py --replicas 2
    open http://<this machine>:8080 and give that address to the class; Ctrl-C stops everything

Replica i is `streamlit run app.py` on 127.0.0.1:(first_port + i); nginx, run as this user with the
configuration deploy/nginx/render.py writes (`--standalone`: pid, logs and temporary files under
`.replicas/`), listens on `--listen` and keeps each learner on one replica (see docs/deploy.md).
`--check` writes the configuration, runs `nginx -t` on it and starts nothing.

Left out on purpose: TLS, restarts of a replica that stops (systemd's inside-transformer@.service
does that on a server), and running as a service.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "deploy" / "nginx"))
sys.path.insert(0, str(REPO))
import render  # noqa: E402  (deploy/nginx/render.py)
from lib.serving.settings import replica_env  # noqa: E402  (each replica's share of the cores)

STATE = REPO / ".replicas"


def nginx_binary() -> str:
    found = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(found).exists():
        sys.exit("nginx is not installed: `sudo apt-get install nginx` (Debian, Ubuntu)")
    return found


def configure(replicas: int, first_port: int, listen: str, prefix: Path = STATE) -> Path:
    """Write nginx's whole configuration for `replicas` replicas under `prefix`; its path."""
    prefix.mkdir(parents=True, exist_ok=True)
    return render.write_standalone(prefix, render.ports_for(replicas, first_port), listen)


def check(conf: Path, prefix: Path = STATE) -> subprocess.CompletedProcess:
    """`nginx -t` on the configuration (nginx's own verdict on its syntax and files)."""
    return subprocess.run([nginx_binary(), "-t", "-c", str(conf), "-p", str(prefix)], capture_output=True, text=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--first-port", type=int, default=8601)
    ap.add_argument("--listen", default="8080", help="nginx's listen argument: 8080, 0.0.0.0:80 (root)...")
    ap.add_argument("--check", action="store_true", help="write the configuration, run nginx -t, start nothing")
    args = ap.parse_args()
    if args.replicas < 1:
        ap.error("--replicas must be at least 1")
    conf = configure(args.replicas, args.first_port, args.listen)
    verdict = check(conf)
    if verdict.returncode != 0 or args.check:
        print(verdict.stderr.strip())
        return verdict.returncode
    streamlit = REPO / ".venv" / "bin" / "streamlit"
    procs: list[subprocess.Popen] = []
    try:
        for port in render.ports_for(args.replicas, args.first_port):
            procs.append(subprocess.Popen([str(streamlit) if streamlit.exists() else "streamlit", "run", "app.py",
                                           "--server.address", "127.0.0.1", "--server.port", str(port),
                                           "--server.headless", "true"], cwd=REPO,
                                          env=replica_env(os.environ, args.replicas)))
        for port in render.ports_for(args.replicas, args.first_port):
            while not render.healthy(f"http://127.0.0.1:{port}"):  # the model loads once per replica
                if any(p.poll() is not None for p in procs):
                    print("a replica stopped while starting: see its messages above", file=sys.stderr)
                    return 1
                time.sleep(0.5)
        procs.append(subprocess.Popen([nginx_binary(), "-c", str(conf), "-p", str(STATE)]))
        print(f"{args.replicas} replicas behind nginx on {args.listen}: Ctrl-C stops them all", flush=True)
        while all(p.poll() is None for p in procs):
            time.sleep(1)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    sys.exit(main())
