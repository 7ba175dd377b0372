"""Consumers, and the projects, users and consumer types they belong to.

A consumer exists while it has allocations. Projects, users and consumer
types are created on first use; two requests creating the same one at once
are resolved by rerunning the transaction (the unique constraint rejects
the second insert).
"""

from __future__ import annotations

import dataclasses

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.db.arrays import one_of
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


def _ensure_names(connection: Connection, table: sa.Table, column: str,
                  values: list[str]) -> dict[str, int]:
    """Ids of the rows whose ``column`` is in ``values``, inserting missing ones.

    One SELECT, plus one INSERT when something is new.
    """
    key = table.c[column]
    wanted = sorted(set(values))
    if not wanted:
        return {}
    found = {row[0]: row[1] for row in connection.execute(
        sa.select(key, table.c.id).where(one_of(connection, key, wanted))).all()}
    missing = [value for value in wanted if value not in found]
    if missing:
        try:
            connection.execute(table.insert(), [{column: value} for value in missing])
        except sa.exc.IntegrityError as error:  # a concurrent request created one
            raise RetryTransaction() from error
        found.update({row[0]: row[1] for row in connection.execute(
            sa.select(key, table.c.id).where(one_of(connection, key, missing))).all()})
    return found


def ensure_projects(connection: Connection, external_ids: list[str]) -> dict[str, int]:
    return _ensure_names(connection, tables.projects, "external_id", external_ids)


def ensure_users(connection: Connection, external_ids: list[str]) -> dict[str, int]:
    return _ensure_names(connection, tables.users, "external_id", external_ids)


def ensure_consumer_types(connection: Connection, names: list[str]) -> dict[str, int]:
    return _ensure_names(connection, tables.consumer_types, "name", names)


def find_consumers(connection: Connection, uuids: list[str]) -> dict[str, Consumer]:
    """The existing consumers among ``uuids``, in one query, locked for this write.

    The row locks (id order, where the engine has them; SQLite's write
    transaction is exclusive anyway) make two writers of one consumer take
    turns, so the second sees the first's generation and gets its 409.
    """
    if not uuids:
        return {}
    query = (sa.select(tables.consumers)
             .where(one_of(connection, tables.consumers.c.uuid, sorted(set(uuids))))
             .order_by(tables.consumers.c.id)
             .with_for_update())
    return {row.uuid: Consumer(row.id, row.uuid, row.project_id, row.user_id,
                               row.generation, row.consumer_type_id)
            for row in connection.execute(query).all()}


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


def bump_generations(connection: Connection, consumers: list[Consumer]) -> None:
    """generation + 1 for each of ``consumers`` (their rows are locked or new)."""
    if not consumers:
        return
    result = connection.execute(
        tables.consumers.update()
        .where(one_of(connection, tables.consumers.c.id,
                      [consumer.id for consumer in consumers]))
        .values(generation=tables.consumers.c.generation + 1, updated_at=tables.utcnow()))
    if result.rowcount != len(consumers):
        raise errors.ConcurrentUpdate(
            "consumer generation conflict - a consumer was changed by another "
            "request; refresh and try again")
    for consumer in consumers:
        consumer.generation += 1


def delete_consumers(connection: Connection, consumers: list[Consumer]) -> None:
    """Remove the records of ``consumers`` (their rows are locked)."""
    if consumers:
        connection.execute(tables.consumers.delete().where(
            one_of(connection, tables.consumers.c.id, [consumer.id for consumer in consumers])))
