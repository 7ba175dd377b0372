"""Inserting new resource providers: the checks, then as few statements as may be.

One home for what ``POST /resource_providers`` and a tree change (
:mod:`placement_wsgi.objects.tree_change`, many providers at once) insert:
the checks (an empty name, a parent equal to itself or unknown: 400; a uuid
or name taken: 409 duplicate_name), a couple of queries whatever the number
of providers, then the rows. A new child locks its parent (SELECT ... FOR
UPDATE) so that the parent cannot be deleted or moved to another tree
before the child is committed with the parent's root.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.db.arrays import one_of
from placement_wsgi.db.database import RetryTransaction
from placement_wsgi.db.inserts import insert_rows

_providers = tables.resource_providers


def _check_create_clashes(connection: Connection, uuid: str, name: str) -> None:
    """409 duplicate_name naming the uuid and/or the name already taken.

    The matching is done by the database, so that it agrees with the unique
    constraints' own notion of equality (collations on MySQL).
    """
    rows = connection.execute(
        sa.select((_providers.c.uuid == uuid).label("same_uuid"),
                  (_providers.c.name == name).label("same_name"))
        .where(sa.or_(_providers.c.uuid == uuid, _providers.c.name == name))).all()
    if not rows:
        return
    clashes = []
    if any(row.same_uuid for row in rows):
        clashes.append(f"uuid: {uuid}")
    if any(row.same_name for row in rows):
        clashes.append(f"name: {name}")
    raise errors.DuplicateName(
        f"Conflicting resource provider {', '.join(clashes)} already exists.")


def _create_failed(name: str, uuid: str, reason: str) -> errors.BadRequest:
    return errors.BadRequest(
        f'Unable to create resource provider "{name}", {uuid}: '
        f"Object action create failed because: {reason}")


@dataclasses.dataclass(frozen=True)
class NewProvider:
    """A provider to insert: its name, canonical uuid and parent's uuid (or None)."""

    name: str
    uuid: str
    parent_uuid: str | None = None


def _checked_parents(connection: Connection, new: Sequence[NewProvider]) -> dict[str, sa.Row]:
    """The existing parents of ``new`` (locked), by uuid; 400 for a provider whose
    parent is itself, neither exists nor comes earlier in ``new``, or that has no name."""
    for provider in new:
        if not provider.name:
            raise _create_failed(provider.name, provider.uuid, "name is required")
        if provider.parent_uuid is not None and provider.parent_uuid == provider.uuid:
            raise _create_failed(
                provider.name, provider.uuid,
                "parent provider UUID cannot be same as UUID. Please set parent provider "
                "UUID to None if there is no parent.")
    inserted = {provider.uuid for provider in new}
    wanted = sorted({provider.parent_uuid for provider in new
                     if provider.parent_uuid is not None} - inserted)
    # Locked so that a parent cannot be deleted or moved to another tree
    # before its children are committed with the parent's root.
    parents = {row.uuid: row for row in connection.execute(
        sa.select(_providers.c.uuid, _providers.c.id, _providers.c.root_provider_id)
        .where(one_of(connection, _providers.c.uuid, wanted)).with_for_update()).all()
    } if wanted else {}
    earlier: set[str] = set()
    for provider in new:
        if (provider.parent_uuid is not None and provider.parent_uuid not in parents
                and provider.parent_uuid not in earlier):
            raise _create_failed(provider.name, provider.uuid,
                                 "parent provider UUID does not exist.")
        earlier.add(provider.uuid)
    return parents


def _check_clashes(connection: Connection, new: Sequence[NewProvider]) -> None:
    """409 duplicate_name for the first of ``new`` whose uuid or name is taken, by
    the database or by an earlier one of ``new``. One query when none is."""
    taken = connection.execute(
        sa.select(_providers.c.id).where(sa.or_(
            one_of(connection, _providers.c.uuid, sorted({provider.uuid for provider in new})),
            one_of(connection, _providers.c.name, sorted({provider.name for provider in new}))))
        .limit(1)).first()
    if taken is not None:
        for provider in new:
            _check_create_clashes(connection, provider.uuid, provider.name)
    uuids: set[str] = set()
    names: set[str] = set()
    for provider in new:
        clashes = ([f"uuid: {provider.uuid}"] if provider.uuid in uuids else []) + (
            [f"name: {provider.name}"] if provider.name in names else [])
        if clashes:
            raise errors.DuplicateName(
                f"Conflicting resource provider {', '.join(clashes)} already exists.")
        uuids.add(provider.uuid)
        names.add(provider.name)


def insert_providers(connection: Connection, new: Sequence[NewProvider]) -> dict[str, int]:
    """Insert providers (generation 0), parents before their children, in the
    caller's transaction; uuid -> id.

    Uuids must be canonical. A new provider's root is its parent's root, or
    itself. 400 for an empty name, a parent equal to itself or an unknown
    parent; 409 duplicate_name when the uuid or name is taken. The checks
    take a couple of queries whatever the number of providers (a new tree's
    children are inserted together).
    """
    parents = _checked_parents(connection, new)
    _check_clashes(connection, new)
    placed = {uuid: (row.id, row.root_provider_id or row.id) for uuid, row in parents.items()}
    ids: dict[str, int] = {}
    children: list[NewProvider] = []  # whose parents are placed: inserted together
    for provider in [*new, NewProvider("", "")]:  # the last one ends the last children
        if provider.parent_uuid not in placed:  # a root, or its parent among the children
            _insert(connection, children, placed, ids)
            children = []
        if provider.parent_uuid is not None:
            children.append(provider)
        elif provider.uuid:
            _insert(connection, [provider], placed, ids)
    return ids


def _insert(connection: Connection, new: Sequence[NewProvider],
            placed: dict[str, tuple[int, int]], ids: dict[str, int]) -> None:
    """Insert ``new`` (roots, or children of providers in ``placed``: uuid -> id, root
    id): one statement for one child, a root and its root id, else one multi-row
    insert and one query of their ids; ``placed`` and ``ids`` get them."""
    now = tables.utcnow()
    rows = [{"uuid": one.uuid, "name": one.name, "generation": 0, "created_at": now,
             "parent_provider_id": placed[one.parent_uuid][0] if one.parent_uuid else None,
             "root_provider_id": placed[one.parent_uuid][1] if one.parent_uuid else None}
            for one in new]
    try:
        if len(rows) == 1:
            found = {rows[0]["uuid"]: connection.execute(
                _providers.insert().values(**rows[0])).inserted_primary_key[0]}
        elif rows:
            insert_rows(connection, _providers, rows)
            found = {row.uuid: row.id for row in connection.execute(
                sa.select(_providers.c.uuid, _providers.c.id)
                .where(one_of(connection, _providers.c.uuid, [row["uuid"] for row in rows]))).all()}
    except sa.exc.IntegrityError as error:
        # A concurrent create took a uuid or name after our check;
        # the rerun reports it as a clash.
        raise RetryTransaction() from error
    for row in rows:
        new_id = ids[row["uuid"]] = found[row["uuid"]]
        if row["root_provider_id"] is None:
            # A root is its own root. Not an "update" of the record as far as
            # clients are concerned, so updated_at stays empty.
            connection.execute(_providers.update().where(_providers.c.id == new_id)
                               .values(root_provider_id=new_id, updated_at=None))
        placed[row["uuid"]] = (new_id, row["root_provider_id"] or new_id)
