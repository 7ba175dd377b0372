"""Resource providers: create, list with filters, rename/re-parent, delete.

Every function runs in one transaction of the
given Database and raises errors.* for the outcomes the API reports.

Trees. Every provider stores its parent's id and its root's id (a root
points at itself). Re-parenting moves a whole subtree, so the subtree's
root ids are rewritten together. To stay correct when two requests change
one tree at once, writers lock (SELECT ... FOR UPDATE) the rows they build
on: a new child locks its parent, a re-parent locks its whole tree and the
new parent, a delete locks the provider. Conflicting writers then queue
(or deadlock and are retried by the Database), and each re-reads what it
depends on after taking its locks. The inserts and their checks are
:mod:`placement_wsgi.objects.provider_insert`'s.

Listing is one SELECT whose WHERE clause holds every filter as a subquery,
plus one lookup per kind of name (aggregates need none, traits and
resource classes are resolved to ids first so that unknown names are 400s).
"""

from __future__ import annotations

import dataclasses
import uuid as uuid_module
from collections.abc import Callable, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.db.arrays import one_of
from placement_wsgi.db.database import Database, RetryTransaction
from placement_wsgi.db.rows import INVENTORY_CAPACITY
from placement_wsgi.objects import resource_class as resource_class_obj
from placement_wsgi.objects.provider_insert import NewProvider, insert_providers
from placement_wsgi.objects.provider_lookup import (
    ResourceProvider,
    get_provider,
    provider_from_row,
    provider_select,
)
from placement_wsgi.objects.trait import trait_ids_by_name
from placement_wsgi.query import AggregateFilter, TraitFilter
from placement_wsgi.uuids import canonical_uuid

_providers = tables.resource_providers

#: Marks "the request did not mention parent_provider_uuid" (None means null).
UNCHANGED = object()


def get_resource_provider(database: Database, uuid: str) -> ResourceProvider:
    """The provider ``uuid`` (exact string match); 404 when there is none."""
    return database.read(get_provider, uuid)


# -- create ------------------------------------------------------------------------


def _provider_ids(connection: Connection, uuid: str, lock: bool = True) -> sa.Row | None:
    """(id, parent_provider_id, root_provider_id) of ``uuid``; row locked unless told."""
    query = (sa.select(_providers.c.id, _providers.c.parent_provider_id,
                       _providers.c.root_provider_id)
             .where(_providers.c.uuid == uuid))
    return connection.execute(query.with_for_update() if lock else query).first()


def insert_provider(connection: Connection, name: str, uuid: str,
                    parent_uuid: str | None = None) -> int:
    """Insert the provider (generation 0) in the caller's transaction; its id.

    ``uuid`` must be canonical. See :func:`insert_providers`.
    """
    return insert_providers(connection, [NewProvider(name, uuid, parent_uuid)])[uuid]


def create_resource_provider(
    database: Database,
    name: str,
    uuid: str | None = None,
    parent_uuid: str | None = None,
) -> ResourceProvider:
    """Create a provider (generation 0) and return it (see :func:`insert_provider`).

    ``uuid`` (a lenient UUID) is normalised to canonical form; a random one
    is used when absent.
    """
    uuid = canonical_uuid(uuid) if uuid else str(uuid_module.uuid4())

    def body(connection: Connection) -> ResourceProvider:
        insert_provider(connection, name, uuid, parent_uuid)
        return get_provider(connection, uuid)

    return database.write(body)


# -- update ------------------------------------------------------------------------


def _lock_tree(connection: Connection, root_id: int) -> dict[int, int | None]:
    """Lock every provider of the tree ``root_id``; return {id: parent id}.

    The rows are read again after locking: a plain read is a new snapshot
    under READ COMMITTED, so children committed while we waited are seen.
    """
    connection.execute(sa.select(_providers.c.id)
                       .where(_providers.c.root_provider_id == root_id)
                       .with_for_update()).all()
    rows = connection.execute(
        sa.select(_providers.c.id, _providers.c.parent_provider_id)
        .where(_providers.c.root_provider_id == root_id)).all()
    return {row.id: row.parent_provider_id for row in rows}


