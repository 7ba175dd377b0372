"""Provider aggregates: plain uuids associated with providers (many-to-many).

An aggregate row (``placement_aggregates``) is created the first time its
uuid is used and never deleted by Placement (:func:`delete_unused` is for an
offline tool putting the tables back as they were); the uuid is stored verbatim, not
normalised. The 1.19 generation rules (check, then always bump) are the
caller's choice: :func:`set_provider_aggregates` applies them when given a
generation, :func:`replace_provider_aggregates` never does, so other writers
(reshaping tools, provider creation) can reuse it inside their own
transaction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.db.arrays import one_of
from placement_wsgi.db.database import Database, RetryTransaction
from placement_wsgi.objects.provider_lookup import (
    GENERATION_CONFLICT,
    ResourceProvider,
    bump_generation,
    check_generation,
    get_provider,
)

_aggregates = tables.placement_aggregates
_links = tables.resource_provider_aggregates


@dataclasses.dataclass(frozen=True)
class ProviderAggregates:
    uuids: list[str]
    generation: int


def _insert_missing_aggregates(connection: Connection, uuids: list[str]) -> None:
    """Insert an aggregate row for each uuid, skipping ones that exist.

    "Insert unless present" is one statement per dialect, so two requests
    introducing the same aggregate at once both succeed instead of one of
    them failing on the unique uuid.
    """
    rows = [{"uuid": uuid, "created_at": tables.utcnow()} for uuid in uuids]
    dialect = connection.dialect.name
    statement: sa.Insert
    if dialect == "postgresql":
        statement = postgresql.insert(_aggregates).on_conflict_do_nothing(
            index_elements=["uuid"])
    elif dialect == "sqlite":
        statement = sqlite.insert(_aggregates).on_conflict_do_nothing(index_elements=["uuid"])
    elif dialect in ("mysql", "mariadb"):
        insert = mysql.insert(_aggregates)
        statement = insert.on_duplicate_key_update(uuid=insert.inserted.uuid)
    else:  # pragma: no cover - any other engine: plain insert, rerun on a clash
        statement = _aggregates.insert()
    try:
        connection.execute(statement, rows)
    except sa.exc.IntegrityError as error:
        raise RetryTransaction() from error


def aggregate_ids(connection: Connection, uuids: Iterable[str],
                  create: bool = False) -> dict[str, int]:
    """Map aggregate uuids to ids; with ``create``, missing aggregates are created first."""
    wanted = sorted(set(uuids))
    if not wanted:
        return {}
    query = (sa.select(_aggregates.c.uuid, _aggregates.c.id)
             .where(one_of(connection, _aggregates.c.uuid, wanted)))
    found = {row.uuid: row.id for row in connection.execute(query).all()}
    missing = [uuid for uuid in wanted if uuid not in found]
    if create and missing:
        _insert_missing_aggregates(connection, missing)
        found = {row.uuid: row.id for row in connection.execute(query).all()}
    return found


def provider_aggregate_uuids(connection: Connection, provider_id: int) -> list[str]:
    """The uuids of the provider's aggregates, sorted."""
    return aggregate_uuids_by_provider(connection, [provider_id]).get(provider_id, [])


def aggregate_uuids_by_provider(connection: Connection,
                                providers: sa.Select | Sequence[int]) -> dict[int, list[str]]:
    """provider id -> its aggregates' uuids, for the providers ``providers`` names
    (ids, or a SELECT of ids); providers in no aggregate are absent.

    Uuids are stored verbatim, so they are sorted here by code point: a
    database collation (MariaDB's is case-insensitive) would order them
    differently per engine.
    """
    found: dict[int, list[str]] = {}
    for provider, uuid in connection.execute(
            sa.select(_links.c.resource_provider_id, _aggregates.c.uuid)
            .join(_links, _links.c.aggregate_id == _aggregates.c.id)
            .where(one_of(connection, _links.c.resource_provider_id, providers))).all():
        found.setdefault(provider, []).append(uuid)
    for uuids in found.values():
        uuids.sort()
    return found


