"""nova-reshape-scheduler explain --placement-database on a wrong database: one line,
exit 2 (to fix) or 3 (unreachable), the JSON result's error with --format json,
nothing created; on every enabled engine."""

from __future__ import annotations

import json

import pytest

from nova_reshape.scheduler.cmd import main
from placement_wsgi.db.database import Database, DatabaseUnavailable
from placement_wsgi.db.preflight import masked_url
from placement_wsgi.errors import DATABASE_UNREACHABLE
from tests.fixtures.bad_databases import (  # noqa: F401 (fixture)
    BadDatabase,
    assert_one_error_line,
    bad_database,
)


@pytest.mark.parametrize("output_format", ["table", "json"])
def test_every_wrong_placement_database_is_one_line(
        capsys: pytest.CaptureFixture, bad_database: BadDatabase,  # noqa: F811
        output_format: str) -> None:
    status = main(["explain", "--placement-database", bad_database.url, "--flavor", "f",
                   "--vcpus", "1", "--ram", "512", "--disk", "1", "--format", output_format])
    captured = capsys.readouterr()
    assert status == (3 if bad_database.transient else 2)
    line = assert_one_error_line(captured.err, "nova-reshape-scheduler", bad_database)
    assert line.startswith("nova-reshape-scheduler: Placement database ")
    if output_format == "json":
        error = json.loads(captured.out)["error"]
        assert (error["stage"], error["type"]) == ("input", "PlacementError")
        assert error["message"] == line[len("nova-reshape-scheduler: "):]
    else:
        assert captured.out == ""
    assert bad_database.created() == ""


def test_a_database_lost_while_reading_gives_its_reason(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, db_url: str) -> None:
    def unavailable(*args, **kwargs):
        raise DatabaseUnavailable()

    monkeypatch.setattr(Database, "read", unavailable)
    status = main(["explain", "--placement-database", db_url, "--flavor", "f",
                   "--vcpus", "1", "--ram", "512", "--disk", "1"])
    line = assert_one_error_line(capsys.readouterr().err, "nova-reshape-scheduler")
    assert status == 3
    assert line.endswith(f"cannot read the Placement database {masked_url(db_url)}: "
                         f"{DATABASE_UNREACHABLE}")
