"""placement-manage db online_data_migrations and db stamp: rows, exit statuses, mistakes."""

from __future__ import annotations

import os
import pathlib
import signal
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from placement_wsgi.cmd import manage
from placement_wsgi.db import migration
from placement_wsgi.objects import online_migrations
from tests.fixtures.bad_databases import (  # noqa: F401 (fixture)
    BadDatabase,
    assert_one_error_line,
    bad_database,
)
from tests.fixtures.config import clean_environment  # noqa: F401 (autouse fixture)
from tests.fixtures.empty_databases import (
    empty_db_url,  # noqa: F401 (fixture)
    upgrade_to,
)
from tests.fixtures.pre_stein_rows import Incomplete, incomplete_counts, leave_pre_stein_rows

HEAD = migration.head_revision()
FIRST = "b4ed3a175331"


@pytest.fixture
def restored_revision(db_url: str) -> Iterator[str]:
    """``db_url``, its recorded revision put back to head afterwards (a server's
    throwaway database is reused by the next test)."""
    yield db_url
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("DELETE FROM alembic_version")
            connection.execute(sa.text("INSERT INTO alembic_version (version_num) VALUES (:v)"),
                               {"v": HEAD})
    finally:
        engine.dispose()


def run(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, url: str,
        *argv: str) -> tuple[int, str, str]:
    monkeypatch.setenv("OS_PLACEMENT_DATABASE__CONNECTION", url)
    status = manage.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def table_rows(out: str) -> dict[str, tuple[int, int]]:
    """The migrations table: name -> (total found, completed)."""
    rows = [line.strip("|").split("|") for line in out.splitlines()
            if line.startswith("|") and "Migration" not in line]
    return {name.strip(): (int(found), int(done)) for name, found, done in rows}


def migrate(capsys, monkeypatch, url, *extra: str) -> tuple[int, str, str]:
    return run(capsys, monkeypatch, url, "db", "online_data_migrations", *extra)


def test_unlimited_run_completes_everything_then_finds_nothing(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, db_url: str) -> None:
    leave_pre_stein_rows(db_url, rootless=3, consumerless=2)
    status, out, err = migrate(capsys, monkeypatch, db_url)
    assert (status, err) == (0, "")
    assert out.startswith(f"Running batches of {online_migrations.DEFAULT_BATCH} until complete\n")
    assert "3 rows matched query set_root_provider_ids, 3 migrated" in out
    assert "2 rows matched query create_incomplete_consumers, 2 migrated" in out
    assert table_rows(out) == {"set_root_provider_ids": (3, 3),
                               "create_incomplete_consumers": (2, 2)}
    assert [[cell.strip() for cell in line.strip("|").split("|")]
            for line in out.splitlines() if "Migration" in line] == [
        ["Migration", "Total Found", "Completed"]]
    assert incomplete_counts(db_url) == Incomplete(0, 0)
    status, out, _ = migrate(capsys, monkeypatch, db_url)
    assert status == 0
    assert table_rows(out) == {"set_root_provider_ids": (0, 0),
                               "create_incomplete_consumers": (0, 0)}


def test_max_count_batches_exit_1_until_nothing_is_left(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, db_url: str) -> None:
    leave_pre_stein_rows(db_url, rootless=2, consumerless=3)
    statuses, tables = [], []
    for _ in range(4):
        status, out, err = migrate(capsys, monkeypatch, db_url, "--max-count", "2")
        assert err == "" and "Running batches" not in out
        statuses.append(status)
        tables.append(table_rows(out))
    assert statuses == [1, 1, 1, 0]
    assert tables == [
        {"set_root_provider_ids": (2, 2)},
        {"set_root_provider_ids": (0, 0), "create_incomplete_consumers": (2, 2)},
        {"set_root_provider_ids": (0, 0), "create_incomplete_consumers": (1, 1)},
        {"set_root_provider_ids": (0, 0), "create_incomplete_consumers": (0, 0)}]
    assert incomplete_counts(db_url) == Incomplete(0, 0)


@pytest.mark.parametrize("value", ["0", "-3", "ten", "1.5", ""])
def test_a_bad_max_count_is_127_before_the_database_is_touched(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path,
        value: str) -> None:
    url = f"sqlite:///{tmp_path / 'never.sqlite'}"
    status, out, err = migrate(capsys, monkeypatch, url, "--max-count", value)
    assert (status, out) == (127, "")
    assert "--max-count must be a positive integer" in assert_one_error_line(
        err, "placement-manage")
    assert not os.path.exists(tmp_path / "never.sqlite")


