"""Traits: standard (os-traits) and custom (``CUSTOM_*``) names."""

from __future__ import annotations

import dataclasses
import datetime
import re
from collections.abc import Mapping, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.db.arrays import one_of
from placement_wsgi.db.database import Database, RetryTransaction
from placement_wsgi.db.inserts import insert_rows
from placement_wsgi.objects.provider_lookup import (
    GENERATION_CONFLICT,
    bump_generation,
    bump_or_conflict,
    check_generation,
    get_provider,
)

CUSTOM_NAME = re.compile(r"^CUSTOM_[A-Z0-9_]+$")
MAX_NAME_LENGTH = 255
CUSTOM_PREFIX = "CUSTOM_"


@dataclasses.dataclass(frozen=True)
class Trait:
    id: int
    name: str
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    @property
    def modified_at(self) -> datetime.datetime | None:
        return self.updated_at or self.created_at


def _from_row(row: sa.Row) -> Trait:
    return Trait(row.id, row.name, row.created_at, row.updated_at)


def is_valid_custom_name(name: str) -> bool:
    return len(name) <= MAX_NAME_LENGTH and bool(CUSTOM_NAME.match(name))


def list_traits(
    database: Database,
    names: list[str] | None = None,
    prefix: str | None = None,
    associated: bool | None = None,
) -> list[Trait]:
    """Traits filtered by exact names, a name prefix and provider association.

    Names and prefix match case-sensitively on every engine: SQL narrows the
    rows (LIKE ignores case on SQLite and MySQL, ``=`` on MySQL), and the
    Python check makes the match exact.
    """
    wanted = set(names) if names is not None else None

    def matches(name: str) -> bool:
        return ((wanted is None or name in wanted)
                and (prefix is None or name.startswith(prefix)))

    def body(connection: Connection) -> list[Trait]:
        query = sa.select(tables.traits)
        if wanted is not None:
            query = query.where(tables.traits.c.name.in_(sorted(wanted)))
        if prefix is not None:
            query = query.where(tables.traits.c.name.startswith(prefix, autoescape=True))
        if associated is not None:
            linked = sa.select(tables.resource_provider_traits.c.trait_id)
            column = tables.traits.c.id
            query = query.where(column.in_(linked) if associated else column.not_in(linked))
        rows = connection.execute(query.order_by(tables.traits.c.name)).all()
        return [_from_row(row) for row in rows if matches(row.name)]

    return database.read(body)


def _find_row(connection: Connection, name: str) -> sa.Row | None:
    """The trait row named exactly ``name`` (MySQL's ``=`` ignores case)."""
    rows = connection.execute(sa.select(tables.traits).where(tables.traits.c.name == name)).all()
    return next((row for row in rows if row.name == name), None)


def get_trait(database: Database, name: str) -> Trait:
    """The trait called ``name``; 404 when there is none."""
    row = database.read(_find_row, name)
    if row is None:
        raise errors.NotFound(f"No such trait(s): {name}.")
    return _from_row(row)


def insert_trait_unless_present(connection: Connection, name: str) -> tuple[Trait, bool]:
    """Create the custom trait ``name`` unless it exists, in the caller's
    transaction; return (trait, created)."""
    row = _find_row(connection, name)
    if row is not None:
        return _from_row(row), False
    try:
        connection.execute(tables.traits.insert().values(name=name))
    except sa.exc.IntegrityError as error:  # created concurrently
        raise RetryTransaction() from error
    return _from_row(_find_row(connection, name)), True


def ensure_trait(database: Database, name: str) -> tuple[Trait, bool]:
    """Create the custom trait ``name`` unless it exists; return (trait, created)."""
    return database.write(insert_trait_unless_present, name)


def delete_trait(database: Database, name: str) -> None:
    """Delete a custom trait that no provider carries."""

    def body(connection: Connection) -> None:
        row = _find_row(connection, name)
        if row is None:
            raise errors.NotFound(f"No such trait(s): {name}.")
        trait_id = row.id
        if not name.startswith(CUSTOM_PREFIX):
            raise errors.BadRequest(f"Cannot delete standard trait {name}.")
        in_use = connection.execute(sa.select(tables.resource_provider_traits.c.trait_id).where(
            tables.resource_provider_traits.c.trait_id == trait_id).limit(1)).first()
        if in_use is not None:
            raise errors.Conflict(f"The trait {name} is in use by a resource provider.")
        connection.execute(tables.traits.delete().where(tables.traits.c.id == trait_id))

    database.write(body)


def trait_ids_by_name(connection: Connection, names: set[str] | list[str]) -> dict[str, int]:
    """Map each known name to its id (unknown names, in any case, are left out)."""
    wanted = set(names)
    if not wanted:
        return {}
    rows = connection.execute(sa.select(tables.traits.c.name, tables.traits.c.id).where(
        one_of(connection, tables.traits.c.name, sorted(wanted)))).all()
    return {row.name: row.id for row in rows if row.name in wanted}


def require_traits(connection: Connection, names: set[str] | list[str]) -> dict[str, int]:
    """Like trait_ids_by_name, but 400 naming the unknown traits."""
    found = trait_ids_by_name(connection, names)
    missing = sorted(set(names) - set(found))
    if missing:
        raise errors.BadRequest(f"No such trait {', '.join(missing)}")
    return found


