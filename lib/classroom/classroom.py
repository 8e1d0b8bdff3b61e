"""The class store: classes, pseudonymous learners, their first answers, and the teacher's view.

One `ClassStore` talks to one database through SQLAlchemy Core (bound parameters only):
SQLite by default (a file in the app's cache folder, WAL mode, nothing to start), or PostgreSQL
(psycopg 3) when `ITT_DATABASE_URL` names one, which is what replicas sharing a class need.
The schema is created and versioned on first use (`schema_version`, ordered idempotent steps,
serialised by a PostgreSQL advisory lock or SQLite's write lock, so two replicas may start at once).

API (every method may raise `StoreUnavailable` when the database cannot be reached):

    store = ClassStore.from_env()                    # or ClassStore("sqlite:///x.db"), ClassStore(pg_url)
        # ValueError only for a malformed or unsupported URL; an unreachable database is not an
        # error here (ping() says False, the methods raise StoreUnavailable until it is back)
    store.ping() -> bool                              # False when the database is unreachable (quickly)
    store.create_class(name=None, days=None) -> Created(code, secret)
    store.class_info(code) -> ClassInfo | None        # None: unknown or expired
    store.verify_teacher(code, secret) -> bool
    store.join(code, pseudonym) -> Learner(id, code, pseudonym)
        # raises UnknownClass, ClassClosed (ClassFull), PseudonymTaken, BadPseudonym (PseudonymTooLong),
        # all ClassError
        # `id` is the learner's key, "<row id>.<secret>": every call below that takes a learner_id
        # wants that key, and the database keeps only a hash of the secret (see _owns)
    store.learner(learner_id) -> Learner | None       # None once they left, the class is gone, or a wrong key
    store.suggest_pseudonym(code) -> str              # "Panda 42", free in that class
    store.leave(learner_id)
    store.record_visit(learner_id, lesson)            # also the learner's current lesson
    store.record_answer(learner_id, lesson, question_id, answer, correct) -> bool  # True: first answer
    store.record_answers(learner_id, [(lesson, question_id, answer, correct), ...]) -> int  # firsts
    store.record_final(learner_id, score, total) -> bool                           # True: first score
        # the record_* raise UnknownLearner when the learner left or the class is gone
    store.pacing(code) -> Pacing(lead_lesson, open_upto)   # UnknownClass when gone
    # The teacher's (each raises NotTeacher on a wrong secret or an unknown code):
    store.dashboard(code, secret) -> Dashboard
    store.set_lead(code, secret, lesson | None); store.set_open_upto(code, secret, lesson | None)
    store.set_joining(code, secret, open)
    store.export_csv(code, secret) -> str
    store.remove_learner(code, secret, pseudonym) -> bool
    store.delete_class(code, secret)
    store.purge_expired(now=None) -> int              # also run at start and at most hourly on use
    store.close()

Pure helpers (from lib/classroom/classroom_input.py): `normalise_code`, `clean_pseudonym`, `canonical_answer`,
`JoinLimiter` (wrong codes per session), `csv_cell`. The tables and their migrations:
lib/classroom/classroom_schema.py. An `answer` is kept as `canonical_answer` makes it: a number in one spelling
(a choice's option index, a numeric answer's value), so learners in Italian and in English land in
the same bar of the teacher's distribution and no word a learner typed is kept; "" when it holds no
number (the answer counts, its text is not kept).

What is stored: class code, optional class name, a hash of the teacher secret, dates, pacing; per
learner a random id, a hash of their secret, the pseudonym they chose, when they joined and were last
seen, the lesson they are on, each lesson visited and when, each first answer (a number, see above),
whether it was right and when it came, and the final score and when. Never an IP address, a user
agent, a name, an email or a word of what the learner typed.

Deliberately left out: accounts, several teachers per class, editing an answer, showing any of
this to learners (a learner only ever gets the class's name and pacing), HTML or Markdown escaping
(the pages show a pseudonym only through elements that render neither: st.dataframe, st.text).
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import logging
import os
import re
import secrets
import sqlite3
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Iterator

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from lib.classroom import classroom_schema as schema
from lib.classroom.classroom_input import (CODE_ALPHABET, CODE_LENGTH, MAX_PSEUDONYM, BadPseudonym, ClassError,
                                 JoinLimiter, PseudonymTooLong, canonical_answer, clean_pseudonym,
                                 clean_text, csv_cell, normalise_code, well_formed)
from lib.classroom.classroom_schema import MAX_ID, MAX_NAME, MIGRATIONS, answers, classes, finals, learners, visits

__all__ = [  # the store's API, with the helpers it re-exports for the pages
    "ClassStore", "Created", "ClassInfo", "Learner", "Pacing", "Dashboard", "LearnerRow", "QuestionStats",
    "AnswerCount", "ClassError", "UnknownClass", "ClassClosed", "ClassFull", "PseudonymTaken",
    "BadPseudonym", "PseudonymTooLong", "UnknownLearner", "NotTeacher", "StoreUnavailable", "JoinLimiter",
    "clean_pseudonym", "canonical_answer",
    "normalise_code", "csv_cell", "default_url", "class_days", "CODE_ALPHABET", "CODE_LENGTH",
    "MAX_PSEUDONYM", "MIGRATIONS",
]

log = logging.getLogger(__name__)

DATABASE_ENV = "ITT_DATABASE_URL"
DAYS_ENV = "ITT_CLASS_DAYS"
DEFAULT_DAYS = 30
# The same folder as lib.model.models.cache_dir() (not imported from there: that module loads torch).
CACHE_ENV = "INSIDE_TRANSFORMER_CACHE"
SQLITE_NAME = "classroom.sqlite3"
MAX_LEARNERS = 300  # per class: far above a class, well below what a script joining in a loop makes
CONNECT_TIMEOUT_S = 3
BUSY_TIMEOUT_S = 10
PURGE_EVERY_S = 3600
# After a failed connection every call gives up at once for this long (ping() still tries), so a
# database that is down costs a page one timeout every few seconds, not one per call.
RETRY_AFTER_S = 5
# Animal names spelled the same in Italian and English, so a suggestion needs no language.
ANIMALS = ("Panda", "Koala", "Puma", "Zebra", "Orca", "Cobra", "Gorilla", "Yak", "Gnu", "Dingo",
           "Okapi", "Alpaca", "Kiwi", "Pony", "Boa", "Condor")


# --- Errors and results -------------------------------------------------------------------

class UnknownClass(ClassError):
    """No such class code, or the class has expired."""


class ClassClosed(ClassError):
    """The teacher closed joining."""


class ClassFull(ClassClosed):
    """The class has MAX_LEARNERS learners already."""


class PseudonymTaken(ClassError):
    """Someone in the class already has this pseudonym (letter case aside)."""


class UnknownLearner(ClassError):
    """The learner left, or their class was deleted or expired."""


class NotTeacher(ClassError):
    """Wrong or missing teacher secret (or a class that does not exist)."""


class StoreUnavailable(ClassError):
    """The database cannot be reached or failed; the course goes on without the class."""


@dataclass(frozen=True)
class Created:
    code: str
    secret: str


@dataclass(frozen=True)
class ClassInfo:
    code: str
    name: str | None
    created_at: float  # unix seconds
    expires_at: float
    joining_open: bool
    lead_lesson: str | None
    open_upto: str | None


@dataclass(frozen=True)
class Learner:
    id: str  # the learner's key, "<row id>.<secret>": what their browser keeps and every write sends
    code: str
    pseudonym: str


@dataclass(frozen=True)
class Pacing:
    lead_lesson: str | None  # "go to this lesson" banner for every learner; None: no lead
    open_upto: str | None    # lessons after this one are closed; None: all open


@dataclass(frozen=True)
class LearnerRow:
    pseudonym: str
    joined_at: float
    last_seen: float
    current_lesson: str | None
    visited: frozenset[str]
    scores: dict[str, tuple[int, int]]  # lesson -> (right, answered), first answers only
    final: tuple[int, int] | None       # (score, total) of the final quiz


@dataclass(frozen=True)
class AnswerCount:
    answer: str
    correct: bool
    count: int


@dataclass(frozen=True)
class QuestionStats:
    lesson: str
    question_id: str
    answered: int
    right: int
    answers: tuple[AnswerCount, ...]  # most given first

    @property
    def wrong(self) -> int:
        return self.answered - self.right

    @property
    def share_right(self) -> float:
        return self.right / self.answered if self.answered else 0.0


@dataclass(frozen=True)
class Dashboard:
    info: ClassInfo
    learners: tuple[LearnerRow, ...]        # by pseudonym
    questions: tuple[QuestionStats, ...]    # by lesson, then question id
    most_wrong: tuple[QuestionStats, ...]   # at most 5, most wrong answers first, none without one
    on_lesson: dict[str, int] = field(default_factory=dict)  # current lesson -> learners there


# --- Small helpers ---------------------------------------------------------------------

def _check_id(value: str, what: str) -> str:
    """A lesson or question id as the pages make them ("attention", "q1", "block:q2")."""
    if not isinstance(value, str) or not re.fullmatch(rf"[A-Za-z0-9_:.\-]{{1,{MAX_ID}}}", value):
        raise ValueError(f"{what} must be 1 to {MAX_ID} letters, digits or _:.-, not {value!r:.80}")
    return value


def _hash_secret(secret: str) -> str:
    # The secret carries 192 random bits: a fast hash is enough (nothing to brute-force).
    return "sha256$" + hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _owns(key: str):
    """The learners row a learner's key opens: "<row id>.<secret>" matches the row's id and its hash
    of the secret; a bare id matches only a row without a secret (a learner who joined before
    secrets existed). A wrong, truncated or missing secret matches nothing.

    The hash is compared by the database, not in constant time: harmless for a hash of 128 random
    bits (timing could only tell how much of the stored hash a guess matches, never the secret).
    Example: _owns("Xy3...Q.s3cr3t") -> id == "Xy3...Q" AND secret_hash == sha256("s3cr3t")
    """
    row_id, dot, secret = str(key).partition(".")
    check = learners.c.secret_hash == _hash_secret(secret) if dot else learners.c.secret_hash.is_(None)
    return sa.and_(learners.c.id == row_id, check)


def _row_id(key: str) -> str:
    return str(key).partition(".")[0]


def _iso(ts: float | None) -> str:
    if ts is None:
        return ""
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds")


# --- The store ---------------------------------------------------------------------------

def default_url(env: dict[str, str] | None = None) -> str:
    """`ITT_DATABASE_URL`, or the SQLite file in the app's cache folder.

    Example: default_url({"INSIDE_TRANSFORMER_CACHE": "/c"}) -> "sqlite:////c/classroom.sqlite3"
    """
    env = os.environ if env is None else env
    url = (env.get(DATABASE_ENV) or "").strip()
    if url:
        return url
    folder = Path(env.get(CACHE_ENV) or Path.home() / ".cache" / "inside-transformer")
    return f"sqlite:///{folder / SQLITE_NAME}"


def _driver_url(url: str) -> sa.URL:
    """Plain `postgresql://` and `postgres://` URLs get the psycopg 3 driver; ValueError for
    something that is no database URL (the message does not repeat it: it may hold a password)."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://"):]
    try:
        parsed = sa.make_url(url)
    except sa_exc.ArgumentError:
        raise ValueError(f"{DATABASE_ENV} is not a database URL (sqlite:///... or postgresql://...)") from None
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def class_days(env: dict[str, str] | None = None) -> int:
    """Days a class lives (`ITT_CLASS_DAYS`, default 30; a malformed value keeps the default)."""
    env = os.environ if env is None else env
    try:
        days = int(env.get(DAYS_ENV, ""))
    except ValueError:
        return DEFAULT_DAYS
    return days if days > 0 else DEFAULT_DAYS


