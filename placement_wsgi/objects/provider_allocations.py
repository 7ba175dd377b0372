"""Bulk read of the allocations on many providers (read-only).

``GET /resource_providers/{uuid}/allocations`` answers for one provider;
a tool checking every provider of a large deployment against another
source of truth (nova-reshape's ``placement audit``) would need one request
per provider. :func:`read_provider_allocations` gives the same content,
consumer -> {resource class: used} per provider, for ``batch_size``
providers per read transaction in two set-based statements (the providers'
ids, then their allocation rows with class names), read as plain tuples
(:func:`placement_wsgi.db.rows.connection_rows`). Unlike the tree reader
(:mod:`.tree_state`) it reads nothing else: no inventories, traits,
aggregates or consumer records.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi.db import tables
from placement_wsgi.db.database import Database
from placement_wsgi.db.rows import connection_rows, in_ids, in_values

#: Providers read per transaction by default.
DEFAULT_BATCH_SIZE = 2000

#: consumer uuid -> {resource class: used}
ConsumerResources = dict[str, dict[str, int]]


def _batch(connection: Connection, uuids: Sequence[str]) -> dict[str, ConsumerResources]:
    providers, allocations, classes = (tables.resource_providers, tables.allocations,
                                       tables.resource_classes)
    ids = dict(connection.execute(sa.select(providers.c.id, providers.c.uuid)
                                  .where(in_values(providers.c.uuid, uuids))).all())
    found: dict[str, ConsumerResources] = {uuid: {} for uuid in ids.values()}
    rows = connection_rows(connection, sa.select(
        allocations.c.resource_provider_id, allocations.c.consumer_id, classes.c.name,
        allocations.c.used)
        .join(classes, classes.c.id == allocations.c.resource_class_id)
        .where(in_ids(allocations.c.resource_provider_id, ids)))
    for provider_id, consumer, name, used in rows:
        found[ids[provider_id]].setdefault(consumer, {})[name] = int(used)
    return found


def read_provider_allocations(database: Database, uuids: Sequence[str],
                              batch_size: int = DEFAULT_BATCH_SIZE,
                              ) -> Iterator[tuple[str, ConsumerResources]]:
    """(provider uuid, its allocations) for each of ``uuids``, in that order; a uuid
    naming no provider has none. ``batch_size`` providers per transaction."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    for start in range(0, len(uuids), batch_size):
        chunk = uuids[start:start + batch_size]
        found = database.read(_batch, chunk)
        for uuid in chunk:
            yield uuid, found.get(uuid, {})