def _subtree(parents: dict[int, int | None], top: int) -> set[int]:
    """``top`` and all its descendants, given {id: parent id} of its tree."""
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        if parent is not None:
            children.setdefault(parent, []).append(child)
    found = {top}
    pending = [top]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def _change_parent(
    connection: Connection,
    me: sa.Row,
    parent_uuid: str | None,
    allow_reparenting: bool,
    failed: Callable[[str, str], errors.BadRequest],
) -> None:
    """Apply the parent rules of a provider update; re-root the subtree on a change."""
    if parent_uuid is None:
        if me.parent_provider_id is None:
            return
        if not allow_reparenting:
            raise failed("update", "un-parenting a provider is not currently allowed.")
        new_parent_id = None
        new_root_id = me.id
    else:
        parent = _provider_ids(connection, parent_uuid)
        if parent is None:
            # "create" is what the reference service says here, on update too.
            raise failed("create", "parent provider UUID does not exist.")
        if parent.id == me.parent_provider_id:
            return
        if me.parent_provider_id is not None and not allow_reparenting:
            raise failed("update", "re-parenting a provider is not currently allowed.")
        new_parent_id = parent.id
        new_root_id = parent.root_provider_id or parent.id
    moving = _subtree(_lock_tree(connection, me.root_provider_id or me.id), me.id)
    if new_parent_id is not None and new_parent_id in moving:
        raise failed("update", "creating loop in the provider tree is not allowed.")
    connection.execute(_providers.update().where(_providers.c.id == me.id)
                       .values(parent_provider_id=new_parent_id))
    connection.execute(_providers.update().where(_providers.c.id.in_(sorted(moving)))
                       .values(root_provider_id=new_root_id))


def update_resource_provider(
    database: Database,
    uuid: str,
    name: str,
    parent_uuid: str | None | object = UNCHANGED,
    allow_reparenting: bool = False,
) -> ResourceProvider:
    """Rename and optionally re-parent ``uuid``; return it as saved.

    ``parent_uuid`` is UNCHANGED when the request does not mention the
    parent, else a uuid or None (un-parent). ``allow_reparenting`` (1.37)
    permits replacing or removing an existing parent. Checks, in order:
    404, parent rules (400), name taken by another provider (409). The
    generation is not changed.
    """

    def failed(action: str, reason: str) -> errors.BadRequest:
        return errors.BadRequest(
            f"Unable to save resource provider {uuid}: Object action {action} failed "
            f"because: {reason}")

    def body(connection: Connection) -> ResourceProvider:
        me = _provider_ids(connection, uuid)
        if me is None:
            raise errors.NotFound(f"No resource provider with uuid {uuid} found")
        if parent_uuid is not UNCHANGED:
            _change_parent(connection, me, parent_uuid, allow_reparenting, failed)
        taken = connection.execute(sa.select(_providers.c.id).where(
            _providers.c.name == name, _providers.c.id != me.id).limit(1)).first()
        if taken is not None:
            raise errors.DuplicateName(f"Conflicting resource provider {name} already exists.")
        try:
            connection.execute(_providers.update().where(_providers.c.id == me.id)
                               .values(name=name, updated_at=tables.utcnow()))
        except sa.exc.IntegrityError as error:  # the name was taken meanwhile
            raise RetryTransaction() from error
        return get_provider(connection, uuid)

    return database.write(body)


# -- delete ------------------------------------------------------------------------


def delete_provider(connection: Connection, uuid: str) -> None:
    """Delete a provider with no children and no allocations, in the caller's transaction.

    Removes its inventories, aggregate links and trait links with it (the
    aggregates themselves stay). 404, then 409 cannot_delete_parent, then
    409 resource_provider.inuse.
    """
    delete_providers(connection, [uuid])


