"""The run's two readers, and the one choice between them."""

from __future__ import annotations

import pytest

from nova_reshape.compute import readers
from nova_reshape.compute.tree_source import NodeState
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.transport import CountingTransport
from nova_reshape.transport.direct import DirectTransport


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
    assert isinstance(readers.reader_for(over_http, None, 5), readers.ReportClientReader)
    given = _Bulk(set())
    chosen = readers.reader_for(over_http, given, 5)
    assert isinstance(chosen, readers.BulkNodeReader)
    assert (chosen.bulk, chosen.batch_size) == (given, 5)
    assert chosen.per_node.placement is over_http
    direct = DirectTransport(None, direct=_OnDatabase())
    chosen = readers.reader_for(CountingTransport(direct), None, 9)
    assert isinstance(chosen, readers.BulkNodeReader) and chosen.bulk is direct
