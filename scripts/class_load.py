"""A live class under load, through the real server(s): K learners join one class and answer the same
question within one second; the teacher's dashboard must count exactly K (none lost, none doubled).

    .venv/bin/python scripts/class_load.py                                 # 1 server, SQLite
    .venv/bin/python scripts/class_load.py --replicas 2 --postgres         # 2 replicas behind nginx, PostgreSQL
    .venv/bin/python scripts/class_load.py --learners 5 --idle 10          # a quick look
    .venv/bin/python scripts/class_load.py --replicas 2 --postgres --stop-replica-after 5   # one replica killed mid-class

What it does, in order:
  1. starts the server(s) on a fresh database (a SQLite file in a temporary folder, or a PostgreSQL
     server started for the run with drivers/postgres.py) and starts a class in it, as the teachers'
     page does;
  2. K protocol learners (drivers/stclient.py: Streamlit's own websocket, as the browser speaks it)
     open the join link `/?class=CODE`, answer the lesson's last multiple-choice question before
     joining ("answer before joining"; not with --stop-replica-after, which answers it later), keep
     the proposed pseudonym and join ("join"); the dashboard must count exactly K first answers to
     that question, sent by the join;
  3. all of them answer the first multiple-choice question of the first lesson within one second
     ("answer"); the dashboard must then count K learners and exactly K first answers to it;
  4. with --postgres, the database stops: every learner answers the second question (the lesson goes
     on: the verdict comes, the sidebar says the class is not receiving answers, no exception); the
     database starts again and every learner answers the third question; after the idle time below
     both must count K (answers kept while it was down are sent by the next run, an idle page's
     pacing banner included);
  4'. with --stop-replica-after S (instead of 4): every learner answers the lesson's other
     multiple-choice questions one by one, spread over 2 S seconds, and S seconds in replica 0 is
     killed (SIGKILL: a crash). Its learners find their websocket closed at their next answer and
     reconnect as the browser does (drivers/stclient.py's `reconnect`: nginx sends them to the other
     replica, a new session, their membership back from the tab's storage) and answer again. Then
     the answers the class counts must equal the answers sent (each one a verdict the learner saw),
     question by question, with K learners in the class (nobody joined twice) and no failure;
  5. idle: every learner keeps the page open for --idle seconds (their pacing banner's timed reruns,
     sent as the browser's timer sends them) while the teacher's dashboard is open (its live refresh,
     "refresh"); the servers' CPU over that time, as a share of one core (goal <= 10 %).
Prints the waits' p50/p95, the counts and the idle CPU, each with PASS/MISS.

Deliberately left out: restarting the stopped replica (nginx keeps its learners on the other one).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lib.classroom import classroom as C  # noqa: E402
from drivers.stclient import Learner  # noqa: E402

IDLE_CPU_GOAL = 0.10  # of one core, with K learners joined and idle and the dashboard open
WAIT_GOAL_S = 2.0


def _driver():
    spec = importlib.util.spec_from_file_location("load_driver", REPO / "scripts" / "load_driver.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("load_driver", mod)
    spec.loader.exec_module(mod)
    return mod


LD = _driver()


def choice_questions(me: Learner, lesson: str) -> list[str]:
    """The keys of the lesson's multiple-choice answers, by key (the order a session lists them in
    changes with its runs: the one answered before joining must be the same for every learner and
    never one answered later)."""
    return sorted(k for k in me.keys(f"quiz.{lesson}.") if k.endswith(".answer") and me.widget(k).kind == "radio")


async def answer(me: Learner, key: str):
    """Pick the first option of the question `key` and press Check; the action, or None when no verdict came."""
    await me.set_value(key, 0)
    before = LD.verdicts(me)
    action = await me.submit(key[: -len(".answer")] + ".form", name="answer")
    return action if LD.verdicts(me) > before else None


def count(store: C.ClassStore, code: str, secret: str, lesson: str, qid: str) -> tuple[int, int]:
    """(learners in the class, first answers to lesson/qid) as the dashboard shows them."""
    board = store.dashboard(code, secret)
    answered = sum(q.answered for q in board.questions if q.lesson == lesson and q.question_id == qid)
    return len(board.learners), answered


def offline_notices(me: Learner, text: str) -> int:
    return sum(1 for kind, proto in me.elements.values() if kind == "alert" and text in proto.body)


async def stop_replica_mid_class(learners: list[Learner], cookies: list[str], keys: list[str], stop_after: float,
                                 replica, store: C.ClassStore, code: str, secret: str, lesson: str,
                                 already: list[int], rows: list[str], failures: list[str], note) -> None:
    """Step 4': the learners answer `keys` one by one over 2 * stop_after seconds; `replica` (a
    Popen) is killed after stop_after seconds. Answers counted must equal answers sent."""
    k = len(learners)
    sent: dict[str, int] = {key.split(".")[2]: 0 for key in keys}
    spacing = 2 * stop_after / len(keys)

    async def one(i: int, me: Learner) -> None:
        shown = already[i]  # verdicts on this learner's page so far (they come back after a reconnect)
        for j, key in enumerate(keys):
            await asyncio.sleep(max(0.0, (j + random.uniform(0.25, 0.75)) * spacing - (time.perf_counter() - t0)))
            before = me.reconnects
            try:
                await me.set_value(key, 0)
                action = await me.submit(key[: -len(".answer")] + ".form", name="answer")
            except Exception as e:  # a reconnection that failed: counted, the others go on
                failures.append(f"learner {i}: {key}: {type(e).__name__}: {e}")
                return
            if LD.verdicts(me) > shown:
                shown = LD.verdicts(me)
                sent[key.split(".")[2]] += 1
                note("answer, reconnecting first" if me.reconnects > before else "answer", action)
            else:
                failures.append(f"learner {i}: no verdict for {key}")
            if me.exceptions:
                failures.append(f"learner {i}: {me.exceptions[-1]}")

    async def kill() -> None:
        await asyncio.sleep(stop_after)
        replica.kill()  # SIGKILL: the replica's sessions end with no goodbye
        await asyncio.to_thread(replica.wait)

    t0 = time.perf_counter()
    await asyncio.gather(kill(), *(one(i, me) for i, me in enumerate(learners)))
    on_stopped = [i for i, c in enumerate(cookies) if "itt_replica=r0" in c]
    reconnected = [i for i in on_stopped if learners[i].reconnects]
    board = store.dashboard(code, secret)
    counted = {q.question_id: q.answered for q in board.questions if q.lesson == lesson and q.question_id in sent}
    counted = {qid: counted.get(qid, 0) for qid in sent}
    exact = counted == sent and len(board.learners) == k
    rows.append(f"| replica 0 killed {stop_after:g} s into {len(keys)} questions ({len(on_stopped)} of {k} learners "
                f"on it) | {len(reconnected)} of them reconnected; {sum(counted.values())} answers counted of "
                f"{sum(sent.values())} sent ({', '.join(f'{q} {counted[q]}/{sent[q]}' for q in sent)}); "
                f"{len(board.learners)} learners | all reconnected, counted = sent, {k} learners | "
                f"{'PASS' if exact and len(reconnected) == len(on_stopped) and on_stopped else 'MISS'} |")
    if not on_stopped:
        failures.append("no learner was on replica 0: nothing reconnected")
    if not exact:
        failures.append(f"answers counted {counted} != sent {sent}, or {len(board.learners)} learners != {k}")
    for i in sorted(set(on_stopped) - set(reconnected)):
        failures.append(f"learner {i} was on the stopped replica and did not reconnect")


async def run(url: str, k: int, idle_s: float, lang: str, store: C.ClassStore, pg, pids: list[int],
              stop_after: float | None = None, replica=None) -> int:
    from lib.course import i18n

    lesson = "numbers"  # the join link's page: the first lesson
    created = store.create_class("Load test")
    code, secret = created.code, created.secret
    waits: dict[str, list[float]] = {}
    failures: list[str] = []
    rows: list[str] = []

    def note(kind: str, action) -> None:
        waits.setdefault(kind, []).append(action.wait_s)

    for _ in range(len(pids)):  # a warm start: every replica has drawn the first lesson once
        cookie = await asyncio.to_thread(LD.affinity_cookie, url, f"?lang={lang}")
        async with Learner(url, "", f"lang={lang}", cookie=cookie) as warm:
            await warm.open()
    learners: list[Learner] = []
    cookies: list[str] = []
    for i in range(k):  # each tab's first request picks its replica behind nginx
        cookie = await asyncio.to_thread(LD.affinity_cookie, url, f"?class={code}&lang={lang}")
        cookies.append(cookie)
        # Stopping a replica: the learners keep their tab's storage and reconnect, as browsers do.
        learners.append(Learner(url, "", f"class={code}&lang={lang}", cookie=cookie,
                                storage={} if stop_after is not None else None, reconnect=stop_after is not None))
    for me in learners:
        await me.__aenter__()
    try:
        async def join(i: int, me: Learner) -> None:
            await asyncio.sleep(random.uniform(0, 1.0))
            note("open", await me.open())
            if "class.pseudonym" not in me.widgets:
                failures.append(f"learner {i}: no join panel")
                return
            if stop_after is None:  # an answer kept in the session (and the tab's storage) before joining
                action = await answer(me, choice_questions(me, lesson)[-1])
                if action is None:
                    failures.append(f"learner {i}: no verdict before joining")
                else:
                    note("answer before joining", action)
            note("join", await me.submit("class.join_form", name="join"))
        await asyncio.gather(*(join(i, me) for i, me in enumerate(learners)))
        questions = choice_questions(learners[0], lesson)
        if len(questions) < 4:
            failures.append(f"the lesson {lesson} has {len(questions)} multiple-choice questions, 4 wanted")
            return report(rows, waits, failures, k)

        verdicts_seen = [0] * k

        async def all_answer(key: str) -> None:
            async def one(i: int, me: Learner) -> None:
                await asyncio.sleep(random.uniform(0, 1.0))  # all within one second
                action = await answer(me, key)
                if action is None:
                    failures.append(f"learner {i}: no verdict for {key}")
                else:
                    note("answer", action)
                verdicts_seen[i] = LD.verdicts(me)
                if me.exceptions:
                    failures.append(f"learner {i}: {me.exceptions[-1]}")
            await asyncio.gather(*(one(i, me) for i, me in enumerate(learners)))

        def check(key: str, when: str) -> None:
            qid = key.split(".")[2]
            joined, answered = count(store, code, secret, lesson, qid)
            verdict = "PASS" if (joined, answered) == (k, k) else "MISS"
            rows.append(f"| {when} | {joined} learners, {answered} first answers to {lesson}/{qid} | {k} and {k} | {verdict} |")
            if verdict == "MISS":
                failures.append(f"{when}: {joined} learners, {answered} answers, {k} wanted")

        if stop_after is None:
            check(questions[-1], "answered before joining, counted after the join")
        await all_answer(questions[0])
        check(questions[0], "all answer within 1 s")

        if stop_after is not None:
            await stop_replica_mid_class(learners, cookies, questions[1:], stop_after, replica, store, code, secret,
                                         lesson, verdicts_seen, rows, failures, note)
        elif pg is not None:
            pg._run(str(pg.bin / "pg_ctl"), "-D", str(pg.data), "-m", "fast", "-w", "stop")  # data kept
            await all_answer(questions[1])
            told = sum(1 for me in learners if offline_notices(me, i18n.ui(lang)["class.side.offline"][:30]))
            rows.append(f"| database stopped: the lesson goes on | {told} of {k} told the class is not receiving "
                        f"answers, {sum(len(me.exceptions) for me in learners)} exceptions | {k}, 0 | "
                        f"{'PASS' if told == k and not any(me.exceptions for me in learners) else 'MISS'} |")
            pg.start_again()
            await all_answer(questions[2])

        # Idle: the learners' timed banners and the teacher's live dashboard, for idle_s seconds.
        teacher_cookie = await asyncio.to_thread(LD.affinity_cookie, url, f"teachers?lang={lang}")
        async with Learner(url, "teachers", f"class={code}&key={secret}&lang={lang}", cookie=teacher_cookie) as teacher:
            note("dashboard open", await teacher.open())
            if not teacher.auto_reruns:
                failures.append("the teacher's dashboard has no live refresh")
            before = LD.cpu_seconds(pids)
            t0 = time.perf_counter()
            results = await asyncio.gather(teacher.stay(idle_s), *(me.stay(idle_s) for me in learners))
            spent = LD.cpu_seconds(pids) - before
            elapsed = time.perf_counter() - t0
            for action in results[0]:
                note("refresh", action)
            banner_runs = sum(len(r) for r in results[1:])
            share = spent / elapsed
            rows.append(f"| idle {elapsed:.0f} s: {k} learners ({banner_runs} timed banner reruns) and the "
                        f"dashboard ({len(results[0])} refreshes) | server CPU {100 * share:.1f} % of one core | "
                        f"<= {100 * IDLE_CPU_GOAL:.0f} % | {'PASS' if share <= IDLE_CPU_GOAL else 'MISS'} |")
            joined, _ = count(store, code, secret, lesson, questions[0].split(".")[2])
            if joined != k:
                failures.append(f"after the idle time the class has {joined} learners, {k} wanted")
        if pg is not None and stop_after is None:  # kept while it was down (or in its first seconds back): sent by an idle page's banner
            check(questions[1], "answered while it was down, counted after the idle time")
            check(questions[2], "answered as it came back, counted after the idle time")
    finally:
        for me in learners:
            await me.close()
    return report(rows, waits, failures, k)


def report(rows: list[str], waits: dict[str, list[float]], failures: list[str], k: int) -> int:
    print(f"\n| check | measured | wanted | |\n|---|---|---|---|")
    for row in rows:
        print(row)
    print(f"\n| action | n | p50 s | p95 s | max s | p95 <= {WAIT_GOAL_S:.0f} s |\n|---|---:|---:|---:|---:|---|")
    for kind, values in waits.items():
        p95 = LD.percentile(values, 0.95)
        print(f"| {kind} | {len(values)} | {LD.percentile(values, 0.5):.2f} | {p95:.2f} | {max(values):.2f} | "
              f"{'PASS' if p95 <= WAIT_GOAL_S else 'MISS'} |")
    print(f"\nFailures: {len(failures)}")
    for f in failures[:20]:
        print(f"  - {f}")
    return 1 if failures else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learners", type=int, default=30)
    ap.add_argument("--replicas", type=int, default=1)
    ap.add_argument("--postgres", action="store_true", help="a PostgreSQL server started for the run")
    ap.add_argument("--idle", type=float, default=60.0, help="seconds the class stays idle")
    ap.add_argument("--lang", default="it")
    ap.add_argument("--stop-replica-after", type=float, metavar="SECONDS", dest="stop_after",
                    help="kill replica 0 this many seconds into the answers (needs --replicas 2 or more); "
                         "its learners reconnect; answers counted must equal answers sent")
    args = ap.parse_args()
    if args.stop_after is not None and (args.replicas < 2 or args.stop_after <= 0):
        ap.error("--stop-replica-after needs --replicas 2 or more and a positive number of seconds")

    pg = None
    tmp = Path(tempfile.mkdtemp(prefix="itt-class-"))
    if args.postgres:
        from drivers.postgres import PostgresServer

        pg = PostgresServer().start()
        url = pg.new_database()
    else:
        url = f"sqlite:///{tmp / 'classes.db'}"
    os.environ["ITT_DATABASE_URL"] = url  # the servers inherit it
    store = C.ClassStore(url)
    servers = LD.Servers().start(args.replicas, nginx=args.replicas > 1)
    front = f"{args.replicas} replica{'s' if args.replicas > 1 else ''}" + (" behind nginx" if args.replicas > 1 else "")
    print(f"### A class of {args.learners} on {front}, {'PostgreSQL' if pg else 'SQLite'}, "
          f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    try:
        return asyncio.run(run(servers.url, args.learners, args.idle, args.lang, store, pg, servers.pids,
                               args.stop_after, servers.procs[0]))
    finally:
        store.close()
        servers.stop()
        if pg is not None:
            pg.stop()


if __name__ == "__main__":
    sys.exit(main())
