"""placement-status upgrade check: the table, the exit codes, and operator mistakes."""

from __future__ import annotations

import json
import pathlib
import signal
import subprocess

import pytest
import sqlalchemy as sa

from placement_wsgi.cmd import status
from tests.fixtures.bad_databases import (  # noqa: F401 (fixture)
    BAD_CONFIG_FILES,
    BadDatabase,
    assert_one_error_line,
    bad_database,
)
from tests.fixtures.config import (
    clean_environment,  # noqa: F401 (autouse fixture)
    placement_environment,
)
from tests.fixtures.empty_databases import (
    empty_db_url,  # noqa: F401 (fixture)
    upgrade_to,
)
from tests.fixtures.pre_stein_rows import leave_pre_stein_rows
from tests.functional.placement_wsgi.cmd.test_manage import _console_script


def every_row(url: str) -> dict[str, list[tuple]]:
    """Every row of every table, by table, whatever the schema's revision."""
    engine = sa.create_engine(url)
    try:
        metadata = sa.MetaData()
        metadata.reflect(engine)
        with engine.connect() as connection:
            return {name: sorted(map(tuple, connection.execute(sa.select(table))), key=repr)
                    for name, table in metadata.tables.items()}
    finally:
        engine.dispose()


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = status.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def check(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, url: str,
          *extra: str) -> tuple[int, str, str]:
    monkeypatch.setenv("OS_PLACEMENT_DATABASE__CONNECTION", url)
    return run(capsys, "upgrade", "check", *extra)


def test_clean_database_is_0_with_the_table(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, db_url: str) -> None:
    code, out, err = check(capsys, monkeypatch, db_url)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[1] == "| " + "Upgrade Check Results".ljust(len(lines[0]) - 4) + " |"
    assert [line.strip("| ").removeprefix("Check: ") for line in lines
            if line.startswith("| Check:")] == [
        "Missing Root Provider IDs", "Incomplete Consumers",
        "Policy File JSON to YAML Migration"]
    assert out.count("| Result: Success") == 3 and out.count("| Details: None") == 3


@pytest.mark.parametrize(("rootless", "consumerless", "expected", "word"), [
    (0, 2, 1, "Warning"), (2, 0, 2, "Failure"), (1, 1, 2, "Failure")])
def test_damaged_database_exits_with_the_worst_result(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, db_url: str,
        rootless: int, consumerless: int, expected: int, word: str) -> None:
    leave_pre_stein_rows(db_url, rootless, consumerless)
    code, out, err = check(capsys, monkeypatch, db_url)
    assert (code, err) == (expected, "")
    assert f"| Result: {word}" in out


def test_json_document(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
                       db_url: str) -> None:
    leave_pre_stein_rows(db_url, rootless=0, consumerless=2)
    code, out, _ = check(capsys, monkeypatch, db_url, "--json")
    document = json.loads(out)
    assert code == 1
    assert document["name"] == "Upgrade Check Results"
    assert [(entry["check"], entry["result"]) for entry in document["checks"]] == [
        ("Missing Root Provider IDs", 0), ("Incomplete Consumers", 1),
        ("Policy File JSON to YAML Migration", 0)]
    # The next call without --json prints the table again.
    assert "+---" in check(capsys, monkeypatch, db_url)[1]


def test_it_reads_an_older_schema_and_writes_nothing(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
        empty_db_url: str) -> None:  # noqa: F811
    upgrade_to(empty_db_url, "b4ed3a175331")
    leave_pre_stein_rows(empty_db_url, rootless=1, consumerless=1)
    before = every_row(empty_db_url)
    code, out, err = check(capsys, monkeypatch, empty_db_url)
    assert (code, err) == (2, "")
    assert out.count("| Result: Failure") == 1 and out.count("| Result: Warning") == 1
    assert every_row(empty_db_url) == before


def test_every_wrong_database_is_one_line_255_and_creates_nothing(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
        bad_database: BadDatabase) -> None:  # noqa: F811
    if bad_database.name == "other-revision":
        pytest.skip("an older known revision is what this command is for")
    code, out, err = check(capsys, monkeypatch, bad_database.url)
    assert (code, out) == (255, "")
    assert_one_error_line(err, "placement-status", bad_database)
    assert bad_database.created() == ""


def test_no_connection_is_one_line_255(capsys: pytest.CaptureFixture) -> None:
    code, out, err = run(capsys, "upgrade", "check")
    assert (code, out) == (255, "")
    assert "[placement_database] connection is not set" in assert_one_error_line(
        err, "placement-status")


@pytest.mark.parametrize(("content", "fragment"), BAD_CONFIG_FILES)
def test_a_bad_config_file_is_one_line_255(
        capsys: pytest.CaptureFixture, tmp_path: pathlib.Path, content: bytes,
        fragment: str) -> None:
    path = tmp_path / "placement.conf"
    path.write_bytes(content)
    code, out, err = run(capsys, "--config-file", str(path), "upgrade", "check")
    assert (code, out) == (255, "")
    assert fragment in assert_one_error_line(err, "placement-status")


@pytest.mark.parametrize("argv", [[], ["upgrade"], ["upgrade", "fix"], ["check"]])
def test_bad_usage_exits_2_with_usage(capsys: pytest.CaptureFixture, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        status.main(argv)
    assert raised.value.code == 2
    assert "usage: placement-status" in capsys.readouterr().err


def test_console_script(tmp_path: pathlib.Path, db_url: str) -> None:
    if not db_url.startswith("sqlite"):
        pytest.skip("the console script is the same on every engine")
    leave_pre_stein_rows(db_url, rootless=0, consumerless=1)
    environment = placement_environment(tmp_path, OS_PLACEMENT_DATABASE__CONNECTION=db_url)
    done = subprocess.run(_console_script("placement-status") + ["upgrade", "check"],
                          env=environment, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (1, "")
    assert "| Result: Warning" in done.stdout


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_the_checks_is_one_line(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, db_url: str,
        signum: int) -> None:
    def interrupted(_checks: object) -> None:
        signal.raise_signal(signum)
        raise AssertionError("the signal did not stop the check")

    monkeypatch.setattr(status.upgrade_checks.Checks, "_upgrade_checks",
                        (("Interrupted", interrupted),))
    code, _, err = check(capsys, monkeypatch, db_url)
    assert code == 128 + signum
    assert err == (f"placement-status: interrupted by {signal.Signals(signum).name}; nothing "
                   "was written, running again is safe\n")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
