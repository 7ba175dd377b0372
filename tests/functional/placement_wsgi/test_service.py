"""Start-up of the service (placement_wsgi.service) on a wrong database or configuration:
one line, its exit status, at once, nothing created; on every enabled engine."""

from __future__ import annotations

import pathlib
import time

import pytest

from placement_wsgi import service
from tests.fixtures.bad_databases import (  # noqa: F401 (fixture)
    SECRET,
    BadDatabase,
    bad_database,
)
from tests.fixtures.config import make_conf


def test_the_service_refuses_every_wrong_database_in_one_line(
        bad_database: BadDatabase) -> None:  # noqa: F811
    conf = make_conf(bad_database.url, placement_database={"max_retries": 1,
                                                          "retry_interval": 30})
    started = time.monotonic()
    with pytest.raises(service.StartupError) as raised:
        service.build_application(conf)
    assert time.monotonic() - started < 15  # nothing waited for but one connection
    message = str(raised.value)
    assert "\n" not in message and SECRET not in message
    assert raised.value.exit_code == (service.EXIT_FAILED if bad_database.transient
                                      else service.EXIT_CONFIGURATION)
    assert bad_database.created() == ""


def test_sync_on_startup_creates_a_missing_sqlite_file(tmp_path: pathlib.Path) -> None:
    database = tmp_path / "new.sqlite"
    app = service.build_application(make_conf(f"sqlite:///{database}", placement_database={
        "sync_on_startup": True}))
    app.placement_app.database.dispose()
    assert database.exists()


def test_a_never_synced_database_is_refused_unless_sync_on_startup(
        tmp_path: pathlib.Path) -> None:
    database = tmp_path / "empty.sqlite"
    database.touch()
    with pytest.raises(service.StartupError, match="the database is empty; run "
                       "placement-manage db sync first") as raised:
        service.build_application(make_conf(f"sqlite:///{database}"))
    assert raised.value.exit_code == service.EXIT_CONFIGURATION
    app = service.build_application(make_conf(f"sqlite:///{database}", placement_database={
        "sync_on_startup": True}))
    app.placement_app.database.dispose()
