"""Compute-node catalogues: what the manager knows about hosts beyond Placement.

nova loads HostStates from its compute database for the uuids Placement
returned (``provider_summaries`` keys); child providers and sharing
providers match no compute node. nova-reshape has no compute database, so a
catalogue stands in for it:

* :class:`StaticNodes`: a fixed ``{compute node uuid: scenario host entry}``
  (scheduler-scenario.md vocabulary: host, nodename, cell, stats, service
  state, NUMA, PCI pools ...). Only those uuids are compute nodes.
* :class:`PlacementNodes`: every root provider of Placement is a compute
  node named after its provider (nova names the root provider after the
  hypervisor hostname); resource figures come from the candidates'
  summaries. Names are read with one ``GET /resource_providers`` and cached
  until an unknown uuid shows up.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from nova_reshape.report import NESTED_PROVIDER_API_VERSION


class NodeCatalog(Protocol):
    def entries(self, uuids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """``{uuid: host entry}`` of the compute nodes among ``uuids`` (None: all)."""
        ...

    def lookup(self, host: str | None, node: str | None) -> list[str]:
        """Uuids of the compute nodes of ``host`` (and ``node``, when given)."""
        ...


def _matches(entry: Mapping[str, Any], host: str | None, node: str | None) -> bool:
    entry_host = entry.get("host")
    entry_node = entry.get("nodename", entry_host)
    return (host is None or entry_host == host) and (node is None or entry_node == node)


class StaticNodes:
    """A fixed catalogue ``{uuid: host entry}``."""

    def __init__(self, nodes: Mapping[str, Mapping[str, Any]]) -> None:
        self.nodes = {uuid: dict(entry) for uuid, entry in nodes.items()}

    def entries(self, uuids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        if uuids is None:
            return {uuid: dict(entry) for uuid, entry in self.nodes.items()}
        return {uuid: dict(self.nodes[uuid]) for uuid in uuids if uuid in self.nodes}

    def lookup(self, host: str | None, node: str | None) -> list[str]:
        return [uuid for uuid, entry in self.nodes.items() if _matches(entry, host, node)]


class PlacementNodes:
    """Root providers of Placement as compute nodes, named after the provider."""

    def __init__(self, report: Any, context: Any = None) -> None:
        self.report = report
        self.context = context
        self._names: dict[str, str] = {}
        self._lock = threading.Lock()

    def _refresh(self) -> None:
        response = self.report.get("/resource_providers", version=NESTED_PROVIDER_API_VERSION,
                                   context=self.context)
        if response.status_code != 200:
            return
        self._names = {rp["uuid"]: rp["name"] for rp in response.json()["resource_providers"]
                       if rp.get("parent_provider_uuid") is None}

    def _ensure(self, uuids: Sequence[str] | None) -> dict[str, str]:
        with self._lock:
            if uuids is None or any(uuid not in self._names for uuid in uuids):
                self._refresh()
            return dict(self._names)

    def entries(self, uuids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        names = self._ensure(uuids)
        wanted = names if uuids is None else [uuid for uuid in uuids if uuid in names]
        return {uuid: {"host": names[uuid], "nodename": names[uuid]} for uuid in wanted}

    def lookup(self, host: str | None, node: str | None) -> list[str]:
        names = self._ensure(None)
        return [uuid for uuid, name in names.items()
                if _matches({"host": name, "nodename": name}, host, node)]
