"""``placement revert|runs --journal FILE`` and the migration's ``--journal``: mistakes in
the journal file's path are one line, exit 2, and create nothing; the default file.

The cloud and its command lines are those of
tests/functional/nova_reshape/journal/test_http_revert.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from nova_reshape.cmd import manage
from nova_reshape.journal import journal_file
from tests.fixtures.http_journal import HEADERS, Cloud, main, migrated, served_cloud


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
