"""How a ``nova-reshape-manage`` command reaches Placement: in-process on its database, or a URL.

Every command that reads or writes Placement takes the same inputs
(:class:`~nova_reshape.cmd.request.PlacementAccess`): ``--config-file``
(placement.conf naming ``[placement_database] connection``), else
nova.conf's ``[placement_database] connection`` (releases before Stein
served Placement from nova), or ``--placement-url`` with ``--token`` and
``--header``. :func:`placement_opener` checks them once, before anything
else is read, and returns what opens the transport (in each worker); the
database's configuration, check and opening are :mod:`.placement_db`'s.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

from nova_reshape.cmd import nova_cells
from nova_reshape.cmd.placement_db import (  # noqa: F401 - open_database re-exported
    bad_input,
    check_placement_database,
    database_conf,
    open_database,
)
from nova_reshape.cmd.request import PlacementAccess
from nova_reshape.compute import parallel
from nova_reshape.nova.conf.per_host import NovaConfigPaths
from nova_reshape.transport import http_placement


@contextlib.contextmanager
def open_http(url: str, token: str | None, headers: dict[str, str]) -> Iterator[Any]:
    """A requests-based client of the Placement service at ``url``."""
    client = http_placement(url, token=token, headers=headers)
    try:
        yield client
    finally:
        client.close()


def placement_opener(access: PlacementAccess,
                     nova_configs: NovaConfigPaths = NovaConfigPaths()) -> parallel.Opener:
    """What opens the transport ``access`` asks for (in each worker); a refusal when
    unusable. Without ``--config-file`` and ``--placement-url``, the Placement
    database of nova.conf (``nova_configs``), as releases before Stein had it.

    The configuration and the database are loaded and checked here, once, so
    a bad one is reported before any worker starts.
    """
    if access.url and access.config_files:
        raise bad_input("give either --config-file or --placement-url, not both")
    if access.headers and not access.url:
        raise bad_input("--header only applies to --placement-url")
    if access.url:
        fixed = {}
        for header in access.headers:
            name, sep, value = header.partition(":")
            if not sep or not name.strip():
                raise bad_input(f"--header {header!r} is not NAME:VALUE")
            fixed[name.strip()] = value.strip()
        return functools.partial(open_http, access.url, access.token, fixed)
    nova_connection = nova_cells.nova_connections(nova_configs).placement_database
    if not access.config_files and not nova_connection:
        raise bad_input("give --config-file (a placement.conf naming the database), "
                         "--placement-url, or a --nova-config whose [placement_database] "
                         "connection names it")
    check_placement_database(database_conf(access.config_files, nova_connection))
    return functools.partial(open_database, list(access.config_files), nova_connection)
