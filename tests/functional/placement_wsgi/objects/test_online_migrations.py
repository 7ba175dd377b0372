"""Online data migrations on every engine: pre-Stein rows completed, in batches, idempotently."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from placement_wsgi.db import migration, tables
from placement_wsgi.db.database import Database
from placement_wsgi.objects import online_migrations
from placement_wsgi.objects.online_migrations import IncompleteOwner, Outcome
from tests.fixtures.empty_databases import (
    empty_db_url,  # noqa: F401 (fixture)
    upgrade_to,
)
from tests.fixtures.pre_stein_rows import Incomplete, incomplete_counts, leave_pre_stein_rows

OWNER = IncompleteOwner("incomplete-project", "incomplete-user")
ROOTS = "set_root_provider_ids"
CONSUMERS = "create_incomplete_consumers"


def no_output(*_args: object) -> None:
    pass


def test_counters_see_what_the_damage_left(db_url: str, database: Database) -> None:
    leave_pre_stein_rows(db_url, rootless=3, consumerless=4)
    assert database.read(online_migrations.count_missing_root_ids) == 3
    # Each consumer has allocations on two providers: counted once.
    assert database.read(online_migrations.count_missing_consumers) == 4


def test_run_completes_every_row_and_a_second_run_finds_none(
        db_url: str, database: Database) -> None:
    damage = leave_pre_stein_rows(db_url, rootless=3, consumerless=4)
    result = online_migrations.run(database, OWNER, None, no_output)
    assert result.totals == {ROOTS: Outcome(3, 3), CONSUMERS: Outcome(4, 4)}
    assert (result.failed, result.last_batch_done) == (False, 0)
    assert incomplete_counts(db_url) == Incomplete(0, 0)
    with database.engine.connect() as connection:
        providers = tables.resource_providers
        roots = dict(connection.execute(sa.select(providers.c.uuid, providers.c.root_provider_id)
                                        .where(providers.c.uuid.in_(damage.rootless))).all())
        ids = dict(connection.execute(sa.select(providers.c.uuid, providers.c.id)
                                      .where(providers.c.uuid.in_(damage.rootless))).all())
        owners = connection.execute(
            sa.select(tables.consumers.c.uuid, tables.consumers.c.generation,
                      tables.projects.c.external_id, tables.users.c.external_id)
            .join(tables.projects, tables.projects.c.id == tables.consumers.c.project_id)
            .join(tables.users, tables.users.c.id == tables.consumers.c.user_id)).all()
    assert roots == ids  # each its own root
    by_uuid = {row[0]: row[1:] for row in owners}
    assert {uuid: by_uuid[uuid] for uuid in damage.consumerless} == {
        uuid: (0, OWNER.project, OWNER.user) for uuid in damage.consumerless}
    assert by_uuid[damage.healthy_consumer][1].startswith("healthy-")
    again = online_migrations.run(database, OWNER, None, no_output)
    assert again.totals == {ROOTS: Outcome(0, 0), CONSUMERS: Outcome(0, 0)}


def test_max_count_is_shared_by_the_migrations_in_order(db_url: str, database: Database) -> None:
    leave_pre_stein_rows(db_url, rootless=3, consumerless=4)
    seen: list[tuple[str, Outcome]] = []
    first = online_migrations.run(database, OWNER, 5,
                                  lambda name, outcome, _error: seen.append((name, outcome)))
    assert first.totals == {ROOTS: Outcome(3, 3), CONSUMERS: Outcome(2, 2)}
    assert seen == [(ROOTS, Outcome(3, 3)), (CONSUMERS, Outcome(2, 2))]
    assert (first.last_batch_done, incomplete_counts(db_url)) == (5, Incomplete(0, 2))
    # A batch used up by the first migration stops before the second.
    assert online_migrations.run(database, OWNER, 2, no_output).totals == {
        ROOTS: Outcome(0, 0), CONSUMERS: Outcome(2, 2)}
    assert online_migrations.run(database, OWNER, 2, no_output).last_batch_done == 0


def test_unlimited_run_goes_batch_after_batch(
        db_url: str, database: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(online_migrations, "DEFAULT_BATCH", 2)
    leave_pre_stein_rows(db_url, rootless=3, consumerless=3)
    batches: list[str] = []
    result = online_migrations.run(database, OWNER, None,
                                   lambda name, outcome, _e: batches.append(name))
    assert result.totals == {ROOTS: Outcome(3, 3), CONSUMERS: Outcome(3, 3)}
    assert incomplete_counts(db_url) == Incomplete(0, 0)
    assert len(batches) > 4  # several batches, not one statement


def test_a_failing_migration_is_reported_and_the_others_run(
        db_url: str, database: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    leave_pre_stein_rows(db_url, rootless=0, consumerless=2)

    def set_root_provider_ids(*_args: object) -> Outcome:
        raise sa.exc.OperationalError("UPDATE", {}, Exception("boom"))

    monkeypatch.setattr(online_migrations, "MIGRATIONS",
                        (set_root_provider_ids, online_migrations.create_incomplete_consumers))
    errors: list[str] = []
    result = online_migrations.run(
        database, OWNER, None,
        lambda name, _outcome, error: errors.append(name) if error else None)
    assert result.failed and errors == [ROOTS, ROOTS]  # in each of the two batches
    assert result.totals[CONSUMERS] == Outcome(2, 2)
    assert incomplete_counts(db_url).consumerless == 0


def test_the_migrations_unblock_db_sync_from_the_first_revision(
        empty_db_url: str) -> None:  # noqa: F811
    upgrade_to(empty_db_url, "b4ed3a175331")
    leave_pre_stein_rows(empty_db_url, rootless=2, consumerless=2)
    database = Database(empty_db_url)
    try:
        with pytest.raises(RuntimeError, match="root_provider_id"):
            migration.upgrade(database)
        result = online_migrations.run(database, OWNER, None, no_output)
        assert result.totals == {ROOTS: Outcome(2, 2), CONSUMERS: Outcome(2, 2)}
        assert migration.upgrade(database) == migration.head_revision()
        assert migration.current_revision(database) == migration.head_revision()
    finally:
        database.dispose()


def test_the_consumer_walk_resumes_across_windows_and_batches(
        db_url: str, database: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    # Windows smaller than a batch, recorded consumers among the missing ones.
    for _ in range(3):
        leave_pre_stein_rows(db_url, rootless=0, consumerless=3)
    monkeypatch.setattr(online_migrations, "WINDOW", 2)
    monkeypatch.setattr(online_migrations, "DEFAULT_BATCH", 4)
    seen: list[Outcome] = []
    result = online_migrations.run(
        database, OWNER, None,
        lambda name, outcome, _e: seen.append(outcome) if name == CONSUMERS else None)
    assert result.totals[CONSUMERS] == Outcome(9, 9)
    assert seen == [Outcome(4, 4), Outcome(4, 4), Outcome(1, 1), Outcome(0, 0)]
    assert incomplete_counts(db_url) == Incomplete(0, 0)
    step = database.read(online_migrations.create_incomplete_consumers, 4, OWNER, None)
    assert step == online_migrations.Step(Outcome(0, 0), online_migrations.END)
