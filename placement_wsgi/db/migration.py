"""Schema creation and upgrade (alembic), safe with many processes at once.

``upgrade`` is what ``placement-manage db sync`` and
``[placement_database] sync_on_startup`` run. Several gunicorn workers may
start together, so the upgrade runs under a database-wide lock (PostgreSQL
advisory lock, MySQL ``GET_LOCK``, an exclusive SQLite transaction) and is a
no-op when the schema is already at head.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy.engine import Connection

from placement_wsgi.db import standard
from placement_wsgi.db.database import Database

_MIGRATIONS_DIR = os.path.join(os.path.dirname(__file__), "migrations")
_LOCK_NAME = "placement_schema_upgrade"
_PG_LOCK_KEY = 727_163_001


def _alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", _MIGRATIONS_DIR)
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest revision this code knows."""
    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


def is_known_revision(revision: str) -> bool:
    """Whether ``revision`` is one of this code's migrations (else a newer code wrote it)."""
    try:
        return ScriptDirectory.from_config(_alembic_config()).get_revision(revision) is not None
    except CommandError:
        return False


def known_revisions() -> list[str]:
    """Every revision this code knows, oldest first."""
    script = ScriptDirectory.from_config(_alembic_config())
    return [revision.revision for revision in reversed(list(script.walk_revisions()))]


#: What ``db stamp`` accepts besides a revision id (or a unique prefix of one).
STAMP_KEYWORDS = ("head", "base")


def resolve_stamp_target(text: str) -> str | None:
    """The full revision id ``text`` names for ``db stamp``: a known id or a
    unique prefix of one (at least 4 hex digits), ``head``, or ``base`` (None:
    no revision recorded). Anything else (alembic's relative forms included,
    which would depend on the database's current revision) raises ValueError."""
    if text == "base":
        return None
    refusal = ValueError(f"{text!r} is no revision of this version: give one of "
                         f"{', '.join(known_revisions())} (or a unique prefix), head or base")
    if text != "head" and not re.fullmatch(r"[0-9a-f]{4,32}", text):
        raise refusal
    try:
        found = ScriptDirectory.from_config(_alembic_config()).get_revisions(text)
    except CommandError as error:
        raise refusal from error
    return found[0].revision


def stamp(database: Database, revision: str | None) -> None:
    """Record ``revision`` (from :func:`resolve_stamp_target`; None clears the
    record) as the database's schema revision without running any migration:
    for a schema that was built or repaired by other means. Raises alembic's
    CommandError when the revision recorded now is unknown to this code."""
    with database.engine.connect() as connection, connection.begin():
        command.stamp(_alembic_config(connection), revision or "base")


def create_at(database: Database, revision: str) -> None:
    """Create the schema of ``revision`` in an empty database and record it
    (``db import`` copies rows of a source of that shape into it; ``db sync``
    then upgrades). No standard names are loaded: the copied rows hold them."""
    with database.engine.connect() as connection, connection.begin():
        command.upgrade(_alembic_config(connection), revision)


def current_revision(database: Database) -> str | None:
    """The revision recorded in the database, or None for an empty one."""
    with database.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


@contextlib.contextmanager
def _schema_lock(database: Database) -> Iterator[Connection]:
    with database.engine.connect() as connection:
        dialect = connection.dialect.name
        if dialect == "postgresql":
            connection.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": _PG_LOCK_KEY})
            connection.commit()
            try:
                yield connection
            finally:
                connection.rollback()
                connection.execute(sa.text("SELECT pg_advisory_unlock(:key)"),
                                   {"key": _PG_LOCK_KEY})
                connection.commit()
        elif dialect in ("mysql", "mariadb"):
            connection.execute(sa.text("SELECT GET_LOCK(:name, 300)"), {"name": _LOCK_NAME})
            connection.commit()
            try:
                yield connection
            finally:
                connection.rollback()
                connection.execute(sa.text("SELECT RELEASE_LOCK(:name)"), {"name": _LOCK_NAME})
                connection.commit()
        else:
            # SQLite: an immediate transaction holds the write lock; alembic
            # runs its DDL inside it.
            connection.execution_options(placement_write=True)
            yield connection


def upgrade(database: Database) -> str:
    """Bring the schema to head and load the standard names; return the head."""
    with _schema_lock(database) as connection:
        context = MigrationContext.configure(connection)
        if context.get_current_revision() != head_revision():
            if connection.in_transaction():
                connection.commit()
            with connection.begin():
                command.upgrade(_alembic_config(connection), "head")
        if connection.in_transaction():
            connection.commit()
    database.write(standard.sync_standard_names)
    return head_revision()
