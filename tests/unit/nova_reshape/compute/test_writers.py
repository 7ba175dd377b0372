"""The run's two writers: when each hands a written node back checked, and the one choice."""

from __future__ import annotations

import types

import pytest

from nova_reshape.compute import invariants, writers
from nova_reshape.compute.execute import WrittenGenerations
from nova_reshape.compute.node_result import MIGRATED, NodeResult
from nova_reshape.compute.readback import WrittenTree
from nova_reshape.compute.readers import ReportClientReader
from nova_reshape.compute.tree_source import NodeState
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.transport import CountingTransport
from nova_reshape.transport.direct import DirectTransport

BROKEN = invariants.Violation("not_conserved", "vm", "rp", "VGPU", "lost one")


def _node(name: str) -> writers.WrittenNode:
    simulation = types.SimpleNamespace(plan=f"plan of {name}", tree_before=f"tree of {name}",
                                       tree_after=f"planned tree of {name}",
                                       allocations_before={}, allocations_after={}, moves=[])
    return writers.WrittenNode(name, f"root-{name}", simulation, NodeResult(name, MIGRATED))


@pytest.fixture
def violations(monkeypatch):
    """nodename -> what the node's check finds (nothing unless set)."""
    found: dict[str, list[invariants.Violation]] = {}
    monkeypatch.setattr(writers, "_violations",
                        lambda node, state: found.get(node.nodename, []))
    return found


@pytest.fixture
def transactions(monkeypatch):
    """Each in-transaction write: its plan; its check runs ``runs`` times (a
    transaction retried after a deadlock runs it again)."""
    written, runs, trees = [], {}, []

    def write_in_transaction(writer, plan, tree, allocations, check, record=None):
        for _ in range(runs.get(plan, 1)):
            trees.append(ProviderTree())
            check(NodeState(plan, trees[-1], {}))
        written.append(plan)

    monkeypatch.setattr(writers, "write_in_transaction", write_in_transaction)
    return types.SimpleNamespace(written=written, runs=runs, trees=trees)


def test_in_transaction_a_written_node_is_handed_back_at_once(transactions, violations):
    writer = writers.InTransactionWriter(CountingTransport(None))
    first, second = _node("a"), _node("b")
    transactions.runs["plan of a"] = 2
    writer.write(first)
    [checked] = writer.checked()
    assert checked.node is first and checked.violations == []
    assert checked.tree is transactions.trees[1]  # the check of the transaction committed
    assert writer.checked() == []
    writer.write(second)
    assert [c.node for c in writer.end_batch()] == [second]
    assert transactions.written == ["plan of a", "plan of b"]


def test_in_transaction_a_broken_write_raises_and_is_never_handed_back(transactions,
                                                                        violations):
    writer = writers.InTransactionWriter(CountingTransport(None))
    violations["a"] = [BROKEN]
    with pytest.raises(invariants.InvariantsBroken) as caught:
        writer.write(_node("a"))
    assert caught.value.violations == [BROKEN]
    assert transactions.written == []
    assert writer.checked() == writer.end_batch() == []


class _Rest:
    """Records the plans written as request sequences."""

    def __init__(self, placement) -> None:
        self.plans: list[str] = []

    def write(self, plan, tree, allocations) -> WrittenGenerations:
        self.plans.append(plan)
        return WrittenGenerations({f"child of {plan}": 3}, {f"root of {plan}": 1})


class _Reader:
    """Records each read-back; every root reads as an empty tree, root-a in 3
    requests and root-b in 4 (counted on ``counting``)."""

    def __init__(self, counting: CountingTransport) -> None:
        self.counting = counting
        self.reads: list[tuple[dict[str, str], dict[str, str]]] = []

    def read_back(self, names, written):
        self.reads.append((dict(names), dict(written)))
        for root in names:
            self.counting.calls += {"root-a": 3, "root-b": 4}[root]
            yield NodeState(root, ProviderTree(), {})


def test_read_back_checks_the_batch_with_one_read_after_it(monkeypatch, violations):
    monkeypatch.setattr(writers, "RestPlanWriter", _Rest)
    counting = CountingTransport(None)
    reader = _Reader(counting)
    writer = writers.ReadBackWriter(counting, reader)
    assert writer.end_batch() == [] and reader.reads == []  # nothing written: no read
    first, second = _node("a"), _node("b")
    violations["b"] = [BROKEN]
    writer.write(first)
    writer.write(second)
    assert writer.checked() == [] and reader.reads == []
    checked = writer.end_batch()
    assert reader.reads == [({"root-a": "a", "root-b": "b"}, {
        f"root-{name}": WrittenTree(name, f"planned tree of {name}", {},
                                    {f"child of plan of {name}": 3},
                                    {f"root of plan of {name}": 1})
        for name in "ab"})]  # each with the generations its writes answered
    assert [(c.node, c.violations) for c in checked] == [(first, []), (second, [BROKEN])]
    assert (first.result.calls, second.result.calls) == (3, 4)  # each its read-back's
    assert writer.rest.plans == ["plan of a", "plan of b"]
    assert writer.end_batch() == []


class _OnDatabase:
    """Stands for PlacementDirect: a DirectTransport holding one is on the database."""


def test_the_writer_is_chosen_by_whether_the_transport_is_on_the_database():
    reader = ReportClientReader(None)
    on_database = CountingTransport(DirectTransport(None, direct=_OnDatabase()))
    assert isinstance(writers.writer_for(on_database, reader), writers.InTransactionWriter)
    app_only = CountingTransport(DirectTransport(None))
    chosen = writers.writer_for(app_only, reader)
    assert isinstance(chosen, writers.ReadBackWriter) and chosen.reader is reader
