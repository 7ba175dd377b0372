"""placement_wsgi.db.preflight: every wrong database found, named and fixed in one line,
nothing created; on every enabled engine."""

from __future__ import annotations

import pathlib

import pytest

from placement_wsgi.db import migration, preflight
from placement_wsgi.db.preflight import Access, Problem, Schema
from tests.fixtures.bad_databases import SECRET, BadDatabase, bad_database  # noqa: F401
from tests.fixtures.empty_databases import empty_db_url, upgrade_to  # noqa: F401 (fixture)


def test_each_wrong_database_is_one_finding_and_nothing_is_created(
        bad_database: BadDatabase) -> None:  # noqa: F811
    finding = preflight.check(bad_database.url, schema=Schema.HEAD)
    assert finding is not None and finding.problem is bad_database.problem, finding
    line = str(finding)
    assert "\n" not in line and SECRET not in line
    assert line.startswith(f"database {preflight.masked_url(bad_database.url)}: ")
    assert finding.cause and finding.fix
    assert bad_database.created() == ""


def test_a_migrated_database_is_usable(db_url: str) -> None:
    assert preflight.check(db_url, schema=Schema.HEAD) is None
    assert preflight.check(db_url, access=Access.CREATE, schema=Schema.UPGRADABLE) is None


def test_an_empty_database_may_be_synced_but_not_served(empty_db_url: str) -> None:  # noqa: F811
    if empty_db_url.startswith("sqlite"):
        pathlib.Path(empty_db_url[len("sqlite:///"):]).touch()
    assert preflight.check(empty_db_url, access=Access.CREATE,
                           schema=Schema.UPGRADABLE) is None
    assert preflight.check(empty_db_url, schema=Schema.ANY) is None
    finding = preflight.check(empty_db_url, schema=Schema.HEAD)
    assert finding is not None and finding.problem is Problem.NO_SCHEMA
    assert "run placement-manage db sync" in finding.fix


def test_known_schema_means_any_revision_this_code_knows(
        empty_db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    if empty_db_url.startswith("sqlite"):
        pathlib.Path(empty_db_url[len("sqlite:///"):]).touch()
    assert preflight.check(empty_db_url, schema=Schema.KNOWN).problem is Problem.NO_SCHEMA
    upgrade_to(empty_db_url, "b4ed3a175331")
    assert preflight.check(empty_db_url, schema=Schema.KNOWN) is None
    assert preflight.check(empty_db_url, schema=Schema.HEAD).problem is Problem.OTHER_REVISION
    monkeypatch.setattr(migration, "is_known_revision", lambda revision: False)
    assert preflight.check(empty_db_url, schema=Schema.KNOWN).problem is Problem.OTHER_REVISION


def test_only_creating_access_accepts_a_missing_sqlite_file(tmp_path: pathlib.Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    assert preflight.check(url, access=Access.CREATE, schema=Schema.UPGRADABLE) is None
    assert preflight.check(url).problem is Problem.NO_FILE
    assert list(tmp_path.iterdir()) == []


def test_a_revision_this_code_does_not_know_is_refused(
        db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # As if a newer Placement had written the schema: this code's head is another one.
    monkeypatch.setattr(migration, "head_revision", lambda: "000000000000")
    monkeypatch.setattr(migration, "is_known_revision", lambda revision: False)
    finding = preflight.check(db_url, access=Access.CREATE, schema=Schema.UPGRADABLE)
    assert finding is not None and finding.problem is Problem.OTHER_REVISION
    assert "unknown to this version" in finding.cause


def test_only_an_unreachable_server_and_a_full_disk_are_transient() -> None:
    assert [problem for problem in Problem if problem.transient] == [Problem.UNREACHABLE,
                                                                     Problem.DISK_FULL]


def test_an_unset_url_says_where_to_set_it() -> None:
    finding = preflight.check_url("")
    assert finding.problem is Problem.NOT_SET
    assert "OS_PLACEMENT_DATABASE__CONNECTION" in finding.fix
    other = preflight.check_url(None, setting="--nova-database")
    assert "--nova-database is not set" in other.cause
    assert "OS_PLACEMENT" not in other.fix


def test_a_server_url_without_a_database_name_is_refused_without_connecting() -> None:
    for url in ("mysql+pymysql://nova:pw@127.0.0.1:1/", "postgresql+psycopg://u@127.0.0.1:1"):
        finding = preflight.check(url, setting="--nova-database")
        assert finding.problem is Problem.BAD_URL and not finding.problem.transient
        assert finding.cause == "the URL names no database"
        assert "--nova-database" in finding.fix and "pw" not in str(finding)


def test_masked_url_hides_the_password_even_of_a_url_that_does_not_parse() -> None:
    assert preflight.masked_url("postgresql+psycopg://u:pw@h/db") == (
        "postgresql+psycopg://u:***@h/db")
    assert preflight.masked_url("postgresql://u:pw@h:port/db") == "postgresql://u:***@h:port/db"


def test_require_raises_the_finding(tmp_path: pathlib.Path) -> None:
    with pytest.raises(preflight.DatabaseCheckFailed) as raised:
        preflight.require(f"sqlite:///{tmp_path / 'absent.sqlite'}")
    assert raised.value.finding.problem is Problem.NO_FILE
    assert str(raised.value) == str(raised.value.finding)


def test_a_locked_sqlite_file_is_waited_for_not_misnamed(tmp_path: pathlib.Path) -> None:
    import sqlite3

    path = tmp_path / "locked.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        finding = preflight.check(f"sqlite:///{path}?timeout=0", schema=Schema.ANY)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert finding is not None and finding.problem is Problem.UNREACHABLE, finding
    assert "locked" in finding.cause
