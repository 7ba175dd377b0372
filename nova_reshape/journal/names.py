"""Custom traits and resource classes a run created, and forgetting them again.

Writing a node creates the custom traits and classes its change uses when
they do not exist yet (as ``PUT /traits/{name}`` would); they are not part
of any node, so node entries do not hold them. Instead a journaled run
keeps, among its inputs (:data:`INPUT_KEY`), the custom names that existed
when it started (:func:`custom_names`). Reverting it deletes the custom
names created since that nothing uses any more, by Placement's own delete
rules (a name still carried by a provider, or held by an inventory, is
kept), so a full revert leaves the trait and class tables as they were.

Aggregates likewise: a write adding a provider to an aggregate Placement
did not know creates the aggregate's row (as ``PUT .../aggregates`` does),
which Placement never deletes. The aggregates existing when a run starts
are kept with the custom names; reverting it deletes the aggregates created
since that no provider is in, so the aggregate table is as it was too.
(Runs recorded before aggregates were kept forget none.)
"""

from __future__ import annotations

from collections.abc import Mapping

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.db.database import Database
from placement_wsgi.objects import aggregate as aggregate_obj
from placement_wsgi.objects import resource_class as rc_obj
from placement_wsgi.objects import trait as trait_obj

#: The run input holding the custom names that existed when it started.
INPUT_KEY = "custom_names_before"
TRAITS, CLASSES, AGGREGATES = "traits", "resource_classes", "aggregates"


def custom_names(connection: Connection) -> dict[str, list[str]]:
    """The custom traits and resource classes, and the aggregates, in the database now
    (sorted)."""
    found = {}
    for key, table in ((TRAITS, tables.traits), (CLASSES, tables.resource_classes)):
        found[key] = sorted(connection.execute(sa.select(table.c.name).where(
            table.c.name.like(f"{trait_obj.CUSTOM_PREFIX}%"))).scalars())
    aggregates = tables.placement_aggregates
    found[AGGREGATES] = sorted(connection.execute(sa.select(aggregates.c.uuid)).scalars())
    return found


def created_since(database: Database, before: Mapping[str, list[str]] | None,
                  ) -> dict[str, list[str]]:
    """The custom names in the database now that ``before`` did not list."""
    return new_names(database.read(custom_names) if before is not None else {}, before)


def new_names(now: Mapping[str, list[str]], before: Mapping[str, list[str]] | None,
              ) -> dict[str, list[str]]:
    """The custom names of ``now`` that ``before`` did not list (none without ``before``:
    a run that did not record its names has none to forget)."""
    if before is None:
        return {TRAITS: [], CLASSES: [], AGGREGATES: []}
    return {key: [name for name in now.get(key, []) if name not in set(before.get(key, []))]
            if key in before else [] for key in (TRAITS, CLASSES, AGGREGATES)}


def forget_unused(database: Database, before: Mapping[str, list[str]] | None, *,
                  dry_run: bool) -> list[str]:
    """Delete the custom names created since ``before`` that nothing uses (none in a
    dry run); the names deleted (in a dry run: the candidates), ``trait NAME`` or
    ``resource class NAME``."""
    created = created_since(database, before)
    done = []
    for kind, key, delete in (("trait", TRAITS, trait_obj.delete_trait),
                              ("resource class", CLASSES, rc_obj.delete_resource_class)):
        for name in created[key]:
            if not dry_run:
                try:
                    delete(database, name)
                except (errors.Conflict, errors.NotFound):
                    continue  # in use (kept), or gone meanwhile
            done.append(f"{kind} {name}")
    if created[AGGREGATES]:
        unused = (created[AGGREGATES] if dry_run else
                  database.write(aggregate_obj.delete_unused, created[AGGREGATES]))
        done += [f"aggregate {uuid}" for uuid in unused]
    return done
