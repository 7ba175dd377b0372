"""The run's two readers, and the one choice between them."""

from __future__ import annotations

import pytest

from nova_reshape.compute import readers
from nova_reshape.compute.tree_source import NodeState
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.transport import CountingTransport
from nova_reshape.transport.direct import DirectTransport
from nova_reshape.transport.http import PARALLEL_READS, http_placement


class _Bulk:
    """A bulk source that knows only some roots (the others are not root providers)."""

    def __init__(self, known) -> None:
        self.known = known
        self.reads: list[tuple[list[str], int]] = []


class _PerNode:
    def __init__(self) -> None:
        self.reads: list[dict[str, str]] = []

    def read(self, names):
        self.reads.append(dict(names))
        for root in names:
            yield NodeState(root, ProviderTree(), {"per-node": {}})


@pytest.fixture
def bulk_reads(monkeypatch):
    def node_states(bulk, roots, batch_size):
        bulk.reads.append((list(roots), batch_size))
        for root in roots:
            if root in bulk.known:
                yield NodeState(root, ProviderTree(), {"bulk": {}})
    monkeypatch.setattr(readers, "node_states", node_states)


def test_bulk_reads_once_then_per_node_what_it_skipped(bulk_reads):
    bulk, per_node = _Bulk({"r1", "r3"}), _PerNode()
    reader = readers.BulkNodeReader(bulk, per_node, batch_size=7)
    states = list(reader.read({"r1": "n1", "r2": "n2", "r3": "n3"}))
    assert [(s.root, list(s.allocations)) for s in states] == [
        ("r1", ["bulk"]), ("r3", ["bulk"]), ("r2", ["per-node"])]
    assert bulk.reads == [(["r1", "r2", "r3"], 7)]
    assert per_node.reads == [{"r2": "n2"}]


class _OnDatabase:
    """Stands for PlacementDirect: a DirectTransport holding one is on the database."""


def test_the_reader_is_bulk_when_given_or_on_the_database_else_per_node():
    over_http = CountingTransport(DirectTransport(None))
    assert isinstance(readers.reader_for(over_http, None, 5), readers.SurveyReader)
    given = _Bulk(set())
    chosen = readers.reader_for(over_http, given, 5)
    assert isinstance(chosen, readers.BulkNodeReader)
    assert (chosen.bulk, chosen.batch_size) == (given, 5)
    assert chosen.per_node.placement is over_http
    direct = DirectTransport(None, direct=_OnDatabase())
    chosen = readers.reader_for(CountingTransport(direct), None, 9)
    assert isinstance(chosen, readers.BulkNodeReader) and chosen.bulk is direct


def test_over_http_a_node_s_reads_go_several_at_once_else_one_by_one():
    service = CountingTransport(http_placement("http://placement.invalid"))
    assert readers.reader_for(service, None, 5).parallel == PARALLEL_READS > 1
    passing_on = CountingTransport(DirectTransport(None))  # not known to take threads
    assert readers.reader_for(passing_on, None, 5).parallel == 1


class _Calls:
    """Stands for the run's CountingTransport: ``calls`` moved by the test."""

    calls = 0


def test_counted_gives_each_state_the_requests_made_since_the_previous_one():
    counter = _Calls()

    def states():
        counter.calls += 3
        yield NodeState("r1", ProviderTree(), {})
        counter.calls += 5
        yield NodeState("r2", ProviderTree(), {})

    seen = []
    for state, calls in readers.counted(counter, states()):
        seen.append((state.root, calls))
        counter.calls += 100  # what the caller does with a state is not the next one's read
    assert seen == [("r1", 3), ("r2", 5)]


class _Completing:
    def __init__(self) -> None:
        self.asked: list[set[str]] = []

    def complete(self, state, consumers):
        self.asked.append(set(consumers))
        whole = {c: {"whole": True} for c in consumers}
        return state._replace(allocations=dict(state.allocations) | whole,
                              partial=state.partial - set(consumers))


class _Plan:
    def __init__(self, allocations) -> None:
        self.allocations = allocations
        self.empty = not allocations


class _Simulation:
    def __init__(self, allocations) -> None:
        self.plan = _Plan(allocations)


def _checks(monkeypatch, answers):
    """preflight.check_node answering ``answers`` in turn; the allocations it saw."""
    seen = []

    def check_node(node, driver, tree, allocations, listing=None):
        seen.append(dict(allocations))
        return answers[len(seen) - 1]
    monkeypatch.setattr(readers.preflight, "check_node", check_node)
    return seen


PARTIAL = NodeState("r", ProviderTree(), {"a": {}, "b": {}, "c": {}}, frozenset("abc"))


def test_only_the_consumers_the_plan_moves_are_completed_then_checked_again(monkeypatch):
    seen = _checks(monkeypatch, [([], _Simulation({"b": {}})), ([], _Simulation({"b": {}}))])
    reader = _Completing()
    state, findings, simulation = readers.check_read(reader, None, None, PARTIAL)
    assert reader.asked == [{"b"}]
    assert state.partial == {"a", "c"} and seen[1]["b"] == {"whole": True}
    assert len(seen) == 2 and findings == []


def test_a_node_with_findings_is_checked_again_on_every_consumer_whole(monkeypatch):
    _checks(monkeypatch, [(["finding"], None), (["finding", "more"], None)])
    reader = _Completing()
    state, findings, _ = readers.check_read(reader, None, None, PARTIAL)
    assert reader.asked == [{"a", "b", "c"}] and not state.partial
    assert findings == ["finding", "more"]


def test_nothing_moved_or_nothing_partial_is_checked_once(monkeypatch):
    for state in (PARTIAL, PARTIAL._replace(partial=frozenset())):
        seen = _checks(monkeypatch, [([], _Simulation({})), ([], _Simulation({}))])
        reader = _Completing()
        assert readers.check_read(reader, None, None, state)[0] is state
        assert reader.asked == [] and len(seen) == 1


class _ReadingUnread(_Completing):
    """Completes consumers; reads the unread providers' allocations (consumer "d" there)."""

    def __init__(self) -> None:
        super().__init__()
        self.unread: list[frozenset[str]] = []

    def read_unread(self, state):
        self.unread.append(state.unread)
        return state._replace(allocations=dict(state.allocations) | {"d": {}},
                              partial=state.partial | {"d"}, unread=frozenset())


ROOT_ONLY = PARTIAL._replace(unread=frozenset({"child"}))


def test_a_root_only_read_with_nothing_found_or_planned_is_checked_once(monkeypatch):
    seen = _checks(monkeypatch, [([], _Simulation({}))])
    reader = _ReadingUnread()
    state, findings, _ = readers.check_read(reader, None, None, ROOT_ONLY)
    assert state is ROOT_ONLY and reader.unread == [] and len(seen) == 1


@pytest.mark.parametrize("first", [(["missing consumer"], None), ([], _Simulation({"b": {}}))])
def test_a_root_only_read_is_read_whole_once_the_check_finds_or_plans_anything(
        monkeypatch, first):
    seen = _checks(monkeypatch, [first, ([], _Simulation({"b": {}})),
                                 ([], _Simulation({"b": {}}))])
    reader = _ReadingUnread()
    state, findings, _ = readers.check_read(reader, None, None, ROOT_ONLY)
    assert reader.unread == [{"child"}] and not state.unread
    assert "d" in seen[1] and findings == []  # checked again on every provider's allocations
    assert reader.asked == [{"b"}]  # then the moved consumer whole, as before
