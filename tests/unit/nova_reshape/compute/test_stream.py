"""A run's described nodes taken from a stream: numbered, in batches, ironic ones at once."""

from __future__ import annotations

from nova_reshape.compute import stream
from nova_reshape.compute.node_result import REFUSED, SKIPPED
from nova_reshape.virt.host import Host, Node
from nova_reshape.virt.releases import DriverOptions


def _hosts():
    yield Host("a.yaml", "a", (Node("a-0"), Node("a-1")))
    yield Host("b.yaml", "b", (Node("b-0", hypervisor_type="ironic"),))
    yield Host("c.yaml", "c", (Node("c-0"),))
    yield Host("d.yaml", "d", (Node("d-0"),))


def test_nodes_are_numbered_in_the_description_order():
    assert [(first, host.host) for first, host in stream.numbered_hosts(_hosts())] == [
        (0, "a"), (2, "b"), (3, "c"), (4, "d")]


def test_batches_hold_the_checked_nodes_and_skip_ironic_ones_at_once():
    skipped = []
    batches = [[(item.node.nodename, item.result.order, item.result.status) for item in batch]
               for batch in stream.batches(stream.numbered_hosts(_hosts()), None,
                                           DriverOptions(), 2, skipped.append)]
    assert batches == [[("a-0", 0, REFUSED), ("a-1", 1, REFUSED)],
                       [("c-0", 3, REFUSED), ("d-0", 4, REFUSED)]]
    assert [(result.nodename, result.order, result.status) for result in skipped] == [
        ("b-0", 2, SKIPPED)]


def test_only_the_named_nodes_are_taken():
    batches = list(stream.batches(stream.numbered_hosts(_hosts()), {"a-1", "d-0"},
                                  DriverOptions(), 10, lambda result: None))
    assert [[item.node.nodename for item in batch] for batch in batches] == [["a-1", "d-0"]]


def test_chunked_is_lazy_and_keeps_the_order():
    taken = []

    def items():
        for index in range(5):
            taken.append(index)
            yield index

    chunks = stream.chunked(items(), 2)
    assert next(chunks) == [0, 1] and taken == [0, 1]
    assert list(chunks) == [[2, 3], [4]]
