"""Which outcome of a journal file vouches for a node, and when a listing matches it."""

from __future__ import annotations

import sqlalchemy as sa

from nova_reshape import journal
from nova_reshape.journal import journal_file, vouched
from nova_reshape.journal.snapshot import Snapshot

ROOT = "11111111-1111-4111-8111-111111111111"
CHILD = "22222222-2222-4222-8222-222222222222"
HERE = "http://placement.example:8778"
ELSEWHERE = "http://placement.example:8779"
NAMES = {"traits": [], "resource_classes": []}


def _snapshot(generation: int = 3, total: int = 4) -> Snapshot:
    providers = [{"uuid": ROOT, "name": "cmp", "parent": None, "generation": generation},
                 {"uuid": CHILD, "name": "cmp_pgpu", "parent": ROOT, "generation": 2}]
    return Snapshot(root=ROOT, providers=providers,
                    inventories={ROOT: {}, CHILD: {"VGPU": {"total": total}}},
                    traits={ROOT: ["COMPUTE_NODE"], CHILD: []},
                    aggregates={ROOT: [], CHILD: []}, allocations={})


def _listing(root_generation: int = 3, child_name: str = "cmp_pgpu") -> list[dict]:
    return [{"uuid": ROOT, "name": "cmp", "parent_provider_uuid": None,
             "generation": root_generation},
            {"uuid": CHILD, "name": child_name, "parent_provider_uuid": ROOT, "generation": 2}]


def test_a_listing_matches_only_the_recorded_providers_at_their_generations():
    assert vouched.matches(_snapshot(), _listing())
    assert not vouched.matches(_snapshot(), _listing(root_generation=4))
    assert not vouched.matches(_snapshot(), _listing(child_name="renamed"))
    assert not vouched.matches(_snapshot(), _listing()[:1])
    stranger = {"uuid": CHILD.replace("2", "3"), "name": "x", "parent_provider_uuid": ROOT,
                "generation": 0}
    assert not vouched.matches(_snapshot(), [*_listing(), stranger])
    assert not vouched.matches(_snapshot(generation=None), _listing(root_generation=None))


def _outcome(engine, run_id, after, vouched_in):
    journal_file.record_outcome(engine, run_id, "cmp", "cmp", _snapshot(total=1), after,
                                vouched_in=vouched_in)


def test_the_last_outcome_vouches_until_the_node_is_written_again(tmp_path):
    """An outcome read back as the listing vouches for its node, in the service it
    was read from only; a later intent (a migration writing the node again, a
    revert) or an outcome that does not vouch ends it; a file opened for a
    revert gets the table it lacks."""
    path = str(tmp_path / "j.sqlite")
    engine = journal_file.open_journal(path, create=True)
    try:
        with journal.recording(engine, "migrate_compute_inventory", "m", {},
                               custom_names=NAMES) as first:
            journal_file.record_intent(engine, first.run_id, "cmp", "cmp", _snapshot(total=1),
                                       _snapshot())
            _outcome(engine, first.run_id, _snapshot(), HERE)
        assert vouched.recorded(engine, [ROOT, CHILD], HERE) == {ROOT: _snapshot()}
        assert vouched.recorded(engine, [ROOT], ELSEWHERE) == {}

        with journal.recording(engine, "revert", "r", {}, custom_names=NAMES) as revert:
            journal_file.record_intent(engine, revert.run_id, "cmp", "cmp", _snapshot(),
                                       _snapshot(total=1))
        assert vouched.recorded(engine, [ROOT], HERE) == {}

        with journal.recording(engine, "migrate_compute_inventory", "m", {},
                               custom_names=NAMES) as again:
            _outcome(engine, again.run_id, _snapshot(generation=9), HERE)
        assert vouched.recorded(engine, [ROOT], HERE) == {ROOT: _snapshot(generation=9)}
        with journal.recording(engine, "migrate_compute_inventory", "m", {},
                               custom_names=NAMES) as last:  # read back in full
            _outcome(engine, last.run_id, _snapshot(generation=10), None)
        assert vouched.recorded(engine, [ROOT], HERE) == {}
    finally:
        engine.dispose()


def test_a_file_written_before_the_table_vouches_for_nothing(tmp_path):
    path = str(tmp_path / "j.sqlite")
    engine = journal_file.open_journal(path, create=True)
    try:
        with engine.begin() as connection:
            connection.execute(sa.text(f"DROP TABLE {vouched.vouched.name}"))
        assert vouched.recorded(engine, [ROOT], HERE) == {}
        journal_file.add_tables(engine)  # what a revert writing in the file does first
        with journal.recording(engine, "revert", "r", {}, custom_names=NAMES) as revert:
            journal_file.record_intent(engine, revert.run_id, "cmp", "cmp", _snapshot(),
                                       _snapshot(total=1))
    finally:
        engine.dispose()
