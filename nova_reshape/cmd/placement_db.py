"""Placement's database for ``nova-reshape-manage``: configuration, check, opening.

Every command that works in-process on Placement's database (the
migration, ``runs``, ``revert``) finds it the same way: placement.conf
files (``--config-file``), else nova.conf's ``[placement_database]
connection`` as releases before Stein had it; checks it before anything
else (schema at head; nothing is created); and opens the application on
it (:func:`open_database`). A missing or unusable one is a
:class:`~nova_reshape.cmd.refusal.Refusal` with one line.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from nova_reshape.cmd.refusal import ExitClass, Refusal
from nova_reshape.transport import open_direct
from placement_wsgi import service
from placement_wsgi.db import preflight


def bad_input(message: str) -> Refusal:
    """A refusal for unusable input (exit 2)."""
    return Refusal(ExitClass.BAD_INPUT, message)


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
        raise bad_input(str(error)) from error
    if not conf.placement_database.connection:
        if not nova_connection:
            raise bad_input("configuration: [placement_database] connection is not set in "
                            + (", ".join(config_files) or "any configuration file"))
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