# -- traits of one provider ------------------------------------------------------

_links = tables.resource_provider_traits


@dataclasses.dataclass(frozen=True)
class ProviderTraits:
    names: list[str]
    generation: int
    modified_at: datetime.datetime | None


def _provider_trait_rows(connection: Connection, provider_id: int) -> list[sa.Row]:
    return list(connection.execute(
        sa.select(tables.traits.c.name, tables.traits.c.created_at, tables.traits.c.updated_at)
        .join(_links, _links.c.trait_id == tables.traits.c.id)
        .where(_links.c.resource_provider_id == provider_id)
        .order_by(tables.traits.c.name)).all())


def trait_names_by_provider(connection: Connection,
                            providers: sa.Select | Sequence[int]) -> dict[int, list[str]]:
    """provider id -> its trait names (sorted), for the providers ``providers``
    names (ids, or a SELECT of ids); providers without traits are absent."""
    found: dict[int, list[str]] = {}
    for provider, name in connection.execute(
            sa.select(_links.c.resource_provider_id, tables.traits.c.name)
            .join(_links, _links.c.trait_id == tables.traits.c.id)
            .where(one_of(connection, _links.c.resource_provider_id, providers))
            .order_by(_links.c.resource_provider_id, tables.traits.c.name)).all():
        found.setdefault(provider, []).append(name)
    return found


def _provider_traits(connection: Connection, provider_id: int, generation: int) -> ProviderTraits:
    rows = _provider_trait_rows(connection, provider_id)
    modified = [row.updated_at or row.created_at for row in rows]
    present = [when for when in modified if when is not None]
    return ProviderTraits([row.name for row in rows], generation,
                          max(present) if present else None)


def get_provider_traits(database: Database, provider_uuid: str) -> ProviderTraits:

    def body(connection: Connection) -> ProviderTraits:
        provider = get_provider(connection, provider_uuid)
        return _provider_traits(connection, provider.id, provider.generation)

    return database.read(body)


def replace_provider_traits(connection: Connection, provider_id: int, generation: int,
                            names: list[str] | set[str]) -> int:
    """Make the provider's traits exactly ``names`` (known traits); bump on change.

    Returns the provider's generation afterwards.
    """
    return replace_traits_of_providers(connection, {provider_id: (generation, names)})[
        provider_id]


def replace_traits_of_providers(
        connection: Connection,
        wanted: Mapping[int, tuple[int, list[str] | set[str]]]) -> dict[int, int]:
    """For each provider id: (generation expected, names); make its traits exactly
    ``names`` and bump the generation of the ones that change.

    A few statements whatever the number of providers (a new tree's providers
    get their traits together). 400 naming unknown traits; 409 when a
    changed provider is no longer at its generation. Returns provider id ->
    generation afterwards.
    """
    if not wanted:
        return {}
    trait_ids = require_traits(connection, {name for _, names in wanted.values()
                                            for name in names})
    current: dict[int, set[int]] = {provider_id: set() for provider_id in wanted}
    for provider_id, trait_id in connection.execute(
            sa.select(_links.c.resource_provider_id, _links.c.trait_id)
            .where(one_of(connection, _links.c.resource_provider_id, sorted(wanted)))).all():
        current[provider_id].add(trait_id)
    target = {provider_id: {trait_ids[name] for name in names}
              for provider_id, (_, names) in wanted.items()}
    changed = {provider_id: wanted[provider_id][0] for provider_id in sorted(wanted)
               if target[provider_id] != current[provider_id]}
    removed = {provider_id: sorted(current[provider_id] - target[provider_id])
               for provider_id in changed if current[provider_id] - target[provider_id]}
    if removed:
        connection.execute(_links.delete().where(sa.or_(*(
            sa.and_(_links.c.resource_provider_id == provider_id,
                    _links.c.trait_id.in_(trait_list))
            for provider_id, trait_list in removed.items()))))
    now = tables.utcnow()
    added = [{"resource_provider_id": provider_id, "trait_id": trait_id, "created_at": now}
             for provider_id in changed
             for trait_id in sorted(target[provider_id] - current[provider_id])]
    insert_rows(connection, _links, added)
    bump_or_conflict(connection, changed)
    return {provider_id: generation + (provider_id in changed)
            for provider_id, (generation, _) in wanted.items()}


def set_provider_traits(database: Database, provider_uuid: str, names: list[str],
                        generation: int) -> ProviderTraits:
    """PUT semantics: 404, then generation check, then unknown traits (400)."""

    def body(connection: Connection) -> ProviderTraits:
        provider = get_provider(connection, provider_uuid)
        check_generation(provider, generation, GENERATION_CONFLICT)
        new_generation = replace_provider_traits(
            connection, provider.id, provider.generation, names)
        return _provider_traits(connection, provider.id, new_generation)

    return database.write(body)


def delete_provider_traits(database: Database, provider_uuid: str) -> None:
    """Remove every trait; bump the generation only if there were some."""

    def body(connection: Connection) -> None:
        provider = get_provider(connection, provider_uuid)
        removed = connection.execute(
            _links.delete().where(_links.c.resource_provider_id == provider.id)).rowcount
        if removed:
            bump_generation(connection, provider.id, provider.generation)

    database.write(body)
