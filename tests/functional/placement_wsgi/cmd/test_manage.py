"""placement-manage: db sync / db version, errors as one line and an exit status."""

from __future__ import annotations

import pathlib
import shutil
import socket
import subprocess
import sys

import pytest
import sqlalchemy as sa

from placement_wsgi.cmd import manage
from placement_wsgi.db import migration
from tests.fixtures.config import (
    clean_environment,  # noqa: F401 (autouse fixture)
    placement_environment,
)
from tests.fixtures.empty_databases import (
    empty_db_url,  # noqa: F401 (fixture)
    upgrade_to,
)

HEAD = "a082b8bb98d0"


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    status = manage.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def assert_one_line_error(err: str, *fragments: str) -> None:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("placement-manage: error: ")
    for fragment in fragments:
        assert fragment in lines[0]


def test_db_sync_then_version_on_every_engine(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
        empty_db_url: str) -> None:  # noqa: F811
    monkeypatch.setenv("OS_PLACEMENT_DATABASE__CONNECTION", empty_db_url)
    assert run(capsys, "db", "version") == (0, "None\n", "")
    status, out, err = run(capsys, "db", "sync")
    assert (status, err) == (0, "")
    assert out == f"Database upgraded from empty to revision {HEAD} (head).\n"
    assert run(capsys, "db", "version") == (0, f"{HEAD}\n", "")
    status, out, _ = run(capsys, "db", "sync")
    assert (status, out) == (0, f"Database already at revision {HEAD} (head).\n")


def test_config_files_are_read_in_order(
        capsys: pytest.CaptureFixture, tmp_path: pathlib.Path) -> None:
    wrong = tmp_path / "wrong.conf"
    wrong.write_text("[placement_database]\nconnection = nosuchdb://x\n")
    right = tmp_path / "right.conf"
    database = tmp_path / "manage.sqlite"
    right.write_text(f"[placement_database]\nconnection = sqlite:///{database}\n")
    status, _, err = run(capsys, "--config-file", str(wrong), "--config-file", str(right),
                         "db", "sync")
    assert (status, err) == (0, "")
    assert run(capsys, "--config-file", str(right), "db", "version")[1] == f"{HEAD}\n"


def test_config_dir_variable_is_honoured(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
        tmp_path: pathlib.Path) -> None:
    database = tmp_path / "dir.sqlite"
    (tmp_path / "placement.conf").write_text(
        f"[placement_database]\nconnection = sqlite:///{database}\n")
    monkeypatch.setenv("OS_PLACEMENT_CONFIG_DIR", str(tmp_path))
    assert run(capsys, "db", "sync")[0] == 0
    assert database.exists()


def test_missing_connection_is_one_line_and_status_1(capsys: pytest.CaptureFixture) -> None:
    status, out, err = run(capsys, "db", "sync")
    assert (status, out) == (1, "")
    assert_one_line_error(err, "[placement_database] connection is not set")


def test_unreachable_database_is_one_line_and_status_1(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"postgresql+psycopg://placement:s3cret@127.0.0.1:{closed_port()}/placement"
    monkeypatch.setenv("OS_PLACEMENT_DATABASE__CONNECTION", url)
    status, _, err = run(capsys, "db", "sync")
    assert status == 1
    assert_one_line_error(err, "127.0.0.1")
    assert "s3cret" not in err


@pytest.mark.parametrize("url, fragment", [
    ("not a url", "invalid database connection URL"),
    ("nosuchdb://host/db", "unknown database dialect"),
])
def test_bad_connection_url_is_one_line_and_status_1(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
        url: str, fragment: str) -> None:
    monkeypatch.setenv("OS_PLACEMENT_DATABASE__CONNECTION", url)
    status, _, err = run(capsys, "db", "version")
    assert status == 1
    assert_one_line_error(err, fragment)


def test_missing_config_file_is_one_line_and_status_1(
        capsys: pytest.CaptureFixture, tmp_path: pathlib.Path) -> None:
    status, _, err = run(capsys, "--config-file", str(tmp_path / "nope.conf"), "db", "sync")
    assert status == 1
    assert_one_line_error(err, "nope.conf")


def test_failing_data_check_is_one_line_and_keeps_revision(
        capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch,
        tmp_path: pathlib.Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    upgrade_to(url, "b4ed3a175331")
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.execute(sa.text(
            "INSERT INTO resource_providers (id, uuid, name, generation) "
            "VALUES (1, '7d3a4f4e-56c5-4a29-9d4b-2b8f3b1e0a51', 'orphan', 0)"))
    engine.dispose()
    monkeypatch.setenv("OS_PLACEMENT_DATABASE__CONNECTION", url)
    status, _, err = run(capsys, "db", "sync")
    assert status == 1
    assert_one_line_error(err, "root_provider_id")
    assert run(capsys, "db", "version")[1] == "b4ed3a175331\n"


@pytest.mark.parametrize("argv", [[], ["db"], ["db", "frobnicate"], ["nosuch", "sync"]])
def test_bad_usage_exits_2(capsys: pytest.CaptureFixture, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        manage.main(argv)
    assert raised.value.code == 2
    assert "usage:" in capsys.readouterr().err


def _console_script(name: str) -> list[str]:
    found = pathlib.Path(sys.executable).parent / name
    if found.exists():
        return [str(found)]
    located = shutil.which(name)
    assert located, f"console script {name} is not installed (pip install -e .)"
    return [located]


def test_console_script_exit_codes(tmp_path: pathlib.Path) -> None:
    environment = placement_environment(tmp_path)
    failed = subprocess.run(_console_script("placement-manage") + ["db", "version"],
                            env=environment, capture_output=True, text=True, timeout=120)
    assert failed.returncode == 1
    assert_one_line_error(failed.stderr, "connection is not set")
    environment["OS_PLACEMENT_DATABASE__CONNECTION"] = f"sqlite:///{tmp_path / 'c.sqlite'}"
    synced = subprocess.run(_console_script("placement-manage") + ["db", "sync"],
                            env=environment, capture_output=True, text=True, timeout=120)
    assert synced.returncode == 0, synced.stderr
    assert migration.head_revision() in synced.stdout