def replace_provider_aggregates(connection: Connection, provider: ResourceProvider,
                                uuids: Iterable[str]) -> None:
    """Make the provider's aggregates exactly ``uuids``; no generation change.

    Locks the provider row first, so concurrent replacements of one
    provider's set serialise instead of interleaving their deletes and
    inserts; a provider deleted meanwhile is a 404.
    """
    locked = connection.execute(
        sa.select(tables.resource_providers.c.id)
        .where(tables.resource_providers.c.id == provider.id).with_for_update()).first()
    if locked is None:
        raise errors.NotFound(f"No resource provider with uuid {provider.uuid} found")
    target = set(aggregate_ids(connection, uuids, create=True).values())
    current = set(connection.execute(
        sa.select(_links.c.aggregate_id).where(_links.c.resource_provider_id == provider.id))
        .scalars())
    removed = current - target
    added = target - current
    if removed:
        connection.execute(_links.delete().where(
            _links.c.resource_provider_id == provider.id,
            _links.c.aggregate_id.in_(sorted(removed))))
    if added:
        now = tables.utcnow()
        try:
            connection.execute(_links.insert(), [
                {"resource_provider_id": provider.id, "aggregate_id": aggregate_id,
                 "created_at": now}
                for aggregate_id in sorted(added)])
        except sa.exc.IntegrityError as error:  # a concurrent writer got there first
            raise RetryTransaction() from error


def add_links(connection: Connection, added: Mapping[int, Sequence[str]]) -> None:
    """Add, for each provider id, its aggregates ``added[id]`` (uuids it is not in yet;
    the aggregates created where missing), in one insert; no generation change."""
    ids = aggregate_ids(connection, [uuid for uuids in added.values() for uuid in uuids],
                        create=True)
    now = tables.utcnow()
    rows = [{"resource_provider_id": provider_id, "aggregate_id": ids[uuid], "created_at": now}
            for provider_id, uuids in sorted(added.items()) for uuid in uuids]
    if rows:
        try:
            connection.execute(_links.insert(), rows)
        except sa.exc.IntegrityError as error:  # a concurrent writer got there first
            raise RetryTransaction() from error


def bump_generations_by(connection: Connection, expected: Mapping[int, int], count: int) -> None:
    """``generation + count`` for each provider id at its ``expected`` generation: what
    ``count`` successive generation-checked writes leave (one statement); 409 when any
    had changed."""
    if not expected:
        return
    providers = tables.resource_providers
    result = connection.execute(
        providers.update()
        .where(sa.or_(*(sa.and_(providers.c.id == provider_id,
                                providers.c.generation == generation)
                        for provider_id, generation in sorted(expected.items()))))
        .values(generation=providers.c.generation + count, updated_at=tables.utcnow()))
    if result.rowcount != len(expected):
        raise errors.ConcurrentUpdate(GENERATION_CONFLICT)


def delete_unused(connection: Connection, uuids: Sequence[str]) -> list[str]:
    """Delete the aggregates of ``uuids`` no provider is in (Placement itself never
    does: only a tool putting the tables back as they were); the uuids deleted."""
    if not uuids:
        return []
    used = sa.select(_links.c.aggregate_id)
    unused = sorted(connection.execute(sa.select(_aggregates.c.uuid).where(
        _aggregates.c.uuid.in_(sorted(set(uuids))), _aggregates.c.id.not_in(used))).scalars())
    if unused:
        connection.execute(_aggregates.delete().where(_aggregates.c.uuid.in_(unused)))
    return unused


def get_provider_aggregates(database: Database, provider_uuid: str) -> ProviderAggregates:
    """The provider's aggregate uuids and generation; 404 for an unknown provider."""

    def body(connection: Connection) -> ProviderAggregates:
        provider = get_provider(connection, provider_uuid)
        return ProviderAggregates(provider_aggregate_uuids(connection, provider.id),
                                  provider.generation)

    return database.read(body)


def set_provider_aggregates(database: Database, provider_uuid: str, uuids: list[str],
                            generation: int | None) -> ProviderAggregates:
    """PUT semantics; ``generation`` is the client's (1.19+) or None (before 1.19).

    With a generation: 409 when it is stale, and the provider's generation
    goes up by one even when the set does not change. Without one the
    generation is left alone. Returns ``uuids`` as given (the response
    echoes the submitted order) with the generation afterwards.
    """

    def body(connection: Connection) -> ProviderAggregates:
        provider = get_provider(connection, provider_uuid)
        new_generation = provider.generation
        if generation is not None:
            check_generation(provider, generation, GENERATION_CONFLICT)
            # Bump first: the conditional UPDATE row-locks the provider, so a
            # concurrent writer with the same generation waits, then fails.
            new_generation = bump_generation(connection, provider.id, provider.generation)
        replace_provider_aggregates(connection, provider, uuids)
        return ProviderAggregates(list(uuids), new_generation)

    return database.write(body)
