"""Start-up helpers shared by the WSGI module and the console scripts."""

from __future__ import annotations

import pathlib

import pytest
import sqlalchemy as sa

from placement_wsgi import service
from tests.fixtures.config import (
    clean_environment,  # noqa: F401 (autouse fixture)
    make_conf,
)


def test_one_line_keeps_only_the_drivers_first_line() -> None:
    error = sa.exc.OperationalError(
        "SELECT 1", {}, Exception('connection failed: refused\n\tIs the server running?'))
    assert service.one_line(error) == "connection failed: refused"


def test_one_line_explains_a_missing_driver_and_a_bad_url() -> None:
    assert "database driver" in service.one_line(ModuleNotFoundError("No module named 'x'"))
    assert service.one_line(sa.exc.ArgumentError("Could not parse")).startswith(
        "invalid database connection URL")
    assert service.one_line(RuntimeError("a\n  b")) == "a b"


def test_describe_url_masks_the_password() -> None:
    shown = service.describe_url("postgresql+psycopg://user:secret@db.example/placement")
    assert "secret" not in shown
    assert shown == "postgresql+psycopg://user:***@db.example/placement"
    assert service.describe_url("not a url") == "<unparsable URL>"


def test_load_conf_reports_a_missing_file_as_startup_error(tmp_path: pathlib.Path) -> None:
    with pytest.raises(service.StartupError, match="configuration error: .*nope.conf"):
        service.load_conf(config_files=[str(tmp_path / "nope.conf")])


def test_load_conf_reports_a_bad_variable_as_startup_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OS_PLACEMENT_API__AUTH_STRATEGY", "magic")
    with pytest.raises(service.StartupError, match="OS_PLACEMENT_API__AUTH_STRATEGY"):
        service.load_conf(config_files=[])


def test_open_database_without_connection_says_what_to_set() -> None:
    conf = make_conf("")
    with pytest.raises(service.StartupError) as raised:
        service.open_database(conf)
    message = str(raised.value)
    assert "[placement_database] connection is not set" in message
    assert "OS_PLACEMENT_DATABASE__CONNECTION" in message
    assert "\n" not in message


def test_open_database_with_unknown_dialect() -> None:
    with pytest.raises(service.StartupError, match="unknown database dialect"):
        service.open_database(make_conf("nosuchdb://u:pw@host/db"))


def test_wait_for_database_gives_up_after_max_retries(tmp_path: pathlib.Path) -> None:
    conf = make_conf(f"sqlite:///{tmp_path / 'no' / 'such' / 'dir.sqlite'}")
    database = service.open_database(conf)
    try:
        with pytest.raises(service.StartupError, match="cannot connect to database"):
            service.wait_for_database(database, attempts=2, interval=0.01)
    finally:
        database.dispose()
