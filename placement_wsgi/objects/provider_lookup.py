"""Finding one provider and bumping its generation: used by every sub-resource."""

from __future__ import annotations

import dataclasses
import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.db.arrays import uses_arrays
from placement_wsgi.db.database import Database

_providers = tables.resource_providers
_parents = _providers.alias("parent")
_roots = _providers.alias("root")


@dataclasses.dataclass(frozen=True)
class ResourceProvider:
    id: int
    uuid: str
    name: str | None
    generation: int
    parent_provider_uuid: str | None
    root_provider_uuid: str | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    @property
    def modified_at(self) -> datetime.datetime | None:
        return self.updated_at or self.created_at


#: Built once: a Select is immutable (``.where()`` returns a new one), and building
#: it costs about 0.05 CPU-ms, paid by nearly every request of the service.
_PROVIDER_SELECT = (
    sa.select(
        _providers.c.id, _providers.c.uuid, _providers.c.name,
        _providers.c.generation, _providers.c.created_at, _providers.c.updated_at,
        _parents.c.uuid.label("parent_provider_uuid"),
        _roots.c.uuid.label("root_provider_uuid"),
    )
    .select_from(
        _providers
        .outerjoin(_parents, _providers.c.parent_provider_id == _parents.c.id)
        .outerjoin(_roots, _providers.c.root_provider_id == _roots.c.id)
    )
)


def provider_select() -> sa.Select:
    """SELECT of every provider column plus its parent's and root's uuid (one shared,
    immutable statement: callers add to it with ``.where()`` and the like)."""
    return _PROVIDER_SELECT


def provider_from_row(row: sa.Row) -> ResourceProvider:
    return ResourceProvider(
        id=row.id, uuid=row.uuid, name=row.name, generation=row.generation or 0,
        parent_provider_uuid=row.parent_provider_uuid,
        root_provider_uuid=row.root_provider_uuid or row.uuid,
        created_at=row.created_at, updated_at=row.updated_at,
    )


def find_provider(connection: Connection, uuid: str) -> ResourceProvider | None:
    row = connection.execute(provider_select().where(_providers.c.uuid == uuid)).first()
    return provider_from_row(row) if row is not None else None


def get_provider(connection: Connection, uuid: str, message: str | None = None) -> ResourceProvider:
    """The provider with ``uuid``; 404 ``No resource provider with uuid ... found``."""
    provider = find_provider(connection, uuid)
    if provider is None:
        raise errors.NotFound(message or f"No resource provider with uuid {uuid} found")
    return provider


GENERATION_CONFLICT = (
    "Resource provider's generation already changed. Please update the generation "
    "and try again.")


def check_generation(provider: ResourceProvider, given: int,
                     message: str = "resource provider generation conflict") -> None:
    """409 concurrent_update when the client's generation is stale."""
    if provider.generation != given:
        raise errors.ConcurrentUpdate(message)


def bump_generation(connection: Connection, provider_id: int, expected: int) -> int:
    """``generation = expected + 1`` if still ``expected``; else 409.

    The conditional UPDATE is what serialises concurrent writers of one
    provider: the second one to commit matches no row.
    """
    bump_or_conflict(connection, {provider_id: expected})
    return expected + 1


def bump_or_conflict(connection: Connection, expected: dict[int, int]) -> None:
    """:func:`bump_generations`, raising 409 when any provider had changed."""
    if not bump_generations(connection, expected):
        raise errors.ConcurrentUpdate(
            "resource provider generation conflict: another process changed the "
            "provider; refresh and try again")


def bump_generations(connection: Connection, expected: dict[int, int]) -> bool:
    """``generation + 1`` for each provider id still at its expected generation.

    One conditional UPDATE for many providers; False when any of them had
    changed (a concurrent writer committed in between), and then the caller
    must not commit. The statement's text does not depend on how many
    providers there are (it is compiled once): the pairs go as two arrays on
    PostgreSQL, elsewhere as an expanding list of ids (which the primary key
    finds) and one of (id, generation) pairs (which the found rows must match).
    """
    if not expected:
        return True
    pairs = sorted(expected.items())
    ids, now = [provider_id for provider_id, _ in pairs], tables.utcnow()
    if uses_arrays(connection):
        result = connection.execute(_BUMP_FROM_ARRAYS, {
            "ids": ids, "generations": [generation for _, generation in pairs], "now": now})
    else:
        result = connection.execute(_BUMP_LISTED, {"ids": ids, "pairs": pairs, "now": now})
    return result.rowcount == len(expected)


_BUMP_FROM_ARRAYS = sa.text(
    "UPDATE resource_providers SET generation = resource_providers.generation + 1, "
    "updated_at = :now "
    "FROM unnest(CAST(:ids AS INTEGER[]), CAST(:generations AS INTEGER[])) "
    "AS expected (id, generation) "
    "WHERE resource_providers.id = expected.id "
    "AND resource_providers.generation = expected.generation"
).bindparams(sa.bindparam("now", type_=_providers.c.updated_at.type))

_BUMP_LISTED = (
    _providers.update()
    .where(_providers.c.id.in_(sa.bindparam("ids", expanding=True)),
           sa.tuple_(_providers.c.id, _providers.c.generation).in_(
               sa.bindparam("pairs", expanding=True)))
    .values(generation=_providers.c.generation + 1, updated_at=sa.bindparam("now")))


def require_provider(database: Database, uuid: str,
                     message: str | None = None) -> ResourceProvider:
    """The provider, or 404: lets a handler 404 before it parses the body."""
    return database.read(get_provider, uuid, message)