def _wal(cur, wait_s: float = BUSY_TIMEOUT_S) -> None:
    """Switch an SQLite file to WAL. The switch needs the file to itself and SQLite answers "database
    is locked" at once, without its busy timeout, while another connection holds it (two replicas
    opening a new file together): tried again for up to `wait_s`. A file in WAL mode already takes
    no lock, so only the first start on a new file ever waits."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            cur.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


class ClassStore:
    """Classes and their learners' progress in one database; safe to share across threads."""

    def __init__(self, url: str | None = None, *, clock: Callable[[], float] = time.time):
        self.url = _driver_url(url or default_url())
        self._clock = clock
        self._lock = threading.Lock()
        self._ready = False
        self._next_purge = 0.0
        self._down_until = 0.0
        dialect = self.url.get_backend_name()
        if dialect == "sqlite":
            self._engine = self._sqlite_engine()
        elif dialect == "postgresql":
            # No call waits forever: a bounded connect, statement and lock wait.
            self.connect_args = {"connect_timeout": CONNECT_TIMEOUT_S,
                                 "options": f"-c statement_timeout={BUSY_TIMEOUT_S * 1000}"
                                            f" -c lock_timeout={BUSY_TIMEOUT_S * 1000}"}
            self._engine = sa.create_engine(self.url, pool_pre_ping=True, pool_timeout=BUSY_TIMEOUT_S,
                                            connect_args=self.connect_args)
        else:
            raise ValueError(f"the class store supports SQLite and PostgreSQL, not {dialect}")
        self.dialect = dialect
        try:
            self._ensure_schema()
            self._maybe_purge()
        except StoreUnavailable:
            pass  # retried on each use; ping() tells the page

    @classmethod
    def from_env(cls, **kwargs) -> "ClassStore":
        return cls(os.environ.get(DATABASE_ENV) or None, **kwargs)

    def _sqlite_engine(self) -> sa.Engine:
        db = self.url.database
        if db and db != ":memory:" and not db.startswith("file:"):
            try:
                Path(db).parent.mkdir(parents=True, exist_ok=True)
                # Readable by the server's user only (SQLite gives its -wal and -shm files the same).
                os.close(os.open(db, os.O_CREAT | os.O_WRONLY, 0o600))
            except OSError:
                pass  # ping() and every method report it
        self.connect_args = {"timeout": BUSY_TIMEOUT_S}
        engine = sa.create_engine(self.url, pool_timeout=BUSY_TIMEOUT_S, connect_args=self.connect_args)

        @sa.event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn, _record):
            dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (below)
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
            _wal(cur)
            cur.execute("PRAGMA synchronous = NORMAL")
            cur.execute("PRAGMA foreign_keys = ON")
            cur.close()

        @sa.event.listens_for(engine, "begin")
        def _on_begin(conn):
            # A writer takes the write lock at BEGIN: two writers then queue on the busy timeout
            # instead of one failing at once when it upgrades a read lock.
            read = conn.get_execution_options().get("itt_read", False)
            conn.exec_driver_sql("BEGIN" if read else "BEGIN IMMEDIATE")

        return engine

    def close(self) -> None:
        """Close every pooled connection."""
        self._engine.dispose()

    # -- plumbing --

    @contextmanager
    def _tx(self, read: bool = False) -> Iterator[sa.Connection]:
        """One transaction; database failures become StoreUnavailable."""
        if time.monotonic() < self._down_until:
            raise StoreUnavailable("unreachable a moment ago")
        if not self._ready:
            self._ensure_schema()
        try:
            with self._engine.connect() as conn:
                if read:
                    conn = conn.execution_options(itt_read=True)
                with conn.begin():
                    yield conn
        except ClassError:
            raise
        except (sa_exc.SQLAlchemyError, OSError) as e:
            raise self._failed(e) from e

    def _failed(self, e: Exception) -> StoreUnavailable:
        if isinstance(e, (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError, OSError)):
            self._down_until = time.monotonic() + RETRY_AFTER_S
            # For the operator (wrong password, host down...): the driver's own message, which
            # names no learner data (SQLAlchemy's own message would add the statement's parameters).
            cause = getattr(e, "orig", None) or e
            first = (str(cause).strip().splitlines() or [""])[0][:300]
            log.warning("class store unavailable (%s): %s", type(cause).__name__, first)
        return StoreUnavailable(type(e).__name__)

    def _ensure_schema(self) -> None:
        with self._lock:
            if self._ready:
                return
            try:
                with self._engine.connect() as conn, conn.begin():
                    schema.migrate(conn)
            except (sa_exc.SQLAlchemyError, OSError) as e:
                raise self._failed(e) from e
            self._ready = True

    def schema_version(self) -> int:
        """The database's schema version (len(MIGRATIONS) once the store has started)."""
        with self._tx(read=True) as conn:
            return schema.version(conn)

    def _insert_ignore(self, conn: sa.Connection, table: sa.Table, **values) -> bool:
        """INSERT that does nothing when the row's key exists (the first one counts); True when it
        inserted. RETURNING tells, where rowcount does not (psycopg reports -1 for an INSERT)."""
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        key = table.primary_key.columns.values()[0]
        stmt = insert(table).values(**values).on_conflict_do_nothing().returning(key)
        return conn.execute(stmt).first() is not None

    def _maybe_purge(self) -> None:
        now = time.monotonic()
        if now < self._next_purge:
            return
        self._next_purge = now + PURGE_EVERY_S
        self.purge_expired()

    def ping(self) -> bool:
        """True when the database answers (within the connect timeout)."""
        try:
            with self._engine.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        except (sa_exc.SQLAlchemyError, OSError):  # the driver's errors: "unreachable" to the page
            self._down_until = time.monotonic() + RETRY_AFTER_S
            return False
        self._down_until = 0.0
        return True

    # -- classes --

    def create_class(self, name: str | None = None, days: int | None = None) -> Created:
        """A new class with a fresh random code and teacher secret (shown once, stored hashed)."""
        self._maybe_purge()
        now = self._clock()
        days = class_days() if days is None else days
        if days <= 0:
            raise ValueError("days must be positive")
        if name is not None:
            name = clean_text(name, MAX_NAME) or None
        secret = secrets.token_urlsafe(24)
        for _ in range(20):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            with self._tx() as conn:
                inserted = self._insert_ignore(
                    conn, classes, code=code, name=name, secret_hash=_hash_secret(secret), created_at=now,
                    expires_at=now + days * 86400, joining_open=True)
            if inserted:
                return Created(code, secret)
        raise StoreUnavailable("no free class code")  # 20 collisions in a row: something is off

    def _class_row(self, conn: sa.Connection, code: str):
        code = normalise_code(code)
        if not well_formed(code):
            return None
        row = conn.execute(sa.select(classes).where(classes.c.code == code)).first()
        if row is None or row.expires_at <= self._clock():
            return None
        return row

    @staticmethod
    def _info(row) -> ClassInfo:
        return ClassInfo(row.code, row.name, row.created_at, row.expires_at, bool(row.joining_open),
                         row.lead_lesson, row.open_upto)

    def class_info(self, code: str) -> ClassInfo | None:
        """The class, or None when the code is unknown or the class has expired."""
        self._maybe_purge()
        with self._tx(read=True) as conn:
            row = self._class_row(conn, code)
        return None if row is None else self._info(row)

    def pacing(self, code: str) -> Pacing:
        """What the teacher set; raises UnknownClass when the class is gone."""
        info = self.class_info(code)
        if info is None:
            raise UnknownClass(normalise_code(code))
        return Pacing(info.lead_lesson, info.open_upto)

    def verify_teacher(self, code: str, secret: str) -> bool:
        """True when `secret` is this class's teacher secret (compared in constant time)."""
        with self._tx(read=True) as conn:
            return self._teacher_row(conn, code, secret) is not None

    def _teacher_row(self, conn: sa.Connection, code: str, secret: str):
        """The class's row when `secret` is its teacher's, else None (unknown code included)."""
        row = self._class_row(conn, code)
        stored = row.secret_hash if row is not None else _hash_secret(secrets.token_urlsafe(24))
        given = _hash_secret(secret if isinstance(secret, str) else "")
        ok = hmac.compare_digest(stored.encode(), given.encode())
        return row if ok and row is not None else None

    def _teacher(self, conn: sa.Connection, code: str, secret: str):
        row = self._teacher_row(conn, code, secret)
        if row is None:
            raise NotTeacher(normalise_code(code))
        return row

    # -- learners --

    def join(self, code: str, pseudonym: str) -> Learner:
        """A new learner in the class under `pseudonym` (cleaned first)."""
        self._maybe_purge()
        name = clean_pseudonym(pseudonym)
        now = self._clock()
        with self._tx() as conn:
            row = self._class_row(conn, code)
            if row is None:
                raise UnknownClass(normalise_code(code))
            if not row.joining_open:
                raise ClassClosed(row.code)
            count = conn.execute(sa.select(sa.func.count()).select_from(learners)
                                 .where(learners.c.code == row.code)).scalar()
            if count >= MAX_LEARNERS:
                raise ClassFull(row.code)
            # The row id is the key of their rows; the secret, 128 random bits shown to no one but
            # their browser, is what lets a call write as them (token_urlsafe never holds a ".").
            learner_id, secret = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
            if not self._insert_ignore(
                    conn, learners, id=learner_id, code=row.code, pseudonym=name,
                    pseudonym_key=name.casefold(), joined_at=now, last_seen=now,
                    secret_hash=_hash_secret(secret)):
                raise PseudonymTaken(name)
        return Learner(f"{learner_id}.{secret}", row.code, name)

    def learner(self, learner_id: str) -> Learner | None:
        """The learner whose key this is, or None once they left, their class is gone, or for a
        key that is not theirs (a wrong or missing secret)."""
        with self._tx(read=True) as conn:
            row = conn.execute(sa.select(learners.c.code, learners.c.pseudonym)
                               .where(_owns(learner_id))).first()
            if row is None or self._class_row(conn, row.code) is None:
                return None
        return Learner(str(learner_id), row.code, row.pseudonym)

    def suggest_pseudonym(self, code: str) -> str:
        """A pseudonym free in the class, like "Panda 42" (any class code gives one)."""
        with self._tx(read=True) as conn:
            taken = set(conn.execute(sa.select(learners.c.pseudonym_key)
                                     .where(learners.c.code == normalise_code(code))).scalars())
        for digits in (2, 3, 4, 6):
            for _ in range(30):
                name = f"{secrets.choice(ANIMALS)} {secrets.randbelow(9 * 10 ** (digits - 1)) + 10 ** (digits - 1)}"
                if name.casefold() not in taken:
                    return name
        return f"{secrets.choice(ANIMALS)} {secrets.token_hex(4)}"

    def leave(self, learner_id: str) -> None:
        """Remove the learner and everything they sent."""
        with self._tx() as conn:
            self._delete_learners(conn, _owns(learner_id))

    @staticmethod
    def _delete_learners(conn: sa.Connection, where) -> None:
        # Explicit child deletes: the same result whether or not the database cascades.
        ids = sa.select(learners.c.id).where(where).scalar_subquery()
        for table in (answers, visits, finals):
            conn.execute(table.delete().where(table.c.learner.in_(ids)))
        conn.execute(learners.delete().where(where))

    def _touch(self, conn: sa.Connection, learner_id: str, now: float, lesson: str | None = None) -> str:
        """Mark the learner seen (and on `lesson`); their row id. UnknownLearner if they or their
        class are gone, or the key is not theirs."""
        values = {"last_seen": now} if lesson is None else {"last_seen": now, "current_lesson": lesson}
        alive = sa.select(classes.c.code).where(classes.c.expires_at > now).scalar_subquery()
        done = conn.execute(learners.update().where(_owns(learner_id), learners.c.code.in_(alive)).values(**values))
        if done.rowcount != 1:
            raise UnknownLearner(_row_id(learner_id)[:8])
        return _row_id(learner_id)

    def record_visit(self, learner_id: str, lesson: str) -> None:
        """The learner is on `lesson` now (and has visited it)."""
        lesson = _check_id(lesson, "lesson")
        now = self._clock()
        with self._tx() as conn:
            row_id = self._touch(conn, learner_id, now, lesson)
            self._insert_ignore(conn, visits, learner=row_id, lesson=lesson, at=now)

    def record_answer(self, learner_id: str, lesson: str, question_id: str, answer: str,
                      correct: bool) -> bool:
        """Store the learner's answer if it is their first to that question; True when it was.
        The answer is kept as `canonical_answer` makes it ("4,096 tokens" -> "4096")."""
        lesson, question_id = _check_id(lesson, "lesson"), _check_id(question_id, "question_id")
        now = self._clock()
        with self._tx() as conn:
            row_id = self._touch(conn, learner_id, now)
            return self._insert_ignore(
                conn, answers, learner=row_id, lesson=lesson, question_id=question_id,
                answer=canonical_answer(answer), correct=bool(correct), at=now)

    def record_answers(self, learner_id: str, given: Iterable[tuple[str, str, str, bool]]) -> int:
        """Several answers at once, (lesson, question_id, answer, correct) each, in one transaction:
        what a learner answered before joining. Only first answers count; returns how many did."""
        rows = [(_check_id(lesson, "lesson"), _check_id(qid, "question_id"), canonical_answer(answer),
                 bool(correct)) for lesson, qid, answer, correct in given]
        now = self._clock()
        with self._tx() as conn:
            row_id = self._touch(conn, learner_id, now)
            return sum(self._insert_ignore(conn, answers, learner=row_id, lesson=lesson,
                                           question_id=qid, answer=answer, correct=correct, at=now)
                       for lesson, qid, answer, correct in rows)

    def record_final(self, learner_id: str, score: int, total: int) -> bool:
        """Store the final quiz's score if it is the learner's first; True when it was."""
        score, total = int(score), int(total)
        if not 0 <= score <= total:
            raise ValueError("need 0 <= score <= total")
        now = self._clock()
        with self._tx() as conn:
            row_id = self._touch(conn, learner_id, now)
            return self._insert_ignore(conn, finals, learner=row_id, score=score, total=total, at=now)

    # -- the teacher's --

    def set_lead(self, code: str, secret: str, lesson: str | None) -> None:
        """Lead every learner to `lesson` (a banner with a button); None stops leading."""
        self._set(code, secret, lead_lesson=None if lesson is None else _check_id(lesson, "lesson"))

    def set_open_upto(self, code: str, secret: str, lesson: str | None) -> None:
        """Open the lessons up to `lesson` only; None opens them all."""
        self._set(code, secret, open_upto=None if lesson is None else _check_id(lesson, "lesson"))

    def set_joining(self, code: str, secret: str, open: bool) -> None:
        """Let new learners join, or not (those in the class stay)."""
        self._set(code, secret, joining_open=bool(open))

    def _set(self, code: str, secret: str, **values) -> None:
        with self._tx() as conn:
            row = self._teacher(conn, code, secret)
            conn.execute(classes.update().where(classes.c.code == row.code).values(**values))

    def dashboard(self, code: str, secret: str) -> Dashboard:
        """Everything the teacher sees, read in one transaction."""
        self._maybe_purge()
        with self._tx(read=True) as conn:
            row = self._teacher(conn, code, secret)
            in_class = learners.c.code == row.code
            people = conn.execute(sa.select(learners).where(in_class)).all()
            ids = sa.select(learners.c.id).where(in_class).scalar_subquery()
            seen = conn.execute(sa.select(visits.c.learner, visits.c.lesson)
                                .where(visits.c.learner.in_(ids))).all()
            right = sa.func.sum(sa.case((answers.c.correct, 1), else_=0))
            per_lesson = conn.execute(
                sa.select(answers.c.learner, answers.c.lesson, right, sa.func.count())
                .where(answers.c.learner.in_(ids)).group_by(answers.c.learner, answers.c.lesson)).all()
            given = conn.execute(
                sa.select(answers.c.lesson, answers.c.question_id, answers.c.answer, answers.c.correct,
                          sa.func.count())
                .where(answers.c.learner.in_(ids))
                .group_by(answers.c.lesson, answers.c.question_id, answers.c.answer, answers.c.correct)).all()
            final_rows = conn.execute(sa.select(finals.c.learner, finals.c.score, finals.c.total)
                                      .where(finals.c.learner.in_(ids))).all()
        visited: dict[str, set[str]] = defaultdict(set)
        for learner_id, lesson in seen:
            visited[learner_id].add(lesson)
        scores: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
        for learner_id, lesson, n_right, n in per_lesson:
            scores[learner_id][lesson] = (int(n_right or 0), int(n))
        final_of = {r.learner: (r.score, r.total) for r in final_rows}
        rows = tuple(sorted(
            (LearnerRow(p.pseudonym, p.joined_at, p.last_seen, p.current_lesson,
                        frozenset(visited[p.id]), scores[p.id], final_of.get(p.id)) for p in people),
            key=lambda r: (r.pseudonym.casefold(), r.pseudonym)))
        by_question: dict[tuple[str, str], list[AnswerCount]] = defaultdict(list)
        for lesson, qid, answer, correct, n in given:
            by_question[(lesson, qid)].append(AnswerCount(answer, bool(correct), int(n)))
        questions = tuple(
            QuestionStats(lesson, qid, sum(a.count for a in counts), sum(a.count for a in counts if a.correct),
                          tuple(sorted(counts, key=lambda a: (-a.count, a.answer))))
            for (lesson, qid), counts in sorted(by_question.items()))
        most_wrong = tuple(sorted((q for q in questions if q.wrong),
                                  key=lambda q: (-q.wrong, q.share_right, q.lesson, q.question_id))[:5])
        on_lesson: dict[str, int] = defaultdict(int)
        for p in people:
            if p.current_lesson:
                on_lesson[p.current_lesson] += 1
        return Dashboard(self._info(row), rows, questions, most_wrong, dict(on_lesson))

    def export_csv(self, code: str, secret: str) -> str:
        """The class's results: one row per learner and question (a learner with no answer gets one
        row with empty question cells), with the final score on every row of that learner.
        Cells that a spreadsheet would run as a formula start with a quote. For Excel, send it
        encoded as "utf-8-sig" (a BOM), or accented pseudonyms show garbled."""
        with self._tx(read=True) as conn:
            row = self._teacher(conn, code, secret)
            query = (
                sa.select(learners.c.pseudonym, answers.c.lesson, answers.c.question_id, answers.c.answer,
                          answers.c.correct, answers.c.at, finals.c.score, finals.c.total)
                .select_from(learners.outerjoin(answers, answers.c.learner == learners.c.id)
                             .outerjoin(finals, finals.c.learner == learners.c.id))
                .where(learners.c.code == row.code)
                .order_by(learners.c.pseudonym_key, answers.c.lesson, answers.c.question_id))
            records = conn.execute(query).all()
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["pseudonym", "lesson", "question", "answer", "correct", "at",
                         "final_score", "final_total"])
        for r in records:
            writer.writerow([csv_cell(x) for x in (
                r.pseudonym, r.lesson or "", r.question_id or "", r.answer or "",
                "" if r.correct is None else int(bool(r.correct)), _iso(r.at),
                "" if r.score is None else r.score, "" if r.total is None else r.total)])
        return out.getvalue()

    def remove_learner(self, code: str, secret: str, pseudonym: str) -> bool:
        """Remove a learner (an unwelcome pseudonym) with everything they sent; True if one went.
        They can join again under another pseudonym while joining is open."""
        try:
            key = clean_pseudonym(pseudonym).casefold()
        except BadPseudonym:
            key = ""
        with self._tx() as conn:
            row = self._teacher(conn, code, secret)
            where = sa.and_(learners.c.code == row.code, learners.c.pseudonym_key == key)
            found = conn.execute(sa.select(sa.func.count()).select_from(learners).where(where)).scalar()
            self._delete_learners(conn, where)
        return bool(found)

    def delete_class(self, code: str, secret: str) -> None:
        """Delete the class and everything its learners sent, in one transaction."""
        with self._tx() as conn:
            row = self._teacher(conn, code, secret)
            self._delete_classes(conn, classes.c.code == row.code)

    def _delete_classes(self, conn: sa.Connection, where) -> int:
        codes = sa.select(classes.c.code).where(where).scalar_subquery()
        self._delete_learners(conn, learners.c.code.in_(codes))
        return conn.execute(classes.delete().where(where)).rowcount

    def purge_expired(self, now: float | None = None) -> int:
        """Delete every expired class with all its data; returns how many classes went."""
        now = self._clock() if now is None else now
        with self._tx() as conn:
            return self._delete_classes(conn, classes.c.expires_at <= now)
