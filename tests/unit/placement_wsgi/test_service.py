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
    assert service.describe_url("not a url") == "not a url"
    assert service.describe_url("postgresql://u:secret@h:x:y/db") == "postgresql://u:***@h:x:y/db"


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
    with pytest.raises(service.StartupError, match="unsupported database 'nosuchdb'") as raised:
        service.open_database(make_conf("nosuchdb://u:pw@host/db"))
    assert raised.value.exit_code == service.EXIT_CONFIGURATION


def test_wait_for_database_gives_up_after_max_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(service.time, "sleep", slept.append)
    conf = make_conf("postgresql+psycopg://u:secret@127.0.0.1:1/placement")
    with pytest.raises(service.StartupError, match="127.0.0.1:1/placement: cannot connect") \
            as raised:
        service.wait_for_database(conf, attempts=3, interval=0.5)
    assert slept == [0.5, 0.5]
    assert raised.value.exit_code == service.EXIT_FAILED


def test_wait_for_database_does_not_wait_for_a_missing_directory(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    slept: list[float] = []
    monkeypatch.setattr(service.time, "sleep", slept.append)
    conf = make_conf(f"sqlite:///{tmp_path / 'no' / 'such' / 'dir.sqlite'}")
    with pytest.raises(service.StartupError, match="the directory .* does not exist") \
            as raised:
        service.wait_for_database(conf, attempts=10, interval=5)
    assert slept == []
    assert raised.value.exit_code == service.EXIT_CONFIGURATION