def _deletable(connection: Connection, uuids: Sequence[str]) -> dict[int, int | None]:
    """id -> parent id of ``uuids``, in order, each deletable once those before it
    are deleted; else the error :func:`delete_provider` raises for the first that
    is not (rows locked: a concurrent child create or allocation write waits for
    us, and then fails, or commits first and is seen here)."""
    found = {row.uuid: (row.id, row.parent_provider_id) for row in connection.execute(
        sa.select(_providers.c.id, _providers.c.uuid, _providers.c.parent_provider_id)
        .where(one_of(connection, _providers.c.uuid, sorted(set(uuids)))).with_for_update()).all()}
    ids = [provider_id for provider_id, _ in found.values()]
    children: dict[int, set[int]] = {}
    for child, parent in connection.execute(
            sa.select(_providers.c.id, _providers.c.parent_provider_id)
            .where(one_of(connection, _providers.c.parent_provider_id, ids))).all():
        children.setdefault(parent, set()).add(child)
    allocations = tables.allocations
    allocated = set(connection.execute(
        sa.select(allocations.c.resource_provider_id).distinct()
        .where(one_of(connection, allocations.c.resource_provider_id, ids))).scalars())
    deleted: dict[int, int | None] = {}
    for uuid in uuids:
        provider_id, parent = found.get(uuid, (None, None))
        if provider_id is None or provider_id in deleted:
            raise errors.NotFound(f"No resource provider with uuid {uuid} found for delete")
        if children.get(provider_id, set()) - set(deleted):
            raise errors.Conflict(
                f"Unable to delete parent resource provider {uuid}: It has child resource "
                "providers.", code=errors.PROVIDER_CANNOT_DELETE_PARENT)
        if provider_id in allocated:
            raise errors.Conflict(
                f"Unable to delete resource provider {uuid}: Resource provider has "
                "allocations.", code=errors.PROVIDER_INUSE)
        deleted[provider_id] = parent
    return deleted


def _levels(parents: dict[int, int | None]) -> list[list[int]]:
    """The providers of ``parents`` (id -> parent id, children before their parents)
    in levels: no provider of a level has a child in the levels after it, so
    deleting level by level never leaves a row referring to a deleted one."""
    level: dict[int, int] = {}
    for provider_id, parent in parents.items():  # a child's level is known before its parent's
        level.setdefault(provider_id, 0)
        if parent in parents:
            level[parent] = max(level.get(parent, 0), level[provider_id] + 1)
    return [[provider_id for provider_id in parents if level[provider_id] == depth]
            for depth in range(max(level.values()) + 1)]


def delete_providers(connection: Connection, uuids: Sequence[str]) -> None:
    """:func:`delete_provider` for each of ``uuids`` in order (children before their
    parents), in the caller's transaction: the same refusal for the first
    provider refused, nothing deleted then; a few statements for all of them."""
    if not uuids:
        return
    parents = _deletable(connection, uuids)
    ids = list(parents)
    for table in (tables.inventories, tables.resource_provider_aggregates,
                  tables.resource_provider_traits):
        connection.execute(table.delete().where(
            one_of(connection, table.c.resource_provider_id, ids)))
    # InnoDB checks foreign keys row by row, so a root (whose
    # root_provider_id refers to itself) must let go of itself first...
    connection.execute(_providers.update()
                       .where(one_of(connection, _providers.c.id, ids),
                              _providers.c.root_provider_id == _providers.c.id)
                       .values(root_provider_id=None))
    # ... and children go before their parents: one statement per level.
    for level in _levels(parents):
        connection.execute(_providers.delete().where(one_of(connection, _providers.c.id, level)))


def delete_resource_provider(database: Database, uuid: str) -> None:
    """:func:`delete_provider` in its own transaction."""
    database.write(delete_provider, uuid)


# -- list --------------------------------------------------------------------------


@dataclasses.dataclass
class ProviderFilters:
    """The filters of ``GET /resource_providers``; None/empty means "not given"."""

    name: str | None = None
    uuid: str | None = None
    member_of: AggregateFilter | None = None
    resources: dict[str, int] | None = None
    in_tree: str | None = None
    required: TraitFilter | None = None


def _with_aggregates(uuids: frozenset[str] | set[str]) -> sa.Select:
    """Ids of providers directly associated with any of the aggregates ``uuids``."""
    links = tables.resource_provider_aggregates
    aggregates = tables.placement_aggregates
    return (sa.select(links.c.resource_provider_id)
            .join(aggregates, aggregates.c.id == links.c.aggregate_id)
            .where(aggregates.c.uuid.in_(sorted(uuids))))


