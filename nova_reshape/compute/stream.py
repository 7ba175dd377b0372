"""A run's described nodes as a stream: numbered, completed from nova.conf, in batches.

The host descriptions of a large cloud do not all fit in memory at once
(about 21 KB per node once parsed), so a run takes them from an iterator a
batch at a time (:func:`batches`): each host's nodes are numbered in the
description order (the report's order, whatever order nodes finish in),
completed from their nova.conf (:func:`with_nova_conf`), ironic ones
reported skipped at once, the others handed to the check in batches.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import NamedTuple, TypeVar

from nova_reshape.compute import conf_check, preflight
from nova_reshape.compute.node_result import REFUSED, SKIPPED, NodeResult
from nova_reshape.virt.host import Host, Node
from nova_reshape.virt.releases import DriverOptions

T = TypeVar("T")


@dataclasses.dataclass
class Checking:
    """A node of the batch being checked: its result so far and what nova.conf says."""

    node: Node
    result: NodeResult
    conf_findings: list[preflight.Finding]
    #: The described host's name, where it names one (the journal records it).
    host: str | None = None


def batches(numbered: Iterable[Numbered], only: Collection[str] | None,
            options: DriverOptions, size: int,
            skipped: Callable[[NodeResult], None]) -> Iterator[list[Checking]]:
    """The nodes this run handles, completed from nova.conf, in batches;
    ironic ones are final (skipped) as they come."""
    batch: list[Checking] = []
    for first, host in numbered:
        nodes = {node.nodename: node for node in host.nodes
                 if only is None or node.nodename in only}
        merged, findings = with_nova_conf(nodes, options)
        for offset, node in enumerate(host.nodes):
            if node.nodename not in merged:
                continue
            result = NodeResult(node.nodename, SKIPPED, order=first + offset)
            if node.is_ironic:
                skipped(result)
                continue
            result.status = REFUSED
            batch.append(Checking(merged[node.nodename], result,
                                  findings.get(node.nodename, []), host.host))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class Numbered(NamedTuple):
    """A described host and the position of its first node in the description order."""

    first: int
    host: Host


def numbered_hosts(hosts: Iterable[Host]) -> Iterator[Numbered]:
    """``hosts`` with their nodes numbered in order, lazily."""
    first = 0
    for host in hosts:
        yield Numbered(first, host)
        first += len(host.nodes)


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last one shorter), taken lazily."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def with_nova_conf(nodes: dict[str, Node], options: DriverOptions,
                   ) -> tuple[dict[str, Node], dict[str, list[preflight.Finding]]]:
    """``nodes`` completed from each one's nova.conf (``options.conf_for``, when
    given), and per node name where its description and nova.conf disagree
    (ironic nodes untouched)."""
    merged, findings = {}, {}
    for name, node in nodes.items():
        conf = options.conf_for(name)
        if conf is None or node.is_ironic:
            merged[name] = node
            continue
        merged[name], findings[name] = conf_check.merge_node(node, conf, options.target)
    return merged, findings
