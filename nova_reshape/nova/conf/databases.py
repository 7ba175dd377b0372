"""The database connections a nova.conf names: nova's API database, a cell's, Placement's.

A controller's nova.conf holds ``[api_database] connection`` (the API
database, where the cell mappings are) and ``[database] connection`` (the
cell database of the service; the value templated cell mappings are
filled from). Releases before Stein served Placement from nova, with
``[placement_database] connection`` in nova.conf. Unset options are None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nova_reshape.nova.conf.files import load_conf, refusing_bad_values


@dataclass(frozen=True)
class DatabaseConnections:
    """The connection URLs of nova.conf files (``sources``, later ones win)."""

    sources: tuple[str, ...] = ()
    api_database: str | None = None
    database: str | None = None
    placement_database: str | None = None


def load_connections(files: Sequence[str]) -> DatabaseConnections:
    """The connections nova.conf ``files`` set; NovaConfError (one line) for a file
    that is missing or not INI."""
    if not files:
        return DatabaseConnections()
    conf = load_conf(files)
    try:
        with refusing_bad_values():
            return DatabaseConnections(
                sources=tuple(files), api_database=conf.api_database.connection or None,
                database=conf.database.connection or None,
                placement_database=conf.placement_database.connection or None)
    finally:
        conf.clear()
