"""How a migration run reads nodes' trees and allocations: the readers behind one protocol.

* :class:`~nova_reshape.compute.api_reader.SurveyReader`, over the API
  (what a run over HTTP does): the run's survey of the whole cloud, then
  per provider its inventories and allocations (off the root only when the
  check needs them, unless the run wants ``whole`` nodes), a node's several
  at once over HTTP (see :mod:`~nova_reshape.compute.api_reader`), none
  for a node the run's journal file vouches for (its root's allocations
  only, :mod:`~nova_reshape.journal.vouched`); consumers partial, each
  provider's share only. A consumer's whole body
  (``GET /allocations/{consumer}``: generation, owner, allocations
  elsewhere) is read only when the check needs it (:func:`check_read`:
  the consumers whose allocations the plan moves, or every one of a node
  with findings). A node's state read for the check is handed again to the
  write when one listing of its tree shows every provider at the
  generation read (:meth:`NodeReader.again`); a stale consumer is then a
  generation conflict at the reshaper, and the run reads again.
* :class:`BulkNodeReader`: in batches straight from the database
  (:func:`~nova_reshape.compute.tree_source.node_states`, a few set-based
  statements per batch, no API call); a root the bulk read skips (not a
  root provider) is read per node as nova would
  (:class:`~nova_reshape.compute.api_reader.ReportClientReader`).

:func:`reader_for` chooses once, where the run is set up: the bulk reader
when one is given or the transport is in-process on the database
(:func:`~nova_reshape.transport.direct.on_database`), else the survey
reader. :func:`counted` gives each state read the requests its read made,
so a node's ``calls`` are all of its own.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from sqlalchemy.engine import Engine

from nova_reshape import exception
from nova_reshape.compute import preflight
from nova_reshape.compute.api_reader import ReportClientReader, SurveyReader
from nova_reshape.compute.node_result import NodeResult
from nova_reshape.compute.readback import WrittenTree
from nova_reshape.compute.tree_source import BulkReader, NodeState, node_states
from nova_reshape.transport.base import Placement
from nova_reshape.transport.counting import CountingTransport
from nova_reshape.transport.direct import on_database
from nova_reshape.transport.http import parallel_reads
from nova_reshape.virt.described import DescribedDriver
from nova_reshape.virt.host import Node


class NodeReader(Protocol):
    """Reads nodes' trees and allocations for the run."""

    def begin(self, trees: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        """The run starts from its one listing of providers (root -> its
        providers, 1.14); a reader may read more of the whole cloud now, once."""
        ...

    def read(self, names: Mapping[str, str]) -> Iterator[NodeState]:
        """The state of each root of ``names`` (root uuid -> node name), streamed,
        one per root, as Placement holds it now."""
        ...

    def again(self, names: Mapping[str, str]) -> Iterator[NodeState]:
        """As :meth:`read`, just before the nodes are written: a state given to
        :meth:`keep` may be handed back (once) when Placement provably still
        holds it."""
        ...

    def keep(self, state: NodeState) -> None:
        """``state`` (checked, to be written) may serve :meth:`again`."""
        ...

    def complete(self, state: NodeState, consumers: Collection[str]) -> NodeState:
        """``state`` with the whole body of each of ``consumers`` that is partial."""
        ...

    def read_unread(self, state: NodeState) -> NodeState:
        """``state`` with the allocations on its ``unread`` providers read too."""
        ...

    def read_back(self, names: Mapping[str, str],
                  written: Mapping[str, WrittenTree]) -> Iterator[NodeState]:
        """As :meth:`read`, after the nodes' writes, for their check against the
        plan (``written``: root -> what the plan and its writes should have left)."""
        ...


def counted(placement: CountingTransport, states: Iterable[NodeState],
            ) -> Iterator[tuple[NodeState, int]]:
    """Each state of ``states`` (read through ``placement``) with the requests its
    read made: the ones counted since the previous state was handed on."""
    seen = placement.calls
    for state in states:
        yield state, placement.calls - seen
        seen = placement.calls


class BulkNodeReader:
    """Trees in batches of ``batch_size`` from ``bulk``; the roots it skips through
    ``per_node``."""

    def __init__(self, bulk: BulkReader, per_node: NodeReader, batch_size: int) -> None:
        self.bulk = bulk
        self.per_node = per_node
        self.batch_size = batch_size

    def begin(self, trees: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        pass

    def read(self, names: Mapping[str, str]) -> Iterator[NodeState]:
        missing = dict(names)
        for state in node_states(self.bulk, list(names), self.batch_size):
            missing.pop(state.root, None)
            yield state
        yield from self.per_node.read(missing)

    def again(self, names: Mapping[str, str]) -> Iterator[NodeState]:
        """Read again: in bulk that costs less than keeping the checked states."""
        return self.read(names)

    def keep(self, state: NodeState) -> None:
        pass

    def complete(self, state: NodeState, consumers: Collection[str]) -> NodeState:
        return self.per_node.complete(state, consumers)

    def read_unread(self, state: NodeState) -> NodeState:
        return self.per_node.read_unread(state)

    def read_back(self, names: Mapping[str, str],
                  written: Mapping[str, WrittenTree]) -> Iterator[NodeState]:
        """Read again, in bulk."""
        return self.read(names)


def check_read(reader: NodeReader, node: Node, driver: DescribedDriver, state: NodeState,
               listing: preflight.Listing | None = None,
               ) -> tuple[NodeState, list[preflight.Finding], preflight.Simulation | None]:
    """:func:`~nova_reshape.compute.preflight.check_node` on ``state``, and the
    state it ran on. When consumers it needs whole were read partially (over the
    API), ``reader`` completes them and the check runs again: the consumers
    whose allocations the plan changes, or all of them when it finds anything
    (so the findings are the ones a whole read gives).

    Before that, a state read without some providers' allocations
    (``unread``: over the API, an unchanged node's children need none) gets
    them and is checked again unless the check finds nothing and plans
    nothing. That verdict needs no allocation off the root: with nothing
    planned no allocation moves; the checks on allocations either look at
    the root's (moved classes, pinned guests' PCPU), or find a consumer
    missing (which reads the rest, then checks again), or concern a
    provider the plan would delete (then it plans something); and capacity
    and orphans are checked only where the plan changes something, as
    Placement refuses an allocation of a class a provider has no inventory
    of and the removal of inventory still allocated.
    """
    findings, simulation = preflight.check_node(node, driver, state.tree, state.allocations,
                                                listing)
    if state.unread and (findings or simulation is None or not simulation.plan.empty):
        state = reader.read_unread(state)
        findings, simulation = preflight.check_node(node, driver, state.tree,
                                                    state.allocations, listing)
    if state.partial:
        needed = (state.partial if findings or simulation is None
                  else state.partial & set(simulation.plan.allocations))
        if needed:
            state = reader.complete(state, needed)
            findings, simulation = preflight.check_node(node, driver, state.tree,
                                                        state.allocations, listing)
    return state, findings, simulation


def reader_for(placement: Placement, bulk: BulkReader | None, batch_size: int,
               whole: bool = True, journal: Engine | None = None) -> NodeReader:
    """The run's reader: bulk from ``bulk``, else from ``placement`` when it is
    in-process on the database, else per node through ``placement`` (a node's
    independent reads several at once when ``placement`` takes them; with
    ``whole`` False, a node's allocations off its root only when the check
    needs them: see :func:`check_read`; a run whose report shows every node's
    usage wants them all; and then a node the journal file ``journal`` vouches
    for, listed as recorded, is read for its root's allocations only)."""
    source = bulk if bulk is not None else on_database(placement)
    if source is None:
        return SurveyReader(placement, parallel_reads(placement), whole, journal)
    return BulkNodeReader(source, ReportClientReader(placement), batch_size)


def read_listing(placement: Placement) -> preflight.Listing:
    """Every provider in one listing: where the run finds each node's root."""
    response = placement.get("/resource_providers", microversion="1.14")
    if response.status_code != 200:
        raise exception.ResourceProviderRetrievalFailed(
            message=f"Listing resource providers failed: {response.status_code} "
                    f"{response.text}")
    return preflight.Listing(response.json()["resource_providers"])


def read_again(placement: CountingTransport, reader: NodeReader,
               nodes: Mapping[str, tuple[str, NodeResult]]) -> dict[str, NodeState]:
    """root -> state of ``nodes`` (root -> node name and result) before their write
    (the reader may hand back a checked state still current); each result counts
    the requests its read made."""
    states = {}
    names = {root: name for root, (name, _result) in nodes.items()}
    for state, calls in counted(placement, reader.again(names)):
        states[state.root] = state
        nodes[state.root][1].calls += calls
    return states
