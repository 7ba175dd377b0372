"""Every compute node's final tree for a rebuild, computed in memory.

``placement rebuild`` fills an empty Placement database. Through Placement
that is nova-compute's first start per node (:mod:`.first_start`), then the
migration's run over the described hosts. Both are deterministic given
nova's rows and the descriptions, and the database holds nothing else, so
the same trees can be computed without a single request:

1. each root exactly as the first start writes it, by the same tracker flow
   over an in-memory report client (:func:`.first_start.flat_root`);
2. each described node's migration, by the migration's own pre-flight and
   simulation (:func:`.preflight.check_node`: the driver's shims and the
   root traits on a copy of that root, nothing moved as there is no
   allocation yet), the node completed from its nova.conf as the run does
   (:func:`.stream.batches`) and its root found as the run finds it
   (:func:`.preflight.resolve_root` over a listing of the roots).

:func:`final_trees` returns the trees, or None when any node would be
refused (a finding of the pre-flight or of nova.conf's check, a node
without a root): the caller then runs the real flow, which says it the way
the migration says it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from nova_reshape.compute import preflight, stream
from nova_reshape.compute.first_start import NewNode, creates_root, flat_root
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt.described import DescribedDriver, shims_for
from nova_reshape.virt.host import Host
from nova_reshape.virt.releases import DriverOptions
from placement_wsgi.objects.bulk_load import LoadedProvider

#: Described nodes checked per batch (the driver holds one batch's nodes).
BATCH = 200


@dataclasses.dataclass
class FinalTree:
    """One compute node's tree as the first start and the migration leave it.

    ``order``: its providers' uuids root first, then in the order the
    migration creates them (Placement's id order); ``reshaped``: whether the
    migration wrote anything on it (a root no description covers stays as the
    first start made it); ``host``: the compute node's service host.
    """

    nodename: str
    root: str
    tree: ProviderTree
    order: list[str]
    reshaped: bool = False
    host: str | None = None


def _listing(roots: Sequence[FinalTree]) -> preflight.Listing:
    return preflight.Listing([{"uuid": item.root, "name": item.nodename, "generation": 0,
                               "parent_provider_uuid": None, "root_provider_uuid": item.root}
                              for item in roots])


def final_trees(nodes: Iterable[NewNode], hosts: Iterable[Host],
                options: DriverOptions) -> list[FinalTree] | None:
    """Every node's final tree, in the order of ``nodes`` (see the module); None when
    the migration would refuse any node. ``hosts`` carry no consumers (the rebuild's
    trees are built before any allocation exists)."""
    found = [FinalTree(node.record.hypervisor_hostname, node.record.uuid or "", tree,
                       [node.record.uuid or ""], host=node.record.host)
             for node in nodes if creates_root(node)
             for tree in (flat_root(node),)]
    by_root = {item.root: item for item in found}
    listing = _listing(found)
    driver = DescribedDriver({}, shims_for(options), options)
    refused = False

    def skipped(result: object) -> None:
        """Ironic nodes: nothing to build (their providers are nova-compute's)."""

    for batch in stream.batches(stream.numbered_hosts(hosts), None, options, BATCH, skipped):
        driver.nodes.clear()
        driver.nodes.update((item.node.nodename, item.node) for item in batch)
        for item in batch:
            root, findings = preflight.resolve_root(item.node, listing)
            if root is None or item.conf_findings:
                return None
            final = by_root[root]
            findings, simulation = preflight.check_node(item.node, driver, final.tree, {},
                                                        listing)
            if findings or simulation is None:
                refused = True
                break
            final.tree = simulation.tree_after
            final.order += [provider.uuid for provider in simulation.plan.create]
            final.reshaped = not simulation.plan.empty
        if refused:
            return None
    return found


def providers_of(final: FinalTree) -> list[LoadedProvider]:
    """The node's providers as the bulk load takes them, in :attr:`FinalTree.order`."""
    found = []
    for uuid in final.order:
        data = final.tree.data(uuid)
        found.append(LoadedProvider(data.uuid, data.name, data.parent_uuid,
                                    dict(data.inventory), sorted(data.traits),
                                    sorted(data.aggregates)))
    return found
