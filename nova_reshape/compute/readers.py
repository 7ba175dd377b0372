"""How a migration run reads nodes' trees and allocations: two readers behind one protocol.

* :class:`ReportClientReader`: per node through a report client, as
  nova-compute reads its tree (one request per provider and per consumer);
  what a run over HTTP does.
* :class:`BulkNodeReader`: in batches straight from the database
  (:func:`~nova_reshape.compute.tree_source.node_states`, a few set-based
  statements per batch, no API call); a root the bulk read skips (not a
  root provider) is read per node as nova would.

:func:`reader_for` chooses once, where the run is set up: the bulk reader
when one is given or the transport is in-process on the database
(:func:`~nova_reshape.transport.direct.on_database`), else per node.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

from nova_reshape.compute.tree_source import BulkReader, NodeState, node_states
from nova_reshape.report import SchedulerReportClient
from nova_reshape.transport.base import Placement
from nova_reshape.transport.direct import on_database


class NodeReader(Protocol):
    """Reads nodes' trees and allocations for the run."""

    def read(self, names: Mapping[str, str]) -> Iterator[NodeState]:
        """The state of each root of ``names`` (root uuid -> node name), streamed,
        one per root."""
        ...


class ReportClientReader:
    """Each node through a fresh report client on ``placement``, as nova reads it."""

    def __init__(self, placement: Placement) -> None:
        self.placement = placement

    def read(self, names: Mapping[str, str]) -> Iterator[NodeState]:
        for root, name in names.items():
            report = SchedulerReportClient(self.placement)
            tree = report.get_provider_tree_and_ensure_root(None, root, name=name)
            yield NodeState(root, tree, report.get_allocations_for_provider_tree(None, name))


class BulkNodeReader:
    """Trees in batches of ``batch_size`` from ``bulk``; the roots it skips through
    ``per_node``."""

    def __init__(self, bulk: BulkReader, per_node: NodeReader, batch_size: int) -> None:
        self.bulk = bulk
        self.per_node = per_node
        self.batch_size = batch_size

    def read(self, names: Mapping[str, str]) -> Iterator[NodeState]:
        missing = dict(names)
        for state in node_states(self.bulk, list(names), self.batch_size):
            missing.pop(state.root, None)
            yield state
        yield from self.per_node.read(missing)


def reader_for(placement: Placement, bulk: BulkReader | None, batch_size: int) -> NodeReader:
    """The run's reader: bulk from ``bulk``, else from ``placement`` when it is
    in-process on the database, else per node through ``placement``."""
    per_node = ReportClientReader(placement)
    source = bulk if bulk is not None else on_database(placement)
    if source is None:
        return per_node
    return BulkNodeReader(source, per_node, batch_size)
