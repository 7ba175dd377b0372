"""Configuration options of the Placement service (design.md contract 1).

Every option lives on an ``oslo_config.cfg.ConfigOpts`` that the caller
owns; nothing here touches ``cfg.CONF``. ``register_opts`` may be called on
any number of ``ConfigOpts`` objects, each describing its own service.
"""

from __future__ import annotations

import os

from oslo_config import cfg
from oslo_middleware import cors
from oslo_policy import opts as policy_opts

DEFAULT_CONSUMER_MISSING_ID = "00000000-0000-0000-0000-000000000000"

#: Default ceiling on the number of allocation candidates generated for one
#: request before ``limit`` is applied. Finite so that no request can exhaust
#: memory; see docs/configuration.md.
DEFAULT_MAX_ALLOCATION_CANDIDATES = 100000

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
    cors.set_defaults(
        allow_headers=_CORS_ALLOWED_HEADERS,
        expose_headers=_CORS_EXPOSED_HEADERS,
        allow_methods=_CORS_METHODS,
    )
    policy_opts.set_defaults(conf)
    return conf


def load_config(
    args: list[str] | None = None,
    config_files: list[str] | None = None,
    project: str = "placement",
) -> cfg.ConfigOpts:
    """Build a fresh ``ConfigOpts`` from command-line style args and files.

    Environment variables ``OS_PLACEMENT_<GROUP>__<OPTION>`` (and the
    upstream-style ``OS_<GROUP>__<OPTION>``) override the files.
    """
    conf = cfg.ConfigOpts()
    register_opts(conf)
    _apply_environment_aliases()
    conf(
        args if args is not None else [],
        project=project,
        default_config_files=config_files,
        default_config_dirs=[],
        use_env=True,
    )
    return conf


def _apply_environment_aliases() -> None:
    """Map ``OS_PLACEMENT_<GROUP>__<OPT>`` onto oslo.config's ``OS_<GROUP>__<OPT>``.

    oslo.config's environment source reads ``OS_<GROUP>__<OPT>``. The
    documented spelling of this project adds a ``PLACEMENT_`` prefix so the
    variables cannot collide with other OpenStack services in the same
    environment; both spellings work, the prefixed one wins. The group
    ``placement`` itself is reached as ``OS_PLACEMENT_PLACEMENT__<OPT>`` or
    the upstream ``OS_PLACEMENT__<OPT>``; ``OS_PLACEMENT_DATABASE__*`` is the
    upstream name of ``[placement_database]`` and is left alone.
    """
    prefix = "OS_PLACEMENT_"
    for name, value in list(os.environ.items()):
        if not name.startswith(prefix) or "__" not in name:
            continue
        rest = name[len(prefix):]
        group = rest.split("__", 1)[0]
        if group == "DATABASE":
            continue  # OS_PLACEMENT_DATABASE__X already names [placement_database]
        os.environ["OS_" + rest] = value