def test_a_failing_migration_is_exit_2_unless_a_limited_batch_moved(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, db_url: str) -> None:
    leave_pre_stein_rows(db_url, rootless=0, consumerless=2)

    def set_root_provider_ids(*_args: object) -> online_migrations.Outcome:
        raise RuntimeError("boom")

    monkeypatch.setattr(online_migrations, "MIGRATIONS",
                        (set_root_provider_ids, online_migrations.create_incomplete_consumers))
    status, out, err = migrate(capsys, monkeypatch, db_url, "--max-count", "1")
    assert status == 1  # work was done: run again
    assert err == "placement-manage: error: set_root_provider_ids failed: boom\n"
    status, out, err = migrate(capsys, monkeypatch, db_url)
    assert status == 2
    assert table_rows(out)["create_incomplete_consumers"] == (1, 1)
    assert "Some migrations failed" in out
    assert incomplete_counts(db_url) == Incomplete(0, 0)


def test_sync_refused_then_migrations_then_sync(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
        empty_db_url: str) -> None:  # noqa: F811
    upgrade_to(empty_db_url, FIRST)
    leave_pre_stein_rows(empty_db_url, rootless=1, consumerless=1)
    status, _, err = run(capsys, monkeypatch, empty_db_url, "db", "sync")
    assert status == 1
    assert "run placement-manage db online_data_migrations, then db sync again" in (
        assert_one_error_line(err, "placement-manage"))
    assert migrate(capsys, monkeypatch, empty_db_url)[0] == 0
    status, out, err = run(capsys, monkeypatch, empty_db_url, "db", "sync")
    assert (status, err) == (0, "")
    assert HEAD in out


def test_stamp_then_version_shows_the_revision(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
        restored_revision: str) -> None:
    db_url = restored_revision
    for text, expected in [(FIRST, FIRST), ("611c", "611cd6dffd7b"), ("head", HEAD)]:
        status, out, err = run(capsys, monkeypatch, db_url, "db", "stamp", text)
        assert (status, out, err) == (0, f"Database stamped at revision {expected}.\n", "")
        assert run(capsys, monkeypatch, db_url, "db", "version")[1] == f"{expected}\n"
    assert run(capsys, monkeypatch, db_url, "db", "stamp", "base")[1] == (
        "Database stamped at revision None.\n")
    assert run(capsys, monkeypatch, db_url, "db", "version")[1] == "None\n"


@pytest.mark.parametrize("text", ["zzz", "-1", "head+1", "abcdef", "61"])
def test_a_bad_revision_is_one_line_2_and_changes_nothing(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, db_url: str,
        text: str) -> None:
    status, out, err = run(capsys, monkeypatch, db_url, "db", "stamp", text)
    assert (status, out) == (2, "")
    line = assert_one_error_line(err, "placement-manage")
    assert repr(text) in line and HEAD in line
    assert run(capsys, monkeypatch, db_url, "db", "version")[1] == f"{HEAD}\n"


def test_stamp_over_an_unknown_revision_is_one_line_1(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
        restored_revision: str) -> None:
    db_url = restored_revision
    engine = sa.create_engine(db_url)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = 'fedcba987654'")
    engine.dispose()
    status, out, err = run(capsys, monkeypatch, db_url, "db", "stamp", "head")
    assert (status, out) == (1, "")
    assert "fedcba987654" in assert_one_error_line(err, "placement-manage")


@pytest.mark.parametrize("argv", [("db", "stamp", HEAD), ("db", "online_data_migrations")])
def test_every_wrong_database_is_one_line_and_creates_nothing(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
        bad_database: BadDatabase, argv: tuple[str, ...]) -> None:  # noqa: F811
    if bad_database.name == "other-revision" or (
            bad_database.name == "no-schema" and argv[1] == "stamp"):
        pytest.skip("not an error here: both run on older revisions, stamp on any schema")
    status, out, err = run(capsys, monkeypatch, bad_database.url, *argv)
    assert status == (1 if bad_database.transient else 2)
    assert "Running batches" in out or out == ""
    assert_one_error_line(err, "placement-manage", bad_database)
    assert bad_database.created() == ""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_between_batches_keeps_what_was_committed(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, db_url: str,
        signum: int) -> None:
    leave_pre_stein_rows(db_url, rootless=2, consumerless=2)

    def interrupted(*_args: object) -> online_migrations.Outcome:
        signal.raise_signal(signum)
        raise AssertionError("the signal did not stop the run")

    monkeypatch.setattr(online_migrations, "MIGRATIONS",
                        (online_migrations.set_root_provider_ids, interrupted))
    status, _, err = migrate(capsys, monkeypatch, db_url)
    assert status == 128 + signum
    assert err.startswith(f"placement-manage: interrupted by {signal.Signals(signum).name};")
    assert incomplete_counts(db_url) == Incomplete(0, 2)  # the first migration's batch stays
