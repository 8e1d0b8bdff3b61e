"""The class store under a class: how long an answer's write and a dashboard refresh take.

K learners (default 30) join one class; all of them answer every question of every lesson's quiz
bank at once (one thread per learner, each sending its answers one after the other); then the
teacher's dashboard is read R times. Prints p50/p95 of one answer's write (`record_answer`, its
whole transaction) and of one dashboard read, and checks that the dashboard counts exactly K
answers per question (none lost, none doubled). On SQLite in a temporary folder and on a real
PostgreSQL server started for the run (drivers/postgres.py: Debian's binaries, fsync off, so the
PostgreSQL figures leave out the disk's flush).

    .venv/bin/python scripts/bench_classroom.py                  # both databases, K = 30
    .venv/bin/python scripts/bench_classroom.py --learners 10 --backend sqlite

The store only: no Streamlit, no browser, no network between the app and the database. The load
driver (scripts/load_driver.py) measures the course as learners see it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.classroom.classroom import ClassStore  # noqa: E402
from lib.course import quiz  # noqa: E402
from ui.shell.nav import LESSONS  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def questions() -> list[tuple[str, str]]:
    return [(lesson.id, q.id) for lesson in LESSONS for q in quiz.load_bank("en", lesson.id)]


def run(url: str, learners: int, refreshes: int) -> dict:
    store = ClassStore(url)
    try:
        made = store.create_class("bench")
        people = [store.join(made.code, f"L{i}") for i in range(learners)]
        asked = questions()
        writes: list[float] = []
        lock = threading.Lock()
        go = threading.Barrier(learners)

        def answer(i: int, learner) -> None:
            mine = []
            go.wait()
            for j, (lesson, qid) in enumerate(asked):
                t = time.perf_counter()
                store.record_answer(learner.id, lesson, qid, str((i + j) % 3), (i + j) % 3 == 0)
                mine.append(time.perf_counter() - t)
            with lock:
                writes.extend(mine)

        threads = [threading.Thread(target=answer, args=(i, p)) for i, p in enumerate(people)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start
        reads = []
        for _ in range(refreshes):
            t = time.perf_counter()
            dash = store.dashboard(made.code, made.secret)
            reads.append(time.perf_counter() - t)
        exact = len(dash.questions) == len(asked) and all(q.answered == learners for q in dash.questions)
        return {"answers": len(writes), "questions": len(asked), "wall": wall, "exact": exact,
                "write": (percentile(writes, 0.5), percentile(writes, 0.95)),
                "read": (statistics.median(reads), percentile(reads, 0.95))}
    finally:
        store.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--learners", type=int, default=30)
    ap.add_argument("--refreshes", type=int, default=20)
    ap.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    args = ap.parse_args()
    rows = []
    if args.backend in ("sqlite", "both"):
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(("SQLite (WAL)", run(f"sqlite:///{tmp}/bench.sqlite3", args.learners, args.refreshes)))
    if args.backend in ("postgresql", "both"):
        from drivers.postgres import PostgresServer

        server = PostgresServer().start()
        try:
            rows.append(("PostgreSQL", run(server.new_database(), args.learners, args.refreshes)))
        finally:
            server.stop()
    print(f"{args.learners} learners x every quiz question, all answering at once; "
          f"{args.refreshes} dashboard reads after")
    print("| database | answers | exact count | answer write p50/p95 | dashboard p50/p95 | all answers in |")
    print("|---|---:|:---:|---:|---:|---:|")
    for name, r in rows:
        print(f"| {name} | {r['answers']} ({r['questions']} questions) | {'yes' if r['exact'] else 'NO'} | "
              f"{r['write'][0] * 1000:.1f} / {r['write'][1] * 1000:.1f} ms | "
              f"{r['read'][0] * 1000:.1f} / {r['read'][1] * 1000:.1f} ms | {r['wall']:.1f} s |")
    return 0 if all(r["exact"] for _, r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
