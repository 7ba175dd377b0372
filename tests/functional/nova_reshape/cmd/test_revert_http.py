"""``placement revert|runs --journal FILE`` and the migration's ``--journal``: mistakes in
the journal file's path are one line, exit 2, and create nothing; the default file.

The cloud and its command lines are those of
tests/functional/nova_reshape/journal/test_http_revert.py.
"""

from __future__ import annotations

import os
import pathlib
import sqlite3
from collections.abc import Iterator

import pytest

from nova_reshape.cmd import manage
from nova_reshape.journal import journal_file
from tests.fixtures.bad_databases import assert_one_error_line
from tests.fixtures.http_journal import HEADERS, Cloud, main, migrated, served_cloud
from tests.fixtures.placement_dump import normalized_dump


@pytest.fixture
def cloud(db_url, tmp_path) -> Iterator[Cloud]:
    yield from served_cloud(db_url, tmp_path)


def test_journal_path_mistakes_are_one_line(cloud, tmp_path):
    missing = str(tmp_path / "nowhere" / "journal.sqlite")
    code, text, err = cloud.migrate("--journal", missing)
    assert (code, text) == (manage.EXIT_BAD_INPUT, "")
    assert err == (f"nova-reshape-manage: error: journal {missing}: the directory "
                   f"{tmp_path / 'nowhere'} does not exist\n")
    not_journal = tmp_path / "notes.txt"
    not_journal.write_text("hello\n")
    for argv in (("runs", "--journal", str(not_journal)),
                 ("revert", "x", "--journal", str(not_journal), "--placement-url",
                  cloud.url)):
        code, text, err = main("placement", *argv)
        assert (code, text) == (manage.EXIT_BAD_INPUT, ""), err
        assert err.endswith(f"journal {not_journal}: not a nova-reshape journal\n")
        assert err.count("\n") == 1
    absent = str(tmp_path / "absent.sqlite")
    code, _, err = main("placement", "runs", "--journal", absent)
    assert code == manage.EXIT_BAD_INPUT and err.endswith(f"journal {absent}: no such file\n")
    assert not os.path.exists(absent)
    code, _, err = main("placement", "revert", "x", "--journal", absent)
    assert code == manage.EXIT_BAD_INPUT and "give --placement-url URL too" in err
    code, _, err = main("placement", "revert", "x", "--placement-url", cloud.url)
    assert code == manage.EXIT_BAD_INPUT and "give --journal FILE" in err


def _not_journals(directory: pathlib.Path) -> dict[str, str]:
    """Files given as ``--journal`` by mistake -> why each is refused."""
    directory.mkdir()
    (directory / "notes.txt").write_text("hello\n")
    (directory / "empty.sqlite").write_bytes(b"")
    (directory / "a-directory").mkdir()
    other = sqlite3.connect(directory / "other.sqlite")
    other.execute("CREATE TABLE t (x)")
    other.commit()
    other.close()
    damaged = directory / "damaged.sqlite"
    journal_file.open_journal(str(damaged), create=True).dispose()
    data = bytearray(damaged.read_bytes())
    page = int.from_bytes(data[16:18], "big")  # the first page (the schema) stays readable
    data[page:] = b"Z" * (len(data) - page)
    damaged.write_bytes(bytes(data))
    return {"notes.txt": "not a nova-reshape journal",
            "empty.sqlite": "empty, not a nova-reshape journal",
            "a-directory": "is a directory; name a file",
            "other.sqlite": "not a nova-reshape journal",
            "damaged.sqlite": "a damaged nova-reshape journal (database disk image is "
                              "malformed)"}


def _contents(directory: pathlib.Path) -> dict[str, bytes | None]:
    return {path.name: None if path.is_dir() else path.read_bytes()
            for path in sorted(directory.rglob("*"))}


def test_a_file_that_is_not_a_journal_is_one_line_and_left_as_it_was(cloud, tmp_path):
    """Over HTTP and in-process, the migration, ``runs`` and ``revert`` (real and dry):
    exit 2, one line, no traceback; nothing written in or beside the file."""
    directory = tmp_path / "given"
    reasons = _not_journals(directory)
    before = _contents(directory)
    conf = str(tmp_path / "placement.conf")  # the cloud's, in-process
    commands = {
        "migration over HTTP": lambda path: cloud.migrate("--journal", path),
        "in-process migration": lambda path: main(
            "--config-file", conf, "placement", "migrate_compute_inventory", "--host-file",
            cloud.hosts, "--numa-in-placement", "--journal", path),
        "runs": lambda path: main("placement", "runs", "--journal", path),
        "runs show": lambda path: main("placement", "runs", "show", "x", "--journal", path),
        "revert": lambda path: main("placement", "revert", "x", "--journal", path,
                                    "--placement-url", cloud.url, *HEADERS),
        "dry revert": lambda path: main("placement", "revert", "x", "--journal", path,
                                        "--placement-url", cloud.url, *HEADERS, "--dry-run"),
    }
    for command, run in commands.items():
        for name, reason in reasons.items():
            if command == "migration over HTTP" and name == "empty.sqlite":
                continue  # a new journal (the next test)
            path = str(directory / name)
            code, text, err = run(path)
            assert (code, text) == (manage.EXIT_BAD_INPUT, ""), (command, name, err)
            line = assert_one_error_line(err, "nova-reshape-manage")
            if command == "in-process migration":
                assert "--journal is for runs over --placement-url" in line
            else:
                assert line.endswith(f"journal {path}: {reason}"), (command, line)
            assert _contents(directory) == before, (command, name)
    assert normalized_dump(cloud.db_url) == cloud.before  # nothing was migrated


def test_an_empty_file_takes_a_new_journal(cloud):
    """``J=$(mktemp)`` then ``--journal "$J"``: the run journals into it, and reverts."""
    pathlib.Path(cloud.journal).write_bytes(b"")
    run_id = migrated(cloud)
    code, report = cloud.revert(run_id)
    assert code == 0, report
    assert normalized_dump(cloud.db_url) == cloud.before


def test_a_read_only_journal_cannot_take_a_revert(cloud, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes to read-only files")
    run_id = migrated(cloud)
    os.chmod(cloud.journal, 0o444)
    try:
        code, text, err = main("placement", "revert", run_id, "--journal", cloud.journal,
                                "--placement-url", cloud.url, *HEADERS)
    finally:
        os.chmod(cloud.journal, 0o644)
    assert (code, text) == (manage.EXIT_BAD_INPUT, "")
    assert err.endswith(f"journal {cloud.journal}: cannot be written\n")


def test_the_default_journal_is_beside_the_report(cloud, tmp_path):
    report = tmp_path / "reports" / "run.html"
    report.parent.mkdir()
    code, text, err = main("placement", "migrate_compute_inventory", "--placement-url",
                            cloud.url, *HEADERS, "--host-file", cloud.hosts,
                            "--numa-in-placement", "--report", str(report))
    assert code == 0, (text, err)
    default = report.parent / journal_file.DEFAULT_NAME
    assert default.exists() and f"journal: {default}, run " in err
