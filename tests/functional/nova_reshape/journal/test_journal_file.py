"""The journal file of runs over HTTP: its path checks, intents and outcomes, its node list."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import sqlalchemy as sa

from nova_reshape import journal
from nova_reshape.journal import journal_file
from nova_reshape.journal.snapshot import Snapshot

ROOT = "11111111-1111-4111-8111-111111111111"


def _snapshot(total: int, root: str = ROOT) -> Snapshot:
    return Snapshot(root=root, providers=[{"uuid": root, "name": root[:4], "parent": None,
                                           "generation": 1}],
                    inventories={root: {"VGPU": {"total": total}}}, traits={root: []},
                    aggregates={root: []}, allocations={})


def test_path_mistakes_are_one_line_and_create_nothing(tmp_path):
    cases = {
        str(tmp_path / "no" / "j.sqlite"): f"the directory {tmp_path / 'no'} does not exist",
        str(tmp_path): "is a directory; name a file",
    }
    text = tmp_path / "text"
    text.write_text("not sqlite\n")
    cases[str(text)] = "not a nova-reshape journal"
    for path, reason in cases.items():
        with pytest.raises(journal_file.JournalFileError) as raised:
            journal_file.open_journal(path, create=True)
        assert str(raised.value) == f"journal {path}: {reason}"
    absent = str(tmp_path / "absent.sqlite")
    with pytest.raises(journal_file.JournalFileError, match="no such file"):
        journal_file.open_journal(absent, create=False)
    assert not os.path.exists(absent)
    assert sorted(os.listdir(tmp_path)) == ["text"]


def test_the_default_is_beside_the_report_else_here(tmp_path):
    report = str(tmp_path / "r" / "run.html")
    assert journal_file.default_path(report) == str(tmp_path / "r" / journal_file.DEFAULT_NAME)
    assert journal_file.default_path(None) == os.path.join(os.getcwd(),
                                                           journal_file.DEFAULT_NAME)


def test_an_intent_is_replaced_and_an_outcome_closes_it(tmp_path):
    path = str(tmp_path / "j.sqlite")
    engine = journal_file.open_journal(path, create=True)
    other = ROOT.replace("1", "2")
    try:
        with journal.recording(engine, "migrate_compute_inventory", "m", {},
                               custom_names={"traits": [], "resource_classes": []}) as run:
            journal_file.record_intent(engine, run.run_id, "a", "ha", _snapshot(1), _snapshot(2))
            journal_file.record_intent(engine, run.run_id, "b", "hb", _snapshot(1, other),
                                       _snapshot(2, other))
            journal_file.record_intent(engine, run.run_id, "a", "ha", _snapshot(1), _snapshot(3))
            journal_file.record_outcome(engine, run.run_id, "b", "hb", _snapshot(1, other),
                                        _snapshot(2, other))
        keys = journal_file.entry_keys(engine, run.run_id)
        assert [key.nodename for key in keys] == ["b", "a"]
        [[done, pending]] = list(journal_file.entries_of(engine, keys))
        assert (done.pending, pending.pending) == (False, True)
        # The planned "after", as Placement stores it: the defaults filled in.
        assert pending.entry.after.inventories[ROOT]["VGPU"] == {
            "total": 3, "reserved": 0, "min_unit": 1, "max_unit": 2147483647, "step_size": 1,
            "allocation_ratio": 1.0}
        assert journal.get_run(engine, run.run_id).changed == 1
    finally:
        engine.dispose()
    journal_file.open_journal(path, create=False).dispose()  # a journal now


def test_a_file_spoiled_between_the_check_and_the_first_write_is_one_line(tmp_path,
                                                                          monkeypatch):
    """SQLite's "file is not a database" is a DatabaseError, not an OperationalError:
    the first write's refusal of a file that passed the check is a JournalFileError."""
    path = tmp_path / "j.sqlite"
    path.write_text("not sqlite\n")
    monkeypatch.setattr(journal_file, "check_path", lambda path, create: None)
    with pytest.raises(journal_file.JournalFileError) as raised:
        journal_file.open_journal(str(path), create=True)
    assert str(raised.value) == (f"journal {path}: a damaged nova-reshape journal "
                                 "(file is not a database)")
    assert path.read_text() == "not sqlite\n"


#: A writer killed in the middle of a transaction on the file: SQLite's rollback
#: journal (``FILE-journal``) stays behind, "hot", for the next writer to roll back.
KILLED_WRITER = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA cache_size = 1")  # spill to the file before the commit
connection.execute("BEGIN")
connection.execute("CREATE TABLE half_written (x)")
for _ in range(20000):
    connection.execute("INSERT INTO half_written VALUES (?)", ("x" * 200,))
print("writing", flush=True)
time.sleep(60)
"""


def test_a_journal_a_killed_writer_left_mid_transaction_is_still_a_journal(tmp_path):
    """A run or revert killed while committing to the file leaves its transaction for
    the next writer to roll back: ``runs`` and ``revert`` must still take the file."""
    path = str(tmp_path / "j.sqlite")
    journal_file.open_journal(path, create=True).dispose()
    writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, path],
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline() == "writing\n"
    writer.kill()
    writer.wait()
    assert os.path.exists(path + "-journal")
    journal_file.check_path(path, create=False)
    engine = journal_file.open_journal(path, create=False)
    try:
        assert journal.list_runs(engine) == []
        with engine.connect() as connection:
            assert not sa.inspect(connection).has_table("half_written")
    finally:
        engine.dispose()
