"""Render the nginx configuration for N replicas of the course on one machine.

    python3 deploy/nginx/render.py --replicas 3 > /etc/nginx/conf.d/inside-transformer.conf

Replica i listens on 127.0.0.1:(first_port + i) (deploy/nginx/inside-transformer@.service starts
them). nginx in front spreads the learners and keeps each one on their replica:

- A learner with no cookie yet (their first request) goes to the next replica, round robin over
  all of them; the answer sets the cookie `itt_replica=r<i>` naming the replica that served it.
- A learner with the cookie goes back to that replica, for every HTTP request and for the
  websocket that carries the whole Streamlit session (upgrade headers passed, long timeouts).
- An address deeper than one part that is not Streamlit's own is redirected to its first part
  (Streamlit would read `/foo/` of `/foo/bar` as the app's base path and never connect).
- If that replica is down, nginx sends the learner to the other replicas (its `backup` servers,
  round robin among them) and the answer rewrites the cookie: the learner stays on the new
  replica from then on. A Streamlit session lives in one server's memory: there the learner
  starts a new session (see docs/deploy.md).

Why a cookie and not `ip_hash`: a school's learners usually leave through one NAT address, and
ip_hash would send the whole class to one replica. Open-source nginx has no `sticky` directive
(that is NGINX Plus); the cookie set by `add_header` and read back through `map` does the same.

`healthy(url)` is the one health probe of the course's servers (scripts/replicas.py,
scripts/load_driver.py and the browser tests wait on it): Streamlit's `/_stcore/health` answers 200.

`--standalone DIR` wraps the same server block in a whole nginx.conf (no daemon, pid file, logs
and temporary files under DIR) for a non-root test run: `nginx -c DIR/nginx.conf -p DIR`.
Standard library only; deliberately no TLS (terminate it in this server block or in front).
"""

from __future__ import annotations

import argparse
import http.client
import re
import urllib.request
from pathlib import Path

COOKIE = "itt_replica"
HEALTH_PATH = "/_stcore/health"  # Streamlit's own: 200 once the server serves sessions
# Streamlit 1.67's own top-level addresses (streamlit/web/server/starlette: _stcore/ for the
# websocket, health and uploads, static/ for its JavaScript, media/ for st.image and downloads,
# component/ for components, app/static/ for the app's static files, auth/ and oauth2callback
# for st.login).
STREAMLIT_PREFIXES = ("_stcore", "static", "media", "component", "app/static", "auth", "oauth2callback")
# nginx's (PCRE) regex for an address of two parts or more whose first part is not Streamlit's and
# whose second part is not `_stcore` (a page's probe); $1 is the first part.
DEEP_ADDRESS = ('"^/(?!(?:' + "|".join(STREAMLIT_PREFIXES) + ')(?:/|$))([^/]+)/(?!_stcore(?:/|$))"')
DEFAULT_ACCESS_LOG = "/var/log/nginx/inside-transformer.access.log"


def site(ports: list[int], listen: str = "80", host: str = "127.0.0.1",
         access_log: str = DEFAULT_ACCESS_LOG, fail_timeout_s: int = 10) -> str:
    """The http-level configuration (upstreams, maps, server) for replicas on `host`:`ports`.

    Replica i (cookie value r<i>) is the one on ports[i].
    Example: site([8601, 8602]) has upstreams itt_new, itt_r0, itt_r1 and `proxy_pass http://$itt_upstream`.
    """
    if not ports:
        raise ValueError("at least one replica")
    replicas = len(ports)
    addrs = [f"{host}:{p}" for p in ports]
    cookie_attrs = "Path=/; HttpOnly; SameSite=Lax"
    out = [f"# Rendered by deploy/nginx/render.py --replicas {replicas} --first-port {ports[0]} "
           f"--listen {listen}: edit that, not this file.",
           "",
           "# A websocket upgrade is passed on; other requests close as usual.",
           "map $http_upgrade $itt_connection {",
           "    default upgrade;",
           "    ''      close;",
           "}",
           "",
           "# Learners with no cookie yet: round robin over every replica (the zone shares the",
           "# round-robin position between nginx's worker processes).",
           "upstream itt_new {",
           "    zone itt_new 64k;"]
    out += [f"    server {a} max_fails=1 fail_timeout={fail_timeout_s}s;" for a in addrs]
    out += ["}", ""]
    out.append("# A learner's own replica first, then the others (round robin) if it is down (a zone per group:\n"
               "# every worker process sees a replica marked failed).")
    for i in range(replicas):
        out += [f"upstream itt_r{i} {{", f"    zone itt_r{i} 64k;"]
        for k in range(replicas):
            a = addrs[(i + k) % replicas]
            extra = f" max_fails=1 fail_timeout={fail_timeout_s}s" if k == 0 else " backup"
            out.append(f"    server {a}{extra};")
        out += ["}", ""]
    out += [f"map $cookie_{COOKIE} $itt_upstream {{", "    default itt_new;"]
    out += [f"    r{i} itt_r{i};" for i in range(replicas)]
    out += ["}", ""]
    out += ["# The cookie names the replica that answered ($upstream_addr lists every address tried,",
            "# the last one answered); nothing is sent when it already says so (an empty",
            "# add_header value sends no header).",
            f'map "$cookie_{COOKIE}|$upstream_addr" $itt_set_cookie {{',
            '    default "";']
    for i, a in enumerate(addrs):
        out.append(f'    "~^r{i}\\|(.*, )?{re.escape(a)}$" "";')
    for i, a in enumerate(addrs):
        out.append(f'    "~{re.escape(a)}$" "{COOKIE}=r{i}; {cookie_attrs}";')
    out += ["}", ""]
    out += ["log_format itt_route '$remote_addr [$time_local] \"$request\" $status '",
            f"                     'cookie=$cookie_{COOKIE} upstream=$upstream_addr';",
            "",
            "server {",
            f"    listen {listen};",
            f"    access_log {access_log} itt_route;",
            "",
            "    # An address deeper than one part (`/foo/bar`, `/attention/`) would never connect:",
            "    # Streamlit's page would take `/foo/` for the app's base path. It is sent to its first",
            "    # part (`/foo`, a lesson or the course's own \"no such page\" notice), query kept.",
            "    # Streamlit's own addresses are left alone, at the top and under a page (its page",
            "    # probes `/attention/_stcore/health` and expects the 404 it gets).",
            f"    location ~ {DEEP_ADDRESS} {{",
            "        return 302 /$1$is_args$args;",
            "    }",
            "",
            "    location / {",
            "        proxy_pass http://$itt_upstream;",
            "        proxy_http_version 1.1;",
            "        # $http_host keeps the port: Streamlit checks the websocket's Origin against Host.",
            "        proxy_set_header Host $http_host;",
            "        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
            "        proxy_set_header X-Forwarded-Proto $scheme;",
            "        proxy_set_header Upgrade $http_upgrade;",
            "        proxy_set_header Connection $itt_connection;",
            "        # A learner may read a lesson for an hour without sending anything.",
            "        proxy_read_timeout 1d;",
            "        proxy_send_timeout 1d;",
            "        # Refused or broken connection to a replica: try the next one.",
            "        proxy_next_upstream error timeout;",
            "        proxy_connect_timeout 5s;",
            "        add_header Set-Cookie $itt_set_cookie;",
            "    }",
            "}"]
    return "\n".join(out) + "\n"


