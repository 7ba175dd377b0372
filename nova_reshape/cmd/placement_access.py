"""How a ``nova-reshape-manage`` command reaches Placement: in-process on its database, or a URL.

Every command that reads or writes Placement takes the same inputs
(:class:`~nova_reshape.cmd.request.PlacementAccess`): ``--config-file``
(placement.conf naming ``[placement_database] connection``), else
nova.conf's ``[placement_database] connection`` (releases before Stein
served Placement from nova), or ``--placement-url`` with ``--token`` and
``--header``. :func:`placement_opener` checks them once, before anything
else is read, and returns what opens the transport (in each worker).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from typing import Any

from nova_reshape.cmd import nova_cells
from nova_reshape.cmd.refusal import ExitClass, Refusal
from nova_reshape.cmd.request import PlacementAccess
from nova_reshape.compute import parallel
from nova_reshape.nova.conf.per_host import NovaConfigPaths
from nova_reshape.transport import http_placement, open_direct
from placement_wsgi import service
from placement_wsgi.db import preflight


@contextlib.contextmanager
def open_http(url: str, token: str | None, headers: dict[str, str]) -> Iterator[Any]:
    """A requests-based client of the Placement service at ``url``."""
    client = http_placement(url, token=token, headers=headers)
    try:
        yield client
    finally:
        client.close()


@contextlib.contextmanager
def open_database(config_files: Sequence[str], nova_connection: str | None = None,
                  ) -> Iterator[Any]:
    """The Placement application in-process on the configured database."""
    with open_direct(database_conf(config_files, nova_connection)) as client:
        yield client


def database_conf(config_files: Sequence[str], nova_connection: str | None = None) -> Any:
    """placement.conf ``config_files``; where they name no database, nova.conf's
    ``[placement_database] connection`` (``nova_connection``: releases before Stein
    served Placement from nova), else a refusal."""
    try:
        conf = service.load_conf(config_files=list(config_files))
    except service.StartupError as error:
        raise _bad_input(str(error)) from error
    if not conf.placement_database.connection:
        if not nova_connection:
            raise _bad_input("configuration: [placement_database] connection is not set in "
                             + ", ".join(config_files))
        conf.set_override("connection", nova_connection, "placement_database")
    return conf


def check_placement_database(conf: Any) -> None:
    """Placement's database usable as the migration needs it (schema at head), or a
    refusal naming it, the cause and the fix; nothing is created."""
    try:
        service.check_database(conf, preflight.Access.USE, preflight.Schema.HEAD)
    except service.StartupError as error:
        exit_class = (ExitClass.BAD_INPUT if error.exit_code == service.EXIT_CONFIGURATION
                      else ExitClass.FAILED)
        raise Refusal(exit_class, str(error)) from error


def _bad_input(message: str) -> Refusal:
    return Refusal(ExitClass.BAD_INPUT, message)


def placement_opener(access: PlacementAccess,
                     nova_configs: NovaConfigPaths = NovaConfigPaths()) -> parallel.Opener:
    """What opens the transport ``access`` asks for (in each worker); a refusal when
    unusable. Without ``--config-file`` and ``--placement-url``, the Placement
    database of nova.conf (``nova_configs``), as releases before Stein had it.

    The configuration and the database are loaded and checked here, once, so
    a bad one is reported before any worker starts.
    """
    if access.url and access.config_files:
        raise _bad_input("give either --config-file or --placement-url, not both")
    if access.headers and not access.url:
        raise _bad_input("--header only applies to --placement-url")
    if access.url:
        fixed = {}
        for header in access.headers:
            name, sep, value = header.partition(":")
            if not sep or not name.strip():
                raise _bad_input(f"--header {header!r} is not NAME:VALUE")
            fixed[name.strip()] = value.strip()
        return functools.partial(open_http, access.url, access.token, fixed)
    nova_connection = nova_cells.nova_connections(nova_configs).placement_database
    if not access.config_files and not nova_connection:
        raise _bad_input("give --config-file (a placement.conf naming the database), "
                         "--placement-url, or a --nova-config whose [placement_database] "
                         "connection names it")
    check_placement_database(database_conf(access.config_files, nova_connection))
    return functools.partial(open_database, list(access.config_files), nova_connection)