def _with_traits(trait_ids: set[int]) -> sa.Select:
    """Ids of providers having any of the traits ``trait_ids``."""
    links = tables.resource_provider_traits
    return (sa.select(links.c.resource_provider_id)
            .where(links.c.trait_id.in_(sorted(trait_ids))))


def _with_capacity(class_id: int, amount: int) -> sa.Select:
    """Ids of providers whose own inventory of ``class_id`` can take ``amount`` more.

    ``used + amount <= (total - reserved) * allocation_ratio`` and the amount
    respects min_unit, max_unit and step_size. The capacity is
    ``rows.INVENTORY_CAPACITY`` (the ratio as the driver reads it), so that
    MariaDB's single-precision column gives the product the allocation check
    computes in Python.
    """
    inventories = tables.inventories
    allocations = tables.allocations
    usage = (sa.select(allocations.c.resource_provider_id,
                       sa.func.sum(allocations.c.used).label("used"))
             .where(allocations.c.resource_class_id == class_id)
             .group_by(allocations.c.resource_provider_id)
             .subquery("usage"))
    requested = sa.literal(amount, sa.Integer)
    return (
        sa.select(inventories.c.resource_provider_id)
        .select_from(inventories.outerjoin(
            usage, usage.c.resource_provider_id == inventories.c.resource_provider_id))
        .where(
            inventories.c.resource_class_id == class_id,
            sa.func.coalesce(usage.c.used, 0) + requested
            <= INVENTORY_CAPACITY,
            inventories.c.min_unit <= requested,
            inventories.c.max_unit >= requested,
            requested % inventories.c.step_size == 0,
        ))


def _trait_ids(connection: Connection, required: TraitFilter) -> dict[str, int]:
    """{name: id} of every trait ``required`` mentions; 400 naming unknown ones."""
    found = trait_ids_by_name(connection, required.names)
    missing = sorted(required.names - set(found))
    if missing:
        raise errors.BadRequest(
            'Invalid trait(s) in "required" parameter: '
            f"No such trait(s): {', '.join(missing)}.")
    return found


def list_resource_providers(database: Database, filters: ProviderFilters) -> list[ResourceProvider]:
    """Providers matching every given filter, ordered by id.

    Unknown trait or resource class names are 400s; an unknown ``in_tree``
    provider or unknown aggregates simply match nothing.
    """

    def body(connection: Connection) -> list[ResourceProvider]:
        query = provider_select()
        if filters.name:
            query = query.where(_providers.c.name == filters.name)
        if filters.uuid is not None:
            query = query.where(_providers.c.uuid == filters.uuid)
        if filters.in_tree is not None:
            tree = _provider_ids(connection, filters.in_tree, lock=False)
            if tree is None:
                return []
            query = query.where(
                _providers.c.root_provider_id == (tree.root_provider_id or tree.id))
        if filters.required:
            trait_ids = _trait_ids(connection, filters.required)
            for group in filters.required.any_of:
                query = query.where(_providers.c.id.in_(
                    _with_traits({trait_ids[name] for name in group})))
            if filters.required.forbidden:
                query = query.where(_providers.c.id.not_in(
                    _with_traits({trait_ids[name] for name in filters.required.forbidden})))
        if filters.resources:
            class_ids = resource_class_obj.require_classes(
                connection, filters.resources,
                "Invalid resource class in resources parameter: ")
            for name, amount in filters.resources.items():
                query = query.where(_providers.c.id.in_(
                    _with_capacity(class_ids[name], amount)))
        if filters.member_of:
            for group in filters.member_of.any_of:
                query = query.where(_providers.c.id.in_(_with_aggregates(group)))
            if filters.member_of.forbidden:
                query = query.where(_providers.c.id.not_in(
                    _with_aggregates(filters.member_of.forbidden)))
        rows = connection.execute(query.order_by(_providers.c.id)).all()
        return [provider_from_row(row) for row in rows]

    return database.read(body)
