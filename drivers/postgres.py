"""A throw-away PostgreSQL server for the tests: Debian's binaries, a temporary folder, a free port.

`PostgresServer` runs `initdb` into a new temporary folder, starts the server with `pg_ctl` on a
free port of 127.0.0.1 (its unix socket in that folder too), and stops it and removes the folder on
`stop()`. PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user that
Debian's package creates. `new_database()` gives each test an empty database.

Not a mock: the same server the replicas would talk to, only smaller and with fsync off.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


class PostgresMissing(RuntimeError):
    pass


def find_bin() -> Path | None:
    """The newest PostgreSQL bin folder holding initdb and pg_ctl, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    USER = "itt"

    def __init__(self) -> None:
        self.bin = find_bin()
        if self.bin is None:
            raise PostgresMissing("PostgreSQL is not installed (apt-get install postgresql)")
        self.as_user: list[str] = []
        self.dir = Path(tempfile.mkdtemp(prefix="itt-pg-"))
        if os.geteuid() == 0:
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError as e:
                raise PostgresMissing("running as root and there is no `postgres` user to run the server") from e
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.data = self.dir / "data"
        self.port = _free_port()
        self._count = 0

    def _run(self, *args: str) -> None:
        r = subprocess.run([*self.as_user, *args], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            log = self.dir / "log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{args[0]} failed ({r.returncode}): {r.stdout}{r.stderr}{tail}")

    def start(self) -> "PostgresServer":
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", self.USER, "--auth=trust",
                  "-E", "UTF8", "--no-locale", "--no-sync")
        return self.start_again()

    def start_again(self) -> "PostgresServer":
        """Start the server on its folder and port (after a stop that kept the folder)."""
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
                   " -c full_page_writes=off")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.dir / "log"),
                  "-w", "-t", "60", "start")
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.USER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """An empty database (the same one each time, emptied: a new database per test would copy
        a template's 7 MB each time, and removing hundreds of MB at the end takes long); its URL."""
        import psycopg

        name = "itt"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user={self.USER} dbname=postgres",
                             autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
                conn.execute(f'CREATE DATABASE "{name}"')  # a fixed name, not input
                return self.url(name)
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user={self.USER} dbname={name}",
                             autocommit=True) as conn:
            # A store a test forgot to close must not keep a lock on what is dropped next.
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                         " WHERE datname = %s AND pid <> pg_backend_pid()", (name,))
            conn.execute("DROP SCHEMA public CASCADE")
            conn.execute("CREATE SCHEMA public")
        return self.url(name)

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
