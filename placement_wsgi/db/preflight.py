"""Is this database URL usable? The one check every command runs before anything else.

An operator's mistakes with a database URL (a typo in the scheme, a driver
not installed, a server that is down, a database never created, a wrong
password, an SQLite path in a directory that does not exist, a database
never ``db sync``-ed) used to surface deep inside a command as a traceback,
a retry loop or an HTTP 500, and an SQLite file at a mistyped path was
created on the way. :func:`check` looks at the URL, then opens one
connection and, when asked, reads the schema revision, and returns a
:class:`Finding`: what is wrong, with the URL (password masked), the cause
and the fix, in one line. It never creates anything: an SQLite file is
opened only when it exists (``mode=rw``), and a missing one is a finding
unless the caller is the one that creates databases (:attr:`Access.CREATE`,
``placement-manage db sync`` and ``sync_on_startup``).

Each command turns a finding into its own one-line error and exit status:
a configuration problem (every :class:`Problem` but :attr:`Problem.UNREACHABLE`
and :attr:`Problem.DISK_FULL`) is the operator's to fix; an unreachable
server may come back and a full disk may get space again, so those are
worth waiting for or retrying.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import re

import sqlalchemy as sa

from placement_wsgi.db import migration
from placement_wsgi.db.database import sqlite_disk_full, sqlite_path

#: The option that names Placement's database, for the fixes the findings suggest.
PLACEMENT_SETTING = "[placement_database] connection"

#: Seconds a probe waits for a server to accept its connection.
CONNECT_TIMEOUT = 10

SUPPORTED_ENGINES = ("sqlite", "postgresql", "mysql", "mariadb")

_EXAMPLES = ("sqlite:////var/lib/placement/placement.sqlite, "
             "postgresql+psycopg://USER:PASSWORD@HOST/placement or "
             "mysql+pymysql://USER:PASSWORD@HOST/placement")
_SYNC = "run placement-manage db sync"


class Problem(enum.Enum):
    """What is wrong with a database URL or the database it names."""

    NOT_SET = "not-set"
    BAD_URL = "bad-url"
    UNSUPPORTED_ENGINE = "unsupported-engine"
    DRIVER_MISSING = "driver-missing"
    NO_DIRECTORY = "no-directory"
    NO_FILE = "no-file"
    NOT_A_DATABASE = "not-a-database"
    UNREACHABLE = "unreachable"
    DISK_FULL = "disk-full"
    NO_DATABASE = "no-database"
    BAD_CREDENTIALS = "bad-credentials"
    NO_SCHEMA = "no-schema"
    OTHER_REVISION = "other-revision"

    @property
    def transient(self) -> bool:
        """Whether waiting may cure it (the server may come up, space may be
        freed); else configuration."""
        return self in (Problem.UNREACHABLE, Problem.DISK_FULL)


class Access(enum.Enum):
    """What the caller will do with the database."""

    #: Use it as it is: an SQLite file must exist; nothing is ever created.
    USE = "use"
    #: Create the schema (``db sync``): a missing SQLite file in an existing
    #: directory is fine; it will be created.
    CREATE = "create"


class Schema(enum.Enum):
    """What the caller needs of Placement's schema."""

    #: Nothing (a nova database, ``db version``): only the connection is tried.
    ANY = "any"
    #: Placement's schema at this code's head revision (serving, migrating, reading).
    HEAD = "head"
    #: None yet, or an older revision this code can upgrade (``db sync``).
    UPGRADABLE = "upgradable"
    #: Placement's schema at any revision this code knows, head or older
    #: (``placement-status upgrade check`` and ``db online_data_migrations``,
    #: which run before the ``db sync`` they unblock).
    KNOWN = "known"


@dataclasses.dataclass(frozen=True)
class Finding:
    """A database that cannot be used: ``problem``, the masked ``url``, ``cause``, ``fix``."""

    problem: Problem
    url: str
    cause: str
    fix: str

    def __str__(self) -> str:
        return self.line()

    def line(self, what: str = "database") -> str:
        """The one line for an operator, the database called ``what``."""
        return f"{what} {self.url}: {self.cause}; {self.fix}"

    def as_dict(self) -> dict[str, str]:
        """The finding for a JSON error document."""
        return {"problem": self.problem.value, "url": self.url, "cause": self.cause,
                "fix": self.fix}


