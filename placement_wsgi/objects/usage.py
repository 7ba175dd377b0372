"""Usages: sums of allocated amounts, per provider or per project/user.

Usage is computed from the allocations table on every request (there is
no stored counter). A project's usage follows allocations through their
consumer (``allocations.consumer_id`` is the consumer uuid) to the
consumer's project, user and optional consumer type; allocations without
a consumer record are not counted.

Grouping by consumer type selects exactly the columns it groups by (the
type *name*, the class name), so the queries are valid on PostgreSQL's
strict GROUP BY as well as on SQLite and MySQL.
"""

from __future__ import annotations

import dataclasses

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi.db import tables
from placement_wsgi.db.database import Database
from placement_wsgi.objects import consumer as consumer_obj
from placement_wsgi.objects.provider_lookup import get_provider

_allocations = tables.allocations
_inventories = tables.inventories
_classes = tables.resource_classes
_consumers = tables.consumers
_projects = tables.projects
_users = tables.users
_types = tables.consumer_types

#: Group name of consumers without a type (never stored as a type name).
UNKNOWN = consumer_obj.UNKNOWN_TYPE
#: ``consumer_type`` filter value putting every consumer in one group.
ALL = "all"


@dataclasses.dataclass(frozen=True)
class ProviderUsages:
    generation: int
    usages: dict[str, int]


@dataclasses.dataclass(frozen=True)
class UsageGroup:
    """The usage of one consumer type: amount per class and distinct consumers."""

    usages: dict[str, int]
    consumer_count: int


def provider_usages(connection: Connection, provider_id: int) -> dict[str, int]:
    """Per class the provider has inventory of: the sum allocated (0 if none)."""
    used = sa.func.coalesce(sa.func.sum(_allocations.c.used), 0)
    rows = connection.execute(
        sa.select(_classes.c.name, used.label("used"))
        .select_from(
            _inventories
            .join(_classes, _classes.c.id == _inventories.c.resource_class_id)
            .outerjoin(_allocations, sa.and_(
                _allocations.c.resource_provider_id == _inventories.c.resource_provider_id,
                _allocations.c.resource_class_id == _inventories.c.resource_class_id)))
        .where(_inventories.c.resource_provider_id == provider_id)
        .group_by(_classes.c.name))
    return {row.name: int(row.used) for row in rows}


def get_provider_usages(database: Database, provider_uuid: str,
                        not_found: str | None = None) -> ProviderUsages:
    """GET /resource_providers/{uuid}/usages: 404 for a missing provider."""

    def body(connection: Connection) -> ProviderUsages:
        provider = get_provider(connection, provider_uuid, not_found)
        return ProviderUsages(provider.generation, provider_usages(connection, provider.id))

    return database.read(body)


def _project_allocations(project_id: str, user_id: str | None) -> tuple[sa.FromClause, list]:
    """Allocations of the project's (and user's) consumers: FROM clause and conditions."""
    source = (
        _allocations
        .join(_consumers, _consumers.c.uuid == _allocations.c.consumer_id)
        .join(_projects, _projects.c.id == _consumers.c.project_id)
        .join(_classes, _classes.c.id == _allocations.c.resource_class_id))
    conditions = [_projects.c.external_id == project_id]
    if user_id is not None:
        source = source.join(_users, _users.c.id == _consumers.c.user_id)
        conditions.append(_users.c.external_id == user_id)
    return source, conditions


def total_usages(connection: Connection, project_id: str,
                 user_id: str | None = None) -> dict[str, int]:
    """Per class: the sum allocated to consumers of the project (and user)."""
    source, conditions = _project_allocations(project_id, user_id)
    rows = connection.execute(
        sa.select(_classes.c.name, sa.func.sum(_allocations.c.used).label("used"))
        .select_from(source).where(*conditions)
        .group_by(_classes.c.name))
    return {row.name: int(row.used) for row in rows}


def usages_by_consumer_type(
    connection: Connection,
    project_id: str,
    user_id: str | None = None,
    consumer_type: str | None = None,
) -> dict[str, UsageGroup]:
    """Usage of the project (and user) grouped by consumer type (1.38).

    ``consumer_type``: None = one group per type (untyped consumers in
    ``"unknown"``); ``"all"`` = one group ``"all"``; ``"unknown"`` = only
    untyped consumers; any other value = only consumers of that type, in a
    group of that name. ``consumer_count`` counts distinct consumers of the
    group over all its classes.
    """
    source, conditions = _project_allocations(project_id, user_id)
    source = source.outerjoin(_types, _types.c.id == _consumers.c.consumer_type_id)
    if consumer_type == UNKNOWN:
        conditions.append(_consumers.c.consumer_type_id.is_(None))
    elif consumer_type is not None and consumer_type != ALL:
        conditions.append(_types.c.name == consumer_type)
    # One group per type name unless every consumer goes in a single group.
    group_columns = [_types.c.name.label("consumer_type")] if consumer_type is None else []
    group_by = [_types.c.name] if consumer_type is None else []

    def group_name(row: sa.Row) -> str:
        if consumer_type is None:
            return row.consumer_type if row.consumer_type is not None else UNKNOWN
        return consumer_type

    used = sa.func.sum(_allocations.c.used).label("used")
    amounts = connection.execute(
        sa.select(*group_columns, _classes.c.name.label("resource_class"), used)
        .select_from(source).where(*conditions)
        .group_by(*group_by, _classes.c.name)).all()
    count = sa.func.count(sa.distinct(_allocations.c.consumer_id)).label("consumers")
    counts = connection.execute(
        sa.select(*group_columns, count).select_from(source).where(*conditions)
        .group_by(*group_by))
    groups: dict[str, UsageGroup] = {}
    for row in counts:
        if row.consumers:
            groups[group_name(row)] = UsageGroup({}, int(row.consumers))
    for row in amounts:
        groups[group_name(row)].usages[row.resource_class] = int(row.used)
    return groups


def get_total_usages(database: Database, project_id: str,
                     user_id: str | None = None) -> dict[str, int]:
    """GET /usages below 1.38."""
    return database.read(total_usages, project_id, user_id)


def get_usages_by_consumer_type(database: Database, project_id: str,
                                user_id: str | None = None,
                                consumer_type: str | None = None) -> dict[str, UsageGroup]:
    """GET /usages from 1.38 on."""
    return database.read(usages_by_consumer_type, project_id, user_id, consumer_type)
