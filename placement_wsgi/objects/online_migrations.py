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
online_data_migrations`` with the reference command's batching rules (a
larger default batch); the counters are also what the upgrade checks read.
Both migrations are set-based: a batch is a few statements whatever its size. Only the columns the
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

#: Batch size when no ``--max-count`` is given (the reference command's is 50:
#: the same rows and totals, 20 times the commits; docs/performance.md).
DEFAULT_BATCH = 1000


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


#: Allocation rows read per step of the consumers' key walk.
WINDOW = 1000

#: A migration's ``resume`` when nothing is left past its position in this run.
END = "\uffff"


class Step(NamedTuple):
    """One call of a migration: its ``Outcome`` and where the next call of the
    same run resumes (None: from the start; :data:`END`: nothing left)."""

    outcome: Outcome
    resume: str | None


def set_root_provider_ids(connection: Connection, batch: int, _owner: IncompleteOwner,
                          _after: str | None) -> Step:
    """Make up to ``batch`` providers without a root id their own root (the
    candidates shrink as they are done, so every call starts from the start)."""
    providers = tables.resource_providers
    ids = list(connection.execute(
        _missing_roots().order_by(providers.c.id).limit(batch)).scalars())
    if not ids:
        return Step(Outcome(0, 0), END)
    done = connection.execute(
        providers.update().where(providers.c.id.in_(ids), providers.c.root_provider_id.is_(None))
        .values(root_provider_id=providers.c.id)).rowcount
    return Step(Outcome(len(ids), done), None)


def _consumers_without_record(connection: Connection, batch: int,
                              after: str | None) -> tuple[list[str], str]:
    """Up to ``batch`` allocation consumer ids past ``after`` (key order) with no
    ``consumers`` row, and the last id looked at (:data:`END` at the end). Walks
    the ``allocations.consumer_id`` index a window at a time, so a whole run
    reads each allocation once instead of anti-joining all of them per batch."""
    allocations, uuids = tables.allocations, tables.consumers.c.uuid
    missing: list[str] = []
    last = after
    while len(missing) < batch:
        # No DISTINCT: with it, a planner without statistics (a freshly imported
        # table) aggregates the whole table per window; without, it walks the index.
        keys = sa.select(allocations.c.consumer_id)
        if last is not None:
            keys = keys.where(allocations.c.consumer_id > last)
        window = list(dict.fromkeys(connection.execute(
            keys.order_by(allocations.c.consumer_id).limit(WINDOW)).scalars()))
        if not window:
            return missing, END
        recorded = set(connection.execute(sa.select(uuids).where(
            uuids >= window[0], uuids <= window[-1])).scalars())  # a range: an index walk
        for key in window:
            last = key
            if key not in recorded:
                missing.append(key)
                if len(missing) == batch:
                    break
    return missing, last


def _insert_consumers(connection: Connection, first: str, last: str, project_id: int,
                      user_id: int) -> int:
    """Create a record for every allocation consumer from ``first`` to ``last``
    (key order) that has none: one INSERT ... SELECT on the server (an
    executemany is one statement per row on psycopg, a multi-row VALUES is
    slow to compile). Returns how many were created."""
    allocations, consumers = tables.allocations, tables.consumers
    recorded = sa.select(consumers.c.id).where(consumers.c.uuid == allocations.c.consumer_id)
    rows = (sa.select(allocations.c.consumer_id, sa.literal(project_id), sa.literal(user_id),
                      sa.literal(0), sa.literal(tables.utcnow(), sa.DateTime()))
            .where(allocations.c.consumer_id >= first, allocations.c.consumer_id <= last,
                   ~recorded.exists())
            .group_by(allocations.c.consumer_id))
    return connection.execute(consumers.insert().from_select(
        ["uuid", "project_id", "user_id", "generation", "created_at"], rows,
        include_defaults=False), execution_options={"preserve_rowcount": True}).rowcount


def create_incomplete_consumers(connection: Connection, batch: int, owner: IncompleteOwner,
                                after: str | None) -> Step:
    """Create the missing ``consumers`` rows of up to ``batch`` allocation consumers."""
    uuids, resume = _consumers_without_record(connection, batch, after)
    if not uuids:
        return Step(Outcome(0, 0), resume)
    project_id = consumer_obj.ensure_projects(connection, [owner.project])[owner.project]
    user_id = consumer_obj.ensure_users(connection, [owner.user])[owner.user]
    try:
        done = _insert_consumers(connection, uuids[0], uuids[-1], project_id, user_id)
    except sa.exc.IntegrityError as error:  # the API created one meanwhile: read again
        raise RetryTransaction() from error
    return Step(Outcome(len(uuids), done), resume)


Migration = Callable[[Connection, int, IncompleteOwner, str | None], Step]

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
               observe: Observer, positions: dict[str, str | None]
               ) -> tuple[dict[str, Outcome], int, bool]:
    """Each migration once, in its own transaction, sharing ``max_count`` rows;
    ``positions`` (per name, where this run resumes) is moved on after each commit."""
    outcomes: dict[str, Outcome] = {}
    ran, failed = 0, False
    for migration in MIGRATIONS:
        name, error = migration.__name__, None
        after = positions.get(name)
        if after == END:
            outcome = Outcome(0, 0)
        else:
            try:
                outcome, positions[name] = database.write(
                    migration, max_count - ran, owner, after)
            except Exception as caught:  # reported; the other migrations still run
                error, outcome, failed = caught, Outcome(0, 0), True
        outcomes[name] = outcome
        observe(name, outcome, error)
        ran += outcome.done
        if ran >= max_count:
            break
    return outcomes, ran, failed


def run(database: Database, owner: IncompleteOwner, max_count: int | None,
        observe: Observer) -> RunResult:
    """Run the migrations: with ``max_count``, one batch of at most that many
    rows over all migrations; without, batches of :data:`DEFAULT_BATCH` until a
    batch completes nothing. Within one run a migration resumes where its
    previous batch stopped (rows made incomplete behind it meanwhile are the
    next run's). A failing migration is reported to ``observe`` and counted
    as ``(0, 0)``; the others go on."""
    result = RunResult(totals={})
    batch = DEFAULT_BATCH if max_count is None else max_count
    positions: dict[str, str | None] = {}
    while True:
        outcomes, ran, failed = _one_batch(database, batch, owner, observe, positions)
        for name, outcome in outcomes.items():
            found, done = result.totals.get(name, Outcome(0, 0))
            result.totals[name] = Outcome(found + outcome.found, done + outcome.done)
        result.last_batch_done, result.failed = ran, failed
        if max_count is not None or ran == 0:
            return result
