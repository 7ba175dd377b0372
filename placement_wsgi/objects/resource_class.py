"""Resource classes: standard (os-resource-classes) and custom (``CUSTOM_*``).

Ids are part of the shared schema: a standard
class has the id of its index in ``os_resource_classes.STANDARDS`` (loaded
at start-up by :mod:`placement_wsgi.db.standard`); a custom class gets
``max(id) + 1``, at least 10000. "Standard" is therefore ``id < 10000``.

Two requests creating custom classes at once compute the same next id; the
loser's INSERT fails on the primary key (or, for the same name, on the
unique name) and its transaction is rerun from scratch, when it sees the
winner's row. That keeps ids dense without a sequence table the reference
schema does not have.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.db.arrays import one_of
from placement_wsgi.db.database import Database, RetryTransaction
from placement_wsgi.db.standard import FIRST_CUSTOM_RESOURCE_CLASS_ID

_classes = tables.resource_classes


@dataclasses.dataclass(frozen=True)
class ResourceClass:
    id: int
    name: str
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    @property
    def is_standard(self) -> bool:
        return self.id < FIRST_CUSTOM_RESOURCE_CLASS_ID

    @property
    def modified_at(self) -> datetime.datetime | None:
        return self.updated_at or self.created_at


def _from_row(row: sa.Row) -> ResourceClass:
    return ResourceClass(row.id, row.name, row.created_at, row.updated_at)


def no_such_class(name: str) -> str:
    """The message every route uses for an unknown class name."""
    return f"No such resource class {name}."


# -- name <-> id mapping for other objects --------------------------------------------


def ids_by_name(connection: Connection, names: Iterable[str]) -> dict[str, int]:
    """Map each known class name to its id; unknown names are left out.

    One set-based query, so callers resolve all the names of a request at once.
    Keys are the stored names, so a name matched only by a case-insensitive
    collation (MySQL) is still reported as unknown.
    """
    wanted = set(names)
    if not wanted:
        return {}
    rows = connection.execute(
        sa.select(_classes.c.name, _classes.c.id)
        .where(one_of(connection, _classes.c.name, sorted(wanted)))).all()
    return {row.name: row.id for row in rows if row.name in wanted}


def names_by_id(connection: Connection, ids: Iterable[int]) -> dict[int, str]:
    """Map each known class id to its name (the reverse of :func:`ids_by_name`)."""
    wanted = set(ids)
    if not wanted:
        return {}
    rows = connection.execute(
        sa.select(_classes.c.id, _classes.c.name)
        .where(one_of(connection, _classes.c.id, sorted(wanted)))).all()
    return {row.id: row.name for row in rows}


def require_classes(
    connection: Connection,
    names: Iterable[str],
    prefix: str = "",
    error: type[errors.PlacementError] = errors.BadRequest,
) -> dict[str, int]:
    """Like :func:`ids_by_name`, but every name must exist.

    The first unknown name (in the order given) raises ``error`` with
    ``<prefix>No such resource class <name>.``, the form each route's message
    ends with (e.g. prefix ``"Unable to allocate inventory for consumer c: "``).
    """
    ordered = list(dict.fromkeys(names))
    found = ids_by_name(connection, ordered)
    for name in ordered:
        if name not in found:
            raise error(prefix + no_such_class(name))
    return found


# -- the /resource_classes routes -----------------------------------------------------


def list_resource_classes(database: Database) -> list[ResourceClass]:
    """Every class: standard ones in library order, then custom ones in creation order."""
    return database.read(lambda connection: [
        _from_row(row)
        for row in connection.execute(sa.select(_classes).order_by(_classes.c.id)).all()])


def _find(connection: Connection, name: str) -> ResourceClass | None:
    """The class named exactly ``name``.

    MySQL's default collation compares case-insensitively; the Python check
    keeps ``vcpu`` unknown there too, as on PostgreSQL and SQLite.
    """
    rows = connection.execute(sa.select(_classes).where(_classes.c.name == name)).all()
    return next((_from_row(row) for row in rows if row.name == name), None)


def _get(connection: Connection, name: str) -> ResourceClass:
    found = _find(connection, name)
    if found is None:
        raise errors.NotFound(no_such_class(name))
    return found


def get_resource_class(database: Database, name: str) -> ResourceClass:
    """The class called ``name``; 404 ``No such resource class <name>.``"""
    return database.read(_get, name)


def _insert_custom(connection: Connection, name: str) -> ResourceClass:
    """Insert ``name`` with the next custom id; rerun the transaction on a clash."""
    highest = connection.execute(sa.select(sa.func.max(_classes.c.id))).scalar()
    next_id = max(FIRST_CUSTOM_RESOURCE_CLASS_ID, (highest or 0) + 1)
    try:
        # A savepoint would not help on a clash: the rerun must see the
        # winner's committed row, which needs a fresh transaction anyway.
        connection.execute(_classes.insert().values(
            id=next_id, name=name, created_at=tables.utcnow()))
    except sa.exc.IntegrityError as error:
        raise RetryTransaction() from error
    return _get(connection, name)


def create_resource_class(database: Database, name: str) -> ResourceClass:
    """POST semantics: 409 when ``name`` exists (also when created concurrently)."""

    def body(connection: Connection) -> ResourceClass:
        if _find(connection, name) is not None:
            raise errors.Conflict(f"Conflicting resource class already exists: {name}")
        return _insert_custom(connection, name)

    return database.write(body)


def insert_class_unless_present(connection: Connection, name: str,
                                ) -> tuple[ResourceClass, bool]:
    """Create the custom class ``name`` unless it exists, in the caller's
    transaction; return (class, created)."""
    existing = _find(connection, name)
    if existing is not None:
        return existing, False
    return _insert_custom(connection, name), True


def ensure_resource_class(database: Database, name: str) -> tuple[ResourceClass, bool]:
    """PUT (>=1.7) semantics: create ``name`` unless it exists; (class, created)."""
    return database.write(insert_class_unless_present, name)


def rename_resource_class(database: Database, name: str, new_name: str) -> ResourceClass:
    """PUT (1.2-1.6) semantics: 404, then standard (400), then name taken (409)."""

    def body(connection: Connection) -> ResourceClass:
        current = _get(connection, name)
        if current.is_standard:
            raise errors.BadRequest(f"Cannot update standard resource class {name}")
        taken = connection.execute(sa.select(_classes.c.id).where(
            _classes.c.name == new_name, _classes.c.id != current.id)).first()
        if taken is not None:
            raise errors.Conflict(f"Resource class already exists: {new_name}")
        try:
            connection.execute(_classes.update().where(_classes.c.id == current.id)
                               .values(name=new_name, updated_at=tables.utcnow()))
        except sa.exc.IntegrityError as error:  # the new name was taken concurrently
            raise RetryTransaction() from error
        return _get(connection, new_name)

    return database.write(body)


def delete_resource_class(database: Database, name: str) -> None:
    """Delete a custom class that no inventory uses.

    The DELETE itself re-checks "not in use", so an inventory committed
    between the check and the delete is not orphaned.
    """
    prefix = "Error in delete resource class: "

    def body(connection: Connection) -> None:
        current = _get(connection, name)
        if current.is_standard:
            raise errors.BadRequest(f"{prefix}Cannot delete standard resource class {name}.")
        in_use = sa.exists().where(tables.inventories.c.resource_class_id == current.id)
        deleted = connection.execute(
            _classes.delete().where(_classes.c.id == current.id, ~in_use)).rowcount
        if deleted != 1:
            if _find(connection, name) is None:
                raise errors.NotFound(no_such_class(name))
            raise errors.Conflict(
                f"{prefix}Cannot delete resource class {name}. Class is in use in inventory.")

    database.write(body)