class DatabaseCheckFailed(Exception):
    """:func:`require` found the database unusable; ``str()`` is the finding's line."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(str(finding))
        self.finding = finding


def masked_url(url: str | sa.engine.URL) -> str:
    """``url`` with its password masked, for messages; also for a URL that does not parse."""
    parsed = parse_url(url)
    if parsed is not None:
        return parsed.render_as_string(hide_password=True)
    return re.sub(r"(//[^/:@]*:)[^@/]*@", r"\1***@", str(url))


def parse_url(url: str | sa.engine.URL) -> sa.engine.URL | None:
    """``url`` parsed, or None when it is not a database URL (syntax, port)."""
    try:
        return sa.engine.make_url(url)
    except (sa.exc.ArgumentError, ValueError):
        return None


def check_url(url: str | None, *, setting: str = PLACEMENT_SETTING,
              access: Access = Access.USE) -> Finding | None:
    """What is wrong with ``url`` itself, without connecting: syntax, engine,
    driver, and for SQLite the directory and (unless ``access`` creates) the file."""
    if not url:
        where = (" in placement.conf or as OS_PLACEMENT_DATABASE__CONNECTION"
                 if setting == PLACEMENT_SETTING else "")
        return Finding(Problem.NOT_SET, "(none)", f"{setting} is not set",
                       f"set it{where} to a URL such as {_EXAMPLES}")
    shown = masked_url(url)
    parsed = parse_url(url)
    if parsed is None:
        return Finding(Problem.BAD_URL, shown, "not a database URL",
                       f"fix {setting}; URLs look like {_EXAMPLES}")
    engine = parsed.get_backend_name()
    if engine not in SUPPORTED_ENGINES:
        return Finding(Problem.UNSUPPORTED_ENGINE, shown, f"unsupported database {engine!r}",
                       f"fix {setting}: use sqlite, postgresql or mysql (MariaDB)")
    try:
        sa.create_engine(parsed, poolclass=sa.pool.NullPool).dispose()
    except sa.exc.NoSuchModuleError:
        return Finding(Problem.UNSUPPORTED_ENGINE, shown,
                       f"unknown database driver {parsed.drivername!r}",
                       f"fix {setting}: e.g. postgresql+psycopg or mysql+pymysql")
    except ImportError as error:
        return Finding(Problem.DRIVER_MISSING, shown,
                       f"the driver {parsed.drivername!r} is not installed ({error})",
                       f"install it, or name an installed driver in {setting}")
    if engine == "sqlite":
        return _check_sqlite_path(parsed, shown, setting, access)
    if not parsed.database:
        return Finding(Problem.BAD_URL, shown, "the URL names no database",
                       f"add the database name at the end of {setting}: {shown.rstrip('/')}/NAME")
    return None


def _check_sqlite_path(parsed: sa.engine.URL, shown: str, setting: str,
                       access: Access) -> Finding | None:
    path = sqlite_path(parsed)
    if path is None:
        return None
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        return Finding(Problem.NO_DIRECTORY, shown, f"the directory {directory} does not exist",
                       f"create it, or fix the path in {setting}")
    if os.path.isdir(path):
        return Finding(Problem.NO_FILE, shown, f"{path} is a directory",
                       f"fix the path in {setting}")
    if not os.path.exists(path) and access is Access.USE:
        fix = f"fix the path in {setting}"
        if setting == PLACEMENT_SETTING:
            fix += ", or create the database with placement-manage db sync"
        return Finding(Problem.NO_FILE, shown, f"no such file {path}", fix)
    return None


def connect_finding(error: sa.exc.DBAPIError, url: str | sa.engine.URL,
                    setting: str = PLACEMENT_SETTING) -> Finding:
    """The finding of a failed connection attempt to ``url``."""
    shown = masked_url(url)
    orig = error.orig
    text = re.sub(r"\s+", " ", str(orig).strip()) or type(orig).__name__
    args = getattr(orig, "args", ())
    code = args[0] if args and isinstance(args[0], int) else None  # MySQL's error number
    lowered = text.lower()
    if code == 1049 or re.search(r'database "[^"]*" does not exist', text):
        return Finding(Problem.NO_DATABASE, shown, f"the database does not exist ({text})",
                       f"create it on the server, or fix the database name in {setting}")
    if code in (1044, 1045, 1698) or any(marker in lowered for marker in (
            "password authentication failed", "authentication failed", "no pg_hba.conf",
            "role \"")):
        return Finding(Problem.BAD_CREDENTIALS, shown, f"the server refused the login ({text})",
                       f"fix the user or password in {setting}, or grant it access")
    sqlite = sa.engine.make_url(url).get_backend_name() == "sqlite"
    if sqlite and "locked" in lowered:
        return Finding(Problem.UNREACHABLE, shown, f"cannot read it ({text})",
                       "another process holds it locked; running again is safe once it is "
                       "free")
    if sqlite and sqlite_disk_full(sa.engine.make_url(url), text):
        return Finding(Problem.DISK_FULL, shown, f"its disk is full ({text})",
                       "free space on it; running again is safe once there is space")
    if sqlite:
        return Finding(Problem.NOT_A_DATABASE, shown, f"cannot open it ({text})",
                       f"check that {setting} names an SQLite database file")
    return Finding(Problem.UNREACHABLE, shown, f"cannot connect ({text})",
                   "start the database server or fix the host and port; running again is "
                   "safe once it is reachable")


def _probe_url(url: sa.engine.URL, access: Access) -> sa.engine.URL | None:
    """The URL to open the probe's connection with; None when there is nothing
    to open (an in-memory database, or an SQLite file still to be created)."""
    if url.get_backend_name() != "sqlite":
        return url
    path = sqlite_path(url)
    if path is None or (access is Access.CREATE and not os.path.exists(path)):
        return None
    # mode=rw: opened only if it exists, so the probe itself never creates it.
    return url.set(database=f"file:{path}").update_query_dict({"mode": "rw", "uri": "true"})


def _connect_args(url: sa.engine.URL) -> dict[str, int]:
    if url.get_backend_name() == "sqlite" or "connect_timeout" in url.query:
        return {}
    return {"connect_timeout": CONNECT_TIMEOUT}


def check(url: str | None, *, setting: str = PLACEMENT_SETTING, access: Access = Access.USE,
          schema: Schema = Schema.ANY) -> Finding | None:
    """:func:`check_url`, then one connection (and, per ``schema``, the revision).

    Returns None when the database is usable as asked. Nothing is created
    and nothing written; the connection is closed before returning.
    """
    finding = check_url(url, setting=setting, access=access)
    if finding is not None or url is None:
        return finding
    parsed = sa.engine.make_url(url)
    probe = _probe_url(parsed, access)
    if probe is None:
        return None
    engine = sa.create_engine(probe, poolclass=sa.pool.NullPool,
                              connect_args=_connect_args(parsed))
    try:
        try:
            connection = engine.connect()
        except sa.exc.DBAPIError as error:
            return connect_finding(error, parsed, setting)
        with connection:
            try:
                return _check_schema(connection, masked_url(parsed), schema, setting)
            except sa.exc.DBAPIError as error:
                return connect_finding(error, parsed, setting)
    finally:
        engine.dispose()


def _recorded_revision(connection: sa.Connection) -> str | None:
    """The alembic revision stored in the database (read directly: alembic's own
    reader logs at INFO, which would add lines to a one-line error)."""
    if not sa.inspect(connection).has_table("alembic_version"):
        return None
    return connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()


def _check_schema(connection: sa.Connection, shown: str, schema: Schema,
                  setting: str) -> Finding | None:
    if schema is Schema.ANY:
        # Reading the catalogue, not just SELECT 1: SQLite opens any file and
        # only finds it is no database when it reads its schema.
        sa.inspect(connection).get_table_names()
        return None
    revision = _recorded_revision(connection)
    head = migration.head_revision()
    if revision == head:
        return None
    if revision is None:
        if schema is Schema.UPGRADABLE:
            return None
        what = ("has tables but no Placement schema revision"
                if sa.inspect(connection).get_table_names() else "is empty")
        return Finding(Problem.NO_SCHEMA, shown, f"the database {what}",
                       f"{_SYNC} first, or fix {setting} if this is not Placement's "
                       "database")
    if not migration.is_known_revision(revision):
        return Finding(Problem.OTHER_REVISION, shown,
                       f"the schema is at revision {revision}, unknown to this version "
                       f"(head {head}); a newer Placement wrote it",
                       "use the matching version of this tool")
    if schema in (Schema.UPGRADABLE, Schema.KNOWN):
        return None
    return Finding(Problem.OTHER_REVISION, shown,
                   f"the schema is at revision {revision}, older than head {head}",
                   f"{_SYNC} to upgrade it")


def require(url: str | None, *, setting: str = PLACEMENT_SETTING, access: Access = Access.USE,
            schema: Schema = Schema.ANY) -> None:
    """:func:`check`, raising :class:`DatabaseCheckFailed` for a finding."""
    finding = check(url, setting=setting, access=access, schema=schema)
    if finding is not None:
        raise DatabaseCheckFailed(finding)
