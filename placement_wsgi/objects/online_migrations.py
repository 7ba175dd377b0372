"""Online data migrations: rows an older Placement left incomplete, completed in batches.

Two kinds of rows written by releases before Stein stop ``db sync`` (the
revisions ``611cd6dffd7b`` and ``b5c396305c25`` refuse to run over them)
and are what ``placement-status upgrade check`` reports:

* resource providers with no ``root_provider_id`` (written before the
  column existed): :func:`set_root_provider_ids` makes each its own root,
  as the reference Placement does;
* allocations whose consumer has no ``consumers`` row (written below
  microversion 1.8): :func:`create_incomplete_consumers` creates the row,
  owned by ``[placement] incomplete_consumer_project_id`` / ``_user_id``.

Each migration takes a write connection and a batch size and returns
``(found, done)``: how many candidate rows it found (at most the batch
size) and how many it completed. Both are idempotent and touch only
candidate rows, so they can run while the service runs, and any number of
times. :func:`run` is the loop of ``placement-manage db
online_data_migrations`` with the reference command's batching rules; the
counters are also what the upgrade checks read. Only the columns the
oldest known schema (``b4ed3a175331``) already has are used, so all of this
works at any revision this code knows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi.db import tables
from placement_wsgi.db.database import Database, RetryTransaction
from placement_wsgi.objects import consumer as consumer_obj

#: Batch size when no ``--max-count`` is given (the reference command's).
DEFAULT_BATCH = 50


class Outcome(NamedTuple):
    """One migration's result: candidate rows ``found``, rows ``done``."""

    found: int
    done: int


@dataclasses.dataclass(frozen=True)
class IncompleteOwner:
    """The external project and user ids recorded for a consumer nobody named."""

    project: str
    user: str


def _missing_roots() -> sa.Select:
    providers = tables.resource_providers
    return sa.select(providers.c.id).where(providers.c.root_provider_id.is_(None))


def _missing_consumers() -> sa.Select:
    allocations, consumers = tables.allocations, tables.consumers
    return (sa.select(allocations.c.consumer_id)
            .select_from(allocations.outerjoin(
                consumers, allocations.c.consumer_id == consumers.c.uuid))
            .where(consumers.c.id.is_(None))
            .group_by(allocations.c.consumer_id))


def count_missing_root_ids(connection: Connection) -> int:
    """Resource providers with no root provider id."""
    return connection.execute(
        sa.select(sa.func.count()).select_from(_missing_roots().subquery())).scalar_one()


def count_missing_consumers(connection: Connection) -> int:
    """Distinct consumer ids of allocations that have no ``consumers`` row."""
    return connection.execute(
        sa.select(sa.func.count()).select_from(_missing_consumers().subquery())).scalar_one()


def _first(connection: Connection, candidates: sa.Select, batch: int) -> list:
    """The first ``batch`` candidate keys, in key order (one query)."""
    key = candidates.selected_columns[0]
    return list(connection.execute(candidates.order_by(key).limit(batch)).scalars())


def set_root_provider_ids(connection: Connection, batch: int,
                          _owner: IncompleteOwner) -> Outcome:
    """Make up to ``batch`` providers without a root id their own root."""
    ids = _first(connection, _missing_roots(), batch)
    if not ids:
        return Outcome(0, 0)
    providers = tables.resource_providers
    done = connection.execute(
        providers.update().where(providers.c.id.in_(ids), providers.c.root_provider_id.is_(None))
        .values(root_provider_id=providers.c.id)).rowcount
    return Outcome(len(ids), done)


def create_incomplete_consumers(connection: Connection, batch: int,
                                owner: IncompleteOwner) -> Outcome:
    """Create the missing ``consumers`` rows of up to ``batch`` allocation consumers."""
    uuids = _first(connection, _missing_consumers(), batch)
    if not uuids:
        return Outcome(0, 0)
    project_id = consumer_obj.ensure_projects(connection, [owner.project])[owner.project]
    user_id = consumer_obj.ensure_users(connection, [owner.user])[owner.user]
    try:
        connection.execute(tables.consumers.insert(), [
            {"uuid": uuid, "project_id": project_id, "user_id": user_id, "generation": 0}
            for uuid in uuids])
    except sa.exc.IntegrityError as error:  # the API created one meanwhile: read again
        raise RetryTransaction() from error
    return Outcome(len(uuids), len(uuids))


Migration = Callable[[Connection, int, IncompleteOwner], Outcome]

#: Every online migration, in the order they run; the names are the table's.
MIGRATIONS: tuple[Migration, ...] = (set_root_provider_ids, create_incomplete_consumers)


@dataclasses.dataclass
class RunResult:
    """What :func:`run` did: per migration name its summed ``Outcome``, the
    rows completed in the last batch, and whether any migration failed."""

    totals: dict[str, Outcome]
    last_batch_done: int = 0
    failed: bool = False


#: Called after each migration of each batch: (name, outcome, error or None).
Observer = Callable[[str, Outcome, Exception | None], None]


def _one_batch(database: Database, max_count: int, owner: IncompleteOwner,
               observe: Observer) -> tuple[dict[str, Outcome], int, bool]:
    """Each migration once, in its own transaction, sharing ``max_count`` rows."""
    outcomes: dict[str, Outcome] = {}
    ran, failed = 0, False
    for migration in MIGRATIONS:
        error: Exception | None = None
        try:
            outcome = database.write(migration, max_count - ran, owner)
        except Exception as caught:  # reported; the other migrations still run
            error, outcome, failed = caught, Outcome(0, 0), True
        outcomes[migration.__name__] = outcome
        observe(migration.__name__, outcome, error)
        ran += outcome.done
        if ran >= max_count:
            break
    return outcomes, ran, failed


def run(database: Database, owner: IncompleteOwner, max_count: int | None,
        observe: Observer) -> RunResult:
    """Run the migrations: with ``max_count``, one batch of at most that many
    rows over all migrations; without, batches of :data:`DEFAULT_BATCH` until a
    batch completes nothing. A failing migration is reported to ``observe``
    and counted as ``(0, 0)``; the others go on."""
    result = RunResult(totals={})
    batch = DEFAULT_BATCH if max_count is None else max_count
    while True:
        outcomes, ran, failed = _one_batch(database, batch, owner, observe)
        for name, outcome in outcomes.items():
            found, done = result.totals.get(name, Outcome(0, 0))
            result.totals[name] = Outcome(found + outcome.found, done + outcome.done)
        result.last_batch_done, result.failed = ran, failed
        if max_count is not None or ran == 0:
            return result
