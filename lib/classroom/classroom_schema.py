"""The class store's tables, and the ordered steps that create and upgrade them.

`migrate(conn)` brings a database to the newest version inside the caller's transaction: it reads
`schema_version` (one row), runs the steps not yet applied, in order, and writes the new version.
Two replicas starting at once take turns: on PostgreSQL through an advisory lock taken first, on
SQLite through the write lock the caller's `BEGIN IMMEDIATE` holds. Every step is idempotent
(`checkfirst`), so a step interrupted half-way simply runs again.

A new version appends a step to MIGRATIONS (for example, add a column only if it is missing);
never edit a step that has shipped. Deliberately left out: downgrades.
"""

from __future__ import annotations

from typing import Callable

import sqlalchemy as sa

from lib.classroom.classroom_input import CODE_LENGTH, MAX_PSEUDONYM

MAX_NAME = 80   # a class's name
MAX_ID = 64     # lesson and question ids
_ADVISORY_KEY = 0x1775_C1A5  # any constant: the lock the replicas take to migrate one at a time

metadata = sa.MetaData()

schema_version = sa.Table("schema_version", metadata, sa.Column("version", sa.Integer, nullable=False))

classes = sa.Table(
    "classes", metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("name", sa.String(MAX_NAME)),
    sa.Column("secret_hash", sa.String(128), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False, index=True),
    sa.Column("joining_open", sa.Boolean, nullable=False),
    sa.Column("lead_lesson", sa.String(MAX_ID)),
    sa.Column("open_upto", sa.String(MAX_ID)),
)

learners = sa.Table(
    "learners", metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("code", sa.String(CODE_LENGTH), sa.ForeignKey("classes.code", ondelete="CASCADE"),
              nullable=False),
    sa.Column("pseudonym", sa.String(MAX_PSEUDONYM), nullable=False),
    # "Ada" and "ada" are one pseudonym: the class sees no look-alike twins.
    sa.Column("pseudonym_key", sa.String(4 * MAX_PSEUDONYM), nullable=False),
    sa.Column("joined_at", sa.Float, nullable=False),
    sa.Column("last_seen", sa.Float, nullable=False),
    sa.Column("current_lesson", sa.String(MAX_ID)),
    # A hash of the learner's secret (their browser keeps "<id>.<secret>" and sends it with every
    # write); NULL for a learner who joined before version 2, whose id alone still works.
    sa.Column("secret_hash", sa.String(128)),
    sa.UniqueConstraint("code", "pseudonym_key", name="learners_code_pseudonym"),
)

_learner_fk = dict(ondelete="CASCADE")

visits = sa.Table(
    "visits", metadata,
    sa.Column("learner", sa.String(64), sa.ForeignKey("learners.id", **_learner_fk), primary_key=True),
    sa.Column("lesson", sa.String(MAX_ID), primary_key=True),
    sa.Column("at", sa.Float, nullable=False),
)

answers = sa.Table(
    "answers", metadata,
    sa.Column("learner", sa.String(64), sa.ForeignKey("learners.id", **_learner_fk), primary_key=True),
    sa.Column("lesson", sa.String(MAX_ID), primary_key=True),
    sa.Column("question_id", sa.String(MAX_ID), primary_key=True),
    sa.Column("answer", sa.Text, nullable=False),
    sa.Column("correct", sa.Boolean, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)

finals = sa.Table(
    "finals", metadata,
    sa.Column("learner", sa.String(64), sa.ForeignKey("learners.id", **_learner_fk), primary_key=True),
    sa.Column("score", sa.Integer, nullable=False),
    sa.Column("total", sa.Integer, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)


def _v1_tables(conn: sa.Connection) -> None:
    for table in (classes, learners, visits, answers, finals):
        table.create(conn, checkfirst=True)


def _v2_learner_secrets(conn: sa.Connection) -> None:
    """learners.secret_hash (a database made by version 1 lacks it; a new one has it already)."""
    if "secret_hash" not in {c["name"] for c in sa.inspect(conn).get_columns("learners")}:
        conn.execute(sa.text("ALTER TABLE learners ADD COLUMN secret_hash VARCHAR(128)"))


# Ordered; step i brings the schema to version i + 1. Each step is idempotent (checkfirst,
# IF NOT EXISTS), so a step interrupted half-way is simply run again.
MIGRATIONS: tuple[Callable[[sa.Connection], None], ...] = (_v1_tables, _v2_learner_secrets)


def version(conn: sa.Connection) -> int:
    """The database's schema version (0 for an empty database)."""
    if not sa.inspect(conn).has_table("schema_version"):
        return 0
    return int(conn.execute(sa.select(sa.func.max(schema_version.c.version))).scalar() or 0)


def migrate(conn: sa.Connection) -> int:
    """Bring the database to the newest version, inside the caller's transaction; the version."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_ADVISORY_KEY)))
    schema_version.create(conn, checkfirst=True)
    have = conn.execute(sa.select(sa.func.max(schema_version.c.version))).scalar()
    if have is None:
        conn.execute(schema_version.insert().values(version=0))
        have = 0
    for step in MIGRATIONS[have:]:
        step(conn)
    if have < len(MIGRATIONS):
        conn.execute(schema_version.update().values(version=len(MIGRATIONS)))
    return max(have, len(MIGRATIONS))
