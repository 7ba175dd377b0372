"""Configuration options of the Placement service (see docs/architecture.md).

Every option lives on an ``oslo_config.cfg.ConfigOpts`` that the caller
owns; nothing here touches ``cfg.CONF``. ``register_opts`` may be called on
any number of ``ConfigOpts`` objects, each describing its own service.

``load_config`` builds such an object for a process (the WSGI module, the
console scripts) from config files (``find_config_files``: ``--config-file``,
``OS_PLACEMENT_CONFIG_FILE``, ``$OS_PLACEMENT_CONFIG_DIR/placement.conf``,
``/etc/placement/placement.conf``) and environment variables
(``OS_PLACEMENT_<GROUP>__<OPTION>`` and oslo.config's ``OS_<GROUP>__<OPTION>``).
docs/configuration.md documents every option.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from oslo_config import cfg
from oslo_log import log as oslo_log
from oslo_middleware import cors, sizelimit
from oslo_policy import opts as policy_opts

DEFAULT_CONSUMER_MISSING_ID = "00000000-0000-0000-0000-000000000000"

#: Default ceiling on the number of allocation candidates generated for one
#: request before ``limit`` is applied. Finite so that no request can exhaust
#: memory; see docs/configuration.md.
DEFAULT_MAX_ALLOCATION_CANDIDATES = 100000

#: Default of ``[oslo_middleware] max_request_body_size`` (bytes) in this
#: service. A POST /reshaper moving 1,000 providers of six resource classes,
#: with ten consumers per provider allocating on two providers each, is about
#: 4.5 MiB of JSON; 16 MiB leaves more than three times that. oslo.middleware's
#: own default (112 KiB) would refuse a reshape of a few dozen providers.
DEFAULT_MAX_REQUEST_BODY_SIZE = 16 * 1024 * 1024

database_opts = [
    cfg.StrOpt(
        "connection",
        secret=True,
        help="SQLAlchemy URL of the Placement database, e.g. "
        "sqlite:////var/lib/placement/placement.sqlite, "
        "postgresql+psycopg://user:pass@host/placement or "
        "mysql+pymysql://user:pass@host/placement?charset=utf8. Required.",
    ),
    cfg.BoolOpt(
        "sync_on_startup",
        default=False,
        help="Create or upgrade the schema and load the standard traits and "
        "resource classes when the web application starts.",
    ),
    cfg.StrOpt("connection_parameters", default="",
               help="Extra query parameters appended to the connection URL."),
    cfg.BoolOpt("sqlite_synchronous", default=True,
                help="If false, SQLite runs with synchronous=OFF (faster, less durable)."),
    cfg.StrOpt("slave_connection", secret=True,
               help="Accepted for compatibility with oslo.db configuration; unused."),
    cfg.StrOpt("mysql_sql_mode", default="TRADITIONAL",
               help="sql_mode set on every MySQL/MariaDB connection."),
    cfg.IntOpt("connection_recycle_time", default=3600,
               help="Seconds after which a pooled connection is replaced."),
    cfg.IntOpt("max_pool_size", default=5,
               help="Maximum number of pooled connections per process."),
    cfg.IntOpt("max_retries", default=10,
               help="Attempts to connect to the database at start-up (-1 = forever)."),
    cfg.IntOpt("retry_interval", default=10,
               help="Seconds between start-up connection attempts."),
    cfg.IntOpt("max_overflow", default=50,
               help="Connections allowed above max_pool_size."),
    cfg.IntOpt("connection_debug", default=0, min=0, max=100,
               help="SQL logging: 0 none, 50 statements, 100 everything."),
    cfg.BoolOpt("connection_trace", default=False,
                help="Accepted for compatibility with oslo.db configuration; unused."),
    cfg.IntOpt("pool_timeout", default=30,
               help="Seconds to wait for a pooled connection."),
    cfg.IntOpt("sqlite_busy_timeout", default=30000, min=0,
               help="Milliseconds an SQLite writer waits for another writer's "
               "lock before the service retries the transaction."),
    cfg.IntOpt("transaction_retry_count", default=10, min=0,
               help="Times a transaction that failed with a transient database "
               "error (deadlock, serialization failure, lock timeout, lost "
               "connection) is retried from the start."),
]

api_opts = [
    cfg.StrOpt(
        "auth_strategy",
        default="keystone",
        choices=[
            ("keystone", "Validate tokens with keystonemiddleware auth_token."),
            ("noauth2", "Testing only: the token is 'user[:project]'."),
        ],
        help="How requests are authenticated.",
    ),
]

placement_opts = [
    cfg.BoolOpt("randomize_allocation_candidates", default=False,
                help="Randomly sample allocation candidates when a limit "
                "applies, and shuffle results."),
    cfg.IntOpt(
        "max_allocation_candidates",
        default=DEFAULT_MAX_ALLOCATION_CANDIDATES,
        min=-1,
        help="Stop generating allocation candidates after this many (before "
        "'limit' is applied). -1 means no ceiling, which lets a pathological "
        "request use unbounded memory; the default is finite.",
    ),
    cfg.StrOpt(
        "allocation_candidates_generation_strategy",
        default="breadth-first",
        choices=["depth-first", "breadth-first"],
        help="depth-first: all candidates of one tree, then the next; "
        "breadth-first: round-robin over the viable trees.",
    ),
    cfg.StrOpt("incomplete_consumer_project_id", default=DEFAULT_CONSUMER_MISSING_ID,
               help="Project recorded for allocations written below microversion 1.8."),
    cfg.StrOpt("incomplete_consumer_user_id", default=DEFAULT_CONSUMER_MISSING_ID,
               help="User recorded for allocations written below microversion 1.8."),
    cfg.IntOpt("allocation_conflict_retry_count", default=10, min=0,
               help="Server-side retries of an allocation write that raced "
               "another writer on a provider generation."),
]

workarounds_opts = [
    cfg.BoolOpt("optimize_for_wide_provider_trees", default=False,
                help="Accepted for compatibility; the candidate engine always "
                "prunes early."),
]

_CORS_ALLOWED_HEADERS = [
    "Content-Type", "OpenStack-API-Version", "X-Auth-Token",
    "X-Openstack-Request-Id", "X-Roles", "X-Project-Id", "X-User-Id",
]
_CORS_EXPOSED_HEADERS = ["OpenStack-API-Version", "X-Openstack-Request-Id"]
_CORS_METHODS = ["GET", "PUT", "POST", "DELETE", "PATCH"]


def register_opts(conf: cfg.ConfigOpts) -> cfg.ConfigOpts:
    """Register every option the service reads on ``conf`` and return it.

    Safe to call more than once on the same object.
    """
    conf.register_opts(database_opts, group="placement_database")
    conf.register_opts(api_opts, group="api")
    conf.register_opts(placement_opts, group="placement")
    conf.register_opts(workarounds_opts, group="workarounds")
    conf.register_opts(cors.CORS_OPTS, group="cors")
    conf.register_opts(sizelimit.OPTS, group="oslo_middleware")
    conf.set_default("max_request_body_size", DEFAULT_MAX_REQUEST_BODY_SIZE,
                     group="oslo_middleware")
    cors.set_defaults(
        allow_headers=_CORS_ALLOWED_HEADERS,
        expose_headers=_CORS_EXPOSED_HEADERS,
        allow_methods=_CORS_METHODS,
    )
    policy_opts.set_defaults(conf)
    return conf


def max_request_body_size(conf: cfg.ConfigOpts) -> int | None:
    """The request body limit in bytes, or None when the option is 0 or less (no limit)."""
    limit = conf.oslo_middleware.max_request_body_size
    return limit if limit > 0 else None


#: Environment variable naming one config file (or several, separated by
#: ``os.pathsep``) to read instead of the default search.
CONFIG_FILE_ENV = "OS_PLACEMENT_CONFIG_FILE"
#: Environment variable naming a directory whose ``placement.conf`` is read
#: (the variable upstream's WSGI script honours).
CONFIG_DIR_ENV = "OS_PLACEMENT_CONFIG_DIR"
#: Read when present and nothing else names a file.
DEFAULT_CONFIG_FILE = "/etc/placement/placement.conf"
#: Prefix of this project's spelling of oslo.config environment variables.
ENV_PREFIX = "OS_PLACEMENT_"


def register_logging_opts(conf: cfg.ConfigOpts) -> cfg.ConfigOpts:
    """Register oslo.log's options (``[DEFAULT] debug``, ``log_file``, ...).

    Kept out of :func:`register_opts` because oslo.log registers
    command-line options, which cannot be added once ``conf`` has parsed its
    arguments; call this before parsing. Safe to call twice before that.
    """
    oslo_log.register_options(conf)
    return conf


def find_config_files(environ: Mapping[str, str] | None = None) -> list[str]:
    """The config files a process reads when none is given on its command line.

    In order of preference: the files named by ``OS_PLACEMENT_CONFIG_FILE``
    (each must exist), else ``$OS_PLACEMENT_CONFIG_DIR/placement.conf``, else
    ``/etc/placement/placement.conf``; the last two only when they exist, so
    a service configured purely by environment variables needs no file.
    Raises ``cfg.ConfigFilesNotFoundError`` for a named file that is missing.
    """
    environ = os.environ if environ is None else environ
    named = environ.get(CONFIG_FILE_ENV, "").strip()
    if named:
        files = [path for path in named.split(os.pathsep) if path]
        missing = [path for path in files if not os.path.isfile(path)]
        if missing:
            raise cfg.ConfigFilesNotFoundError(missing)
        return files
    directory = environ.get(CONFIG_DIR_ENV, "").strip()
    if directory:
        candidate = os.path.join(directory, "placement.conf")
        return [candidate] if os.path.isfile(candidate) else []
    return [DEFAULT_CONFIG_FILE] if os.path.isfile(DEFAULT_CONFIG_FILE) else []


def load_config(
    args: list[str] | None = None,
    config_files: list[str] | None = None,
    project: str = "placement",
) -> cfg.ConfigOpts:
    """Build a fresh ``ConfigOpts`` from command-line style args, files and environment.

    ``config_files`` are read in order (later files win); ``None`` means
    :func:`find_config_files`. Precedence, strongest first: command-line
    ``args``, ``OS_PLACEMENT_<GROUP>__<OPTION>`` variables, oslo.config's own
    ``OS_<GROUP>__<OPTION>`` variables, config files, defaults. The caller
    owns the returned object; nothing global is touched (``os.environ`` is
    only read).

    Raises ``cfg.Error`` (files missing or unparsable, an invalid value in a
    prefixed variable).
    """
    conf = cfg.ConfigOpts()
    register_opts(conf)
    register_logging_opts(conf)
    if config_files is None:
        config_files = find_config_files()
    check_text_files(config_files)
    conf(
        args if args is not None else [],
        project=project,
        default_config_files=list(config_files),
        default_config_dirs=[],
        use_env=True,
    )
    apply_prefixed_environment(conf, os.environ)
    check_values(conf, list(config_files))
    return conf


def check_text_files(paths: Sequence[str]) -> None:
    """Refuse a config file that is not UTF-8 text, naming it.

    oslo.config would fail on it with a bare ``UnicodeDecodeError`` naming no
    file. Files that are missing or unreadable are left to oslo.config, which
    names them.
    """
    for path in paths:
        try:
            with open(path, "rb") as handle:
                handle.read().decode("utf-8")
        except OSError:
            continue
        except UnicodeDecodeError as error:
            raise cfg.ConfigFileParseError(
                path, f"not a text file (byte {error.start} is not UTF-8); is it the "
                "right file?") from None


def check_values(conf: cfg.ConfigOpts, config_files: Sequence[str] = ()) -> None:
    """Read every registered option once, so that a bad value is refused now.

    oslo.config converts a value only when it is read, so ``max_retries =
    banana`` would otherwise be found (or not) by whichever code reads it
    first, possibly much later. Raises ``cfg.ConfigFileValueError`` naming
    the ``config_files`` read, the group, the option and why.
    """
    where = f"{', '.join(config_files)}: " if config_files else ""
    for name in list(conf):
        group = conf[name]
        if not isinstance(group, cfg.ConfigOpts.GroupAttr):
            _read_value(conf, f"{where}[DEFAULT]", name)
            continue
        for option in list(group):
            _read_value(group, f"{where}[{name}]", option)


def _read_value(namespace: cfg.ConfigOpts | cfg.ConfigOpts.GroupAttr, group: str,
                option: str) -> None:
    try:
        namespace[option]
    except (cfg.ConfigFileValueError, cfg.ConfigSourceValueError, ValueError) as error:
        reason = str(error).rpartition(" is not valid: ")[2] or type(error).__name__
        raise cfg.ConfigFileValueError(
            f"{group} {option}: invalid value ({reason})") from None


def apply_prefixed_environment(conf: cfg.ConfigOpts, environ: Mapping[str, str]) -> None:
    """Apply ``OS_PLACEMENT_<GROUP>__<OPTION>`` variables of ``environ`` to ``conf``.

    oslo.config itself reads ``OS_<GROUP>__<OPTION>``. This project also
    accepts the group behind a ``PLACEMENT_`` prefix, so that its variables
    cannot collide with another OpenStack service's in a shared environment
    (``OS_PLACEMENT_API__AUTH_STRATEGY`` sets ``[api] auth_strategy``,
    ``OS_PLACEMENT_DEFAULT__DEBUG`` sets ``[DEFAULT] debug``). Where oslo.config's
    own reading already names a group (``OS_PLACEMENT_DATABASE__CONNECTION``
    is ``[placement_database] connection``; ``OS_PLACEMENT__X`` is
    ``[placement] X``) it is left to oslo.config. Variables naming no
    registered option are ignored, as oslo.config ignores unknown ones.
    A value given on the command line is not overridden.

    Raises ``cfg.ConfigSourceValueError`` naming the variable when a value
    does not fit its option's type or choices.
    """
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX):
            continue
        group_part, separator, option_part = name[len(ENV_PREFIX):].partition("__")
        if not separator or not group_part or not option_part:
            continue
        group = group_part.lower()
        if "placement_" + group in conf:
            continue  # oslo.config reads it as [placement_<group>] itself
        option = option_part.lower()
        group_name = None if group == "default" else group
        try:
            location = conf.get_location(option, group_name)
        except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
            continue
        except (cfg.Error, ValueError):
            location = None  # an invalid value from a file: the variable replaces it
        if location is not None and location.location == cfg.Locations.command_line:
            continue
        try:
            conf.set_override(option, environ[name], group_name)
        except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
            continue  # e.g. OS_PLACEMENT_DEFAULT__API: a group, not an option
        except ValueError as error:
            raise cfg.ConfigSourceValueError(
                f"environment variable {name}={environ[name]!r} is not a valid value for "
                f"[{group_name or 'DEFAULT'}] {option}: {error}") from error
