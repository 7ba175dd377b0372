"""Consumers, and the projects, users and consumer types they belong to.

A consumer exists while it has allocations (placement-api-allocations.md
§1). Projects, users and consumer types are created on first use; two
requests creating the same one at once are resolved by rerunning the
transaction (the unique constraint rejects the second insert).
"""

from __future__ import annotations

import dataclasses

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.db.database import RetryTransaction

UNKNOWN_TYPE = "unknown"


@dataclasses.dataclass
class Consumer:
    id: int
    uuid: str
    project_id: int
    user_id: int
    generation: int
    consumer_type_id: int | None
    created: bool = False


def _ensure_named(connection: Connection, table: sa.Table, column: str, value: str) -> int:
    """Id of the row whose ``column`` is ``value``, inserting it if missing."""
    key = table.c[column]
    found = connection.execute(sa.select(table.c.id).where(key == value)).scalar()
    if found is not None:
        return found
    try:
        result = connection.execute(table.insert().values({column: value}))
    except sa.exc.IntegrityError as error:
        raise RetryTransaction() from error
    return result.inserted_primary_key[0]


def ensure_project(connection: Connection, external_id: str) -> int:
    return _ensure_named(connection, tables.projects, "external_id", external_id)


def ensure_user(connection: Connection, external_id: str) -> int:
    return _ensure_named(connection, tables.users, "external_id", external_id)


def ensure_consumer_type(connection: Connection, name: str) -> int:
    return _ensure_named(connection, tables.consumer_types, "name", name)


def find_consumer(connection: Connection, uuid: str) -> Consumer | None:
    row = connection.execute(
        sa.select(tables.consumers).where(tables.consumers.c.uuid == uuid)).first()
    if row is None:
        return None
    return Consumer(row.id, row.uuid, row.project_id, row.user_id, row.generation,
                    row.consumer_type_id)


def check_generation(consumer: Consumer | None, given: int | None) -> None:
    """409 when the client's view of the consumer is stale (MV 1.28+)."""
    if consumer is None:
        if given is not None:
            raise errors.ConcurrentUpdate(
                f"consumer generation conflict - expected null but got {given}")
        return
    if given != consumer.generation:
        raise errors.ConcurrentUpdate(
            f"consumer generation conflict - expected {consumer.generation} but got {given}")


def create_consumer(connection: Connection, uuid: str, project_id: int, user_id: int,
                    consumer_type_id: int | None) -> Consumer:
    """Insert a generation-0 consumer; a concurrent creator makes us rerun."""
    try:
        result = connection.execute(tables.consumers.insert().values(
            uuid=uuid, project_id=project_id, user_id=user_id, generation=0,
            consumer_type_id=consumer_type_id))
    except sa.exc.IntegrityError as error:
        raise RetryTransaction() from error
    return Consumer(result.inserted_primary_key[0], uuid, project_id, user_id, 0,
                    consumer_type_id, created=True)


def update_owner(connection: Connection, consumer: Consumer, project_id: int, user_id: int,
                 consumer_type_id: int | None, set_type: bool) -> None:
    """Record a new project/user (and type, from 1.38) without a generation bump."""
    values: dict = {}
    if consumer.project_id != project_id:
        values["project_id"] = project_id
    if consumer.user_id != user_id:
        values["user_id"] = user_id
    if set_type and consumer.consumer_type_id != consumer_type_id:
        values["consumer_type_id"] = consumer_type_id
    if values:
        connection.execute(tables.consumers.update().where(
            tables.consumers.c.id == consumer.id).values(**values))
        for key, value in values.items():
            setattr(consumer, key, value)


def bump_generation(connection: Connection, consumer: Consumer) -> None:
    """generation + 1, only if nobody else changed it since we read it."""
    result = connection.execute(
        tables.consumers.update()
        .where(tables.consumers.c.id == consumer.id,
               tables.consumers.c.generation == consumer.generation)
        .values(generation=consumer.generation + 1, updated_at=tables.utcnow()))
    if result.rowcount != 1:
        raise errors.ConcurrentUpdate(
            "consumer generation conflict - the consumer was changed by another "
            "request; refresh and try again")
    consumer.generation += 1


def delete_consumer(connection: Connection, consumer: Consumer) -> None:
    """Remove the record, only if nobody else changed it since we read it."""
    result = connection.execute(tables.consumers.delete().where(
        tables.consumers.c.id == consumer.id,
        tables.consumers.c.generation == consumer.generation))
    if result.rowcount != 1:
        raise errors.ConcurrentUpdate(
            "consumer generation conflict - the consumer was changed by another "
            "request; refresh and try again")