def standalone(prefix: Path) -> str:
    """A whole nginx.conf that includes site.conf, every file under `prefix`, in the foreground."""
    p = prefix.resolve()
    return "\n".join([
        "daemon off;",
        "worker_processes 1;",
        f"pid {p}/nginx.pid;",
        f"error_log {p}/error.log notice;",
        "events { worker_connections 1024; }",
        "http {",
        f"    client_body_temp_path {p}/tmp/body;",
        f"    proxy_temp_path {p}/tmp/proxy;",
        f"    fastcgi_temp_path {p}/tmp/fastcgi;",
        f"    uwsgi_temp_path {p}/tmp/uwsgi;",
        f"    scgi_temp_path {p}/tmp/scgi;",
        # Run as root, nginx's workers are nobody, and `prefix` may sit in a folder only root may
        # enter (pytest's, `mktemp -d`'s): nothing may depend on a temporary file there. An answer
        # the browser reads slower than the replica sends is passed on as it reads (not spilled to
        # a file, which failed and cut Streamlit's scripts short); a request body (a progress file
        # uploaded) up to 1 MB stays in memory.
        "    proxy_max_temp_file_size 0;",
        "    client_body_buffer_size 1m;",
        "    include site.conf;",
        "}",
        "",
    ])


def ports_for(replicas: int, first_port: int = 8601) -> list[int]:
    """Example: ports_for(3, 8601) -> [8601, 8602, 8603]"""
    return [first_port + i for i in range(replicas)]


def write_standalone(prefix: Path, ports: list[int], listen: str) -> Path:
    """Write prefix/nginx.conf and prefix/site.conf (and tmp/); return the nginx.conf path."""
    prefix.mkdir(parents=True, exist_ok=True)
    (prefix / "tmp").mkdir(exist_ok=True)
    site_conf = site(ports, listen, access_log=str(prefix.resolve() / "access.log"))
    (prefix / "site.conf").write_text(site_conf)
    (prefix / "nginx.conf").write_text(standalone(prefix))
    return prefix / "nginx.conf"


def healthy(url: str, timeout_s: float = 2.0) -> bool:
    """True when the Streamlit server at `url` answers its health check with 200 within `timeout_s`.

    Anything else (refused, reset, timed out, another status, not HTTP) is False, never an error.
    Example: healthy("http://127.0.0.1:8601") -> True once replica 0 has started.
    """
    try:
        with urllib.request.urlopen(url.rstrip("/") + HEALTH_PATH, timeout=timeout_s) as r:
            return r.status == 200
    except (OSError, http.client.HTTPException, ValueError):  # URLError and HTTPError are OSErrors
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description="nginx configuration for N replicas (sticky by cookie)")
    ap.add_argument("--replicas", type=int, default=3)
    ap.add_argument("--first-port", type=int, default=8601)
    ap.add_argument("--ports", type=int, nargs="+", metavar="PORT",
                    help="the replicas' ports, in order (instead of --replicas and --first-port)")
    ap.add_argument("--listen", default="80", help="nginx's listen argument, e.g. 80 or 127.0.0.1:8080")
    ap.add_argument("--access-log", default=DEFAULT_ACCESS_LOG, help="e.g. /dev/stdout in a container")
    ap.add_argument("--standalone", type=Path, metavar="DIR",
                    help="write DIR/nginx.conf + DIR/site.conf for `nginx -c DIR/nginx.conf -p DIR`")
    args = ap.parse_args()
    ports = args.ports or ports_for(args.replicas, args.first_port)
    if args.standalone:
        print(write_standalone(args.standalone, ports, args.listen))
    else:
        print(site(ports, args.listen, access_log=args.access_log), end="")


if __name__ == "__main__":
    main()
