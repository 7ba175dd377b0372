"""Guest NUMA constraints and fitting them onto a host NUMA topology.

``numa_get_constraints`` derives the requested topology from flavor extra
specs and image properties the way nova's API does (``hw:numa_nodes`` splits
vCPUs and RAM evenly, ``hw:cpu_policy=dedicated`` or any ``hw:mem_page_size``
alone create an implicit one-cell topology). ``fit_instance_to_host`` maps
instance cells onto host cells (every permutation, first fit wins), checking
memory / page sizes, shared-CPU overcommit limits, pinning with the thread
policy, and PCI NUMA affinity. ``apply_usage`` records a fitted instance on
the host cells for the next instance of a multi-create.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from nova_reshape.nova.cpuset import parse_cpuset
from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.pci import NumaPlacement, PciDeviceStats, PciRequest

PAGE_SMALL, PAGE_LARGE, PAGE_ANY = -1, -2, -3
_PAGE_WORDS = {"small": PAGE_SMALL, "large": PAGE_LARGE, "any": PAGE_ANY}
_UNITS_KB = {"": 1, "K": 1, "KB": 1, "KIB": 1, "M": 1024, "MB": 1024, "MIB": 1024,
             "G": 1024 ** 2, "GB": 1024 ** 2, "GIB": 1024 ** 2}


@dataclass
class MemPage:
    size_kb: int
    total: int
    used: int = 0
    reserved: int = 0

    @property
    def free(self) -> int:
        return self.total - self.used - self.reserved


@dataclass
class NUMACell:
    """One host NUMA cell (nova's NUMACell); usage fields change on consume."""

    id: int
    cpuset: frozenset[int]
    pcpuset: frozenset[int]
    memory: int
    cpu_usage: int = 0
    memory_usage: int = 0
    pinned_cpus: set[int] = field(default_factory=set)
    siblings: list[frozenset[int]] = field(default_factory=list)
    mempages: list[MemPage] = field(default_factory=list)
    socket: int | None = None

    @property
    def avail_pcpus(self) -> int:
        return len(self.pcpuset - self.pinned_cpus)

    @property
    def avail_memory(self) -> int:
        return self.memory - self.memory_usage

    @property
    def has_smt(self) -> bool:
        return any(len(s) >= 2 for s in self.siblings)


@dataclass
class NUMATopology:
    cells: list[NUMACell]

    def usage_copy(self) -> NUMATopology:
        """A copy :func:`apply_usage` may change without touching this one: what it
        changes is new (each cell, its pinned CPUs, its pages); the frozen CPU sets
        and the siblings are shared."""
        return NUMATopology([replace(cell, pinned_cpus=set(cell.pinned_cpus),
                                     mempages=[replace(page) for page in cell.mempages])
                             for cell in self.cells])


@dataclass
class InstanceCell:
    """One requested guest cell; ``host_id``/``pinning`` are set once fitted."""

    index: int
    cpuset: frozenset[int]
    pcpuset: frozenset[int]
    memory: int
    pagesize: int | None = None
    cpu_policy: str | None = None
    thread_policy: str | None = None
    host_id: int | None = None
    pinning: dict[int, int] = field(default_factory=dict)
    reserved_pcpus: frozenset[int] = frozenset()


@dataclass
class InstanceTopology:
    cells: list[InstanceCell]
    emulator_threads_isolated: bool = False

    @property
    def cpu_pinning_requested(self) -> bool:
        return any(c.cpu_policy in ("dedicated", "mixed") for c in self.cells)

    @property
    def thread_policy(self) -> str | None:
        return self.cells[0].thread_policy if self.cells else None


def cpu_spec(spec: Any) -> frozenset[int]:
    """A CPU set of a flavor or image (``"0-3,^2,8"``); ScenarioError when nova refuses it."""
    try:
        return parse_cpuset(str(spec))
    except ValueError as exc:
        raise ScenarioError(f"invalid CPU set {spec!r}: {exc}") from exc


def parse_page_size(value: Any) -> int:
    word = str(value).strip().upper()
    if word.lower() in _PAGE_WORDS:
        return _PAGE_WORDS[word.lower()]
    digits = word.rstrip("KMGIB")
    unit = word[len(digits):]
    if not digits.isdigit() or unit not in _UNITS_KB or int(digits) <= 0:
        raise ScenarioError(f"invalid memory page size {value!r}")
    return int(digits) * _UNITS_KB[unit]


def flavor_image_values(extra_specs: Mapping[str, str], props: Mapping[str, Any],
                        key: str) -> tuple[Any, Any]:
    """``(flavor hw:<key>, image hw_<key>)``, either None when absent."""
    return extra_specs.get(f"hw:{key}"), props.get(f"hw_{key}")


def unique_flavor_image_value(extra_specs: Mapping[str, str], props: Mapping[str, Any],
                              key: str) -> Any:
    """The flavor's or the image's ``key``; both set and different is a conflict."""
    flavor_value, image_value = flavor_image_values(extra_specs, props, key)
    if flavor_value is not None and image_value is not None and \
            str(flavor_value) != str(image_value):
        raise ScenarioError(
            f"flavor hw:{key}={flavor_value} conflicts with image hw_{key}={image_value}")
    return flavor_value if flavor_value is not None else image_value


def numa_get_constraints(vcpus: int, memory_mb: int, extra_specs: Mapping[str, str],
                         props: Mapping[str, Any]) -> InstanceTopology | None:
    """The requested guest NUMA topology, or None when nothing asks for one."""
    nodes_value = unique_flavor_image_value(extra_specs, props, "numa_nodes")
    flavor_page, image_page = flavor_image_values(extra_specs, props, "mem_page_size")
    pagesize = None
    if flavor_page is not None:
        pagesize = parse_page_size(flavor_page)
        if image_page is not None and pagesize in (PAGE_LARGE, PAGE_ANY):
            pagesize = parse_page_size(image_page)
    elif image_page is not None:
        raise ScenarioError("image hw_mem_page_size is forbidden by the flavor")
    policy = _cpu_policy(extra_specs, props)
    thread_policy = unique_flavor_image_value(extra_specs, props, "cpu_thread_policy")
    if thread_policy is not None and thread_policy not in ("prefer", "isolate", "require"):
        raise ScenarioError(f"invalid CPU thread policy {thread_policy!r}")
    if thread_policy is not None and policy not in ("dedicated", "mixed"):
        raise ScenarioError("a CPU thread policy needs hw:cpu_policy=dedicated")
    emulator = extra_specs.get("hw:emulator_threads_policy") == "isolate"

    if nodes_value is not None:
        try:
            nodes = int(nodes_value)
        except ValueError as exc:
            raise ScenarioError(f"invalid hw:numa_nodes {nodes_value!r}") from exc
        if nodes < 1 or nodes > vcpus:
            raise ScenarioError(f"hw:numa_nodes must be between 1 and {vcpus}")
        cells = _manual_cells(nodes, vcpus, memory_mb, extra_specs, props) or \
            _auto_cells(nodes, vcpus, memory_mb)
    elif pagesize is not None or policy in ("dedicated", "mixed"):
        cells = [(frozenset(range(vcpus)), memory_mb)]
    else:
        return None
    dedicated = _dedicated_cpus(policy, vcpus, extra_specs, props)
    result = []
    for index, (cpus, memory) in enumerate(cells):
        pcpus = cpus & dedicated
        result.append(InstanceCell(index=index, cpuset=cpus - pcpus, pcpuset=pcpus,
                                   memory=memory, pagesize=pagesize,
                                   cpu_policy=policy, thread_policy=thread_policy))
    return InstanceTopology(cells=result, emulator_threads_isolated=emulator)


def _cpu_policy(extra_specs: Mapping[str, str], props: Mapping[str, Any]) -> str | None:
    flavor_value, image_value = flavor_image_values(extra_specs, props, "cpu_policy")
    for value in (flavor_value, image_value):
        if value is not None and value not in ("shared", "dedicated", "mixed"):
            raise ScenarioError(f"invalid CPU policy {value!r}")
    if flavor_value == "shared" and image_value in ("dedicated", "mixed"):
        raise ScenarioError("image hw_cpu_policy conflicts with flavor hw:cpu_policy=shared")
    return flavor_value or image_value


def _dedicated_cpus(policy: str | None, vcpus: int, extra_specs: Mapping[str, str],
                    props: Mapping[str, Any]) -> frozenset[int]:
    if policy == "dedicated":
        return frozenset(range(vcpus))
    if policy != "mixed":
        return frozenset()
    mask = extra_specs.get("hw:cpu_dedicated_mask") or extra_specs.get(
        "hw:cpu_realtime_mask") or props.get("hw_cpu_realtime_mask")
    if not mask:
        raise ScenarioError("hw:cpu_policy=mixed needs hw:cpu_dedicated_mask")
    if str(mask).lstrip().startswith("^"):
        dedicated = frozenset(range(vcpus)) - cpu_spec(str(mask).replace("^", ""))
    else:
        dedicated = cpu_spec(mask)
    if not dedicated or len(dedicated) >= vcpus or max(dedicated) >= vcpus:
        raise ScenarioError(f"invalid dedicated CPU mask {mask!r}")
    return frozenset(dedicated)


def _auto_cells(nodes: int, vcpus: int, memory_mb: int) -> list[tuple[frozenset[int], int]]:
    if vcpus % nodes or memory_mb % nodes:
        raise ScenarioError(
            f"cannot split {vcpus} vCPUs and {memory_mb} MB evenly over {nodes} NUMA nodes")
    per_cpu, per_mem = vcpus // nodes, memory_mb // nodes
    return [(frozenset(range(i * per_cpu, (i + 1) * per_cpu)), per_mem) for i in range(nodes)]


def _manual_cells(nodes: int, vcpus: int, memory_mb: int, extra_specs: Mapping[str, str],
                  props: Mapping[str, Any]) -> list[tuple[frozenset[int], int]] | None:
    cpus = [extra_specs.get(f"hw:numa_cpus.{i}") for i in range(nodes)]
    mems = [extra_specs.get(f"hw:numa_mem.{i}") for i in range(nodes)]
    if all(c is None for c in cpus) and all(m is None for m in mems):
        cpus = list(props.get("hw_numa_cpus") or [None] * nodes)
        mems = list(props.get("hw_numa_mem") or [None] * nodes)
        if all(c is None for c in cpus) and all(m is None for m in mems):
            return None
    if len(cpus) != nodes or len(mems) != nodes or None in cpus or None in mems:
        raise ScenarioError("hw:numa_cpus.N and hw:numa_mem.N must be given for every node")
    cells = [(frozenset(cpu_spec(c)), int(m)) for c, m in zip(cpus, mems, strict=True)]
    used = [cpu for cell_cpus, _ in cells for cpu in cell_cpus]
    if sorted(used) != list(range(vcpus)) or sum(m for _, m in cells) != memory_mb:
        raise ScenarioError("hw:numa_cpus/hw:numa_mem must cover every vCPU and all memory once")
    return cells


@dataclass(frozen=True)
class Limits:
    cpu_allocation_ratio: float
    ram_allocation_ratio: float


def fit_instance_to_host(host: NUMATopology, instance: InstanceTopology,
                         limits: Limits | None = None,
                         pci_requests: list[PciRequest] | None = None,
                         pci_stats: PciDeviceStats | None = None,
                         packing: bool = False) -> tuple[InstanceTopology | None, str]:
    """Fit every instance cell on a distinct host cell; (fitted, "") or (None, reason)."""
    if len(host.cells) < len(instance.cells):
        return None, (f"host has {len(host.cells)} NUMA cell(s), "
                      f"the request needs {len(instance.cells)}")
    cells = sorted(host.cells, key=lambda c: (len(c.cpuset) - c.cpu_usage + c.avail_pcpus,
                                              c.avail_memory), reverse=not packing)
    if not pci_requests and pci_stats is not None and pci_stats.pools:
        with_pci = {p.get("numa_node") for p in pci_stats.pools}
        cells.sort(key=lambda c: c.id in with_pci)
    reserved = 1 if instance.emulator_threads_isolated else 0
    last_reason = "no combination of host cells fits"
    for combo in itertools.permutations(cells, len(instance.cells)):
        fitted = []
        for host_cell, inst_cell in zip(combo, instance.cells, strict=True):
            cell, reason = _fit_cell(host_cell, inst_cell, limits, reserved)
            if cell is None:
                last_reason = f"host cell {host_cell.id}: {reason}"
                break
            fitted.append(cell)
        else:
            if pci_requests:
                placement = NumaPlacement(
                    cell_ids=frozenset(c.id for c in combo),
                    sockets=frozenset(c.socket for c in combo if c.socket is not None),
                    socket_of={c.id: c.socket for c in host.cells})
                if pci_stats is None or not pci_stats.support_requests(
                        pci_requests, placement):
                    last_reason = "PCI devices are not available on the chosen NUMA cells"
                    continue
            return InstanceTopology(fitted, instance.emulator_threads_isolated), ""
    return None, last_reason


def _pick_pagesize(host_cell: NUMACell, inst_cell: InstanceCell) -> int | None:
    sizes = sorted(p.size_kb for p in host_cell.mempages)
    if not sizes:
        return None
    wanted = inst_cell.pagesize
    if wanted == PAGE_SMALL:
        candidates = sizes[:1]
    elif wanted == PAGE_LARGE:
        candidates = list(reversed(sizes[1:]))
    elif wanted == PAGE_ANY:
        candidates = list(reversed(sizes))
    else:
        candidates = [wanted] if wanted in sizes else []
    need_kb = inst_cell.memory * 1024
    for size in candidates:
        page = next(p for p in host_cell.mempages if p.size_kb == size)
        if need_kb % size == 0 and page.free * size >= need_kb:
            return size
    return None


def _fit_cell(host_cell: NUMACell, inst_cell: InstanceCell, limits: Limits | None,
              reserved: int) -> tuple[InstanceCell | None, str]:
    cell = replace(inst_cell, host_id=host_cell.id, pinning={})
    if inst_cell.pagesize:
        size = _pick_pagesize(host_cell, inst_cell)
        if size is None:
            return None, f"no free pages of the requested size for {inst_cell.memory} MB"
        cell.pagesize = size
    elif host_cell.mempages:
        smallest = min(host_cell.mempages, key=lambda p: p.size_kb)
        if (smallest.total - smallest.reserved) * smallest.size_kb < inst_cell.memory * 1024:
            return None, f"{inst_cell.memory} MB exceeds the cell's memory"
    elif inst_cell.memory > host_cell.memory:
        return None, f"{inst_cell.memory} MB exceeds the cell's {host_cell.memory} MB"
    if inst_cell.pcpuset and len(inst_cell.pcpuset) + reserved > len(host_cell.pcpuset):
        return None, (f"needs {len(inst_cell.pcpuset) + reserved} dedicated CPUs, the cell "
                      f"has {len(host_cell.pcpuset)}")
    if len(inst_cell.cpuset) > len(host_cell.cpuset):
        return None, (f"needs {len(inst_cell.cpuset)} shared CPUs, the cell has "
                      f"{len(host_cell.cpuset)}")
    if inst_cell.pcpuset:
        if len(inst_cell.pcpuset) + reserved > host_cell.avail_pcpus:
            return None, (f"needs {len(inst_cell.pcpuset) + reserved} free dedicated CPUs, "
                          f"{host_cell.avail_pcpus} free")
        if inst_cell.memory > host_cell.avail_memory:
            return None, (f"pinned instance needs {inst_cell.memory} MB, "
                          f"{host_cell.avail_memory} MB free")
        if not _pin(host_cell, cell, reserved):
            return None, f"cannot pin CPUs with thread policy {inst_cell.thread_policy}"
    elif limits is not None:
        cpu_limit = len(host_cell.cpuset) * limits.cpu_allocation_ratio
        if host_cell.cpu_usage + len(inst_cell.cpuset) > cpu_limit:
            return None, f"CPU usage would exceed the cell limit {cpu_limit:g}"
        ram_limit = host_cell.memory * limits.ram_allocation_ratio
        if host_cell.memory_usage + inst_cell.memory > ram_limit:
            return None, f"memory usage would exceed the cell limit {ram_limit:g} MB"
    return cell, ""


def _cores(host_cell: NUMACell) -> tuple[list[list[int]], list[int]]:
    """Free threads per physical core of the dedicated CPU set."""
    free = host_cell.pcpuset - host_cell.pinned_cpus
    seen: set[int] = set()
    cores = []
    for sibling_set in host_cell.siblings:
        core = sibling_set & host_cell.pcpuset
        seen |= core
        if core:
            cores.append((sorted(core & free), len(core)))
    cores.extend(([cpu], 1) for cpu in sorted(host_cell.pcpuset - seen) if cpu in free)
    return [threads for threads, _ in cores], [size for _, size in cores]


def _pin(host_cell: NUMACell, cell: InstanceCell, reserved: int) -> bool:
    wanted = len(cell.pcpuset) + reserved
    free_threads, core_sizes = _cores(host_cell)
    chosen: list[int] = []
    extra: set[int] = set()
    policy = cell.thread_policy or "prefer"
    if policy == "isolate":
        whole = [t for t, size in zip(free_threads, core_sizes, strict=True)
                 if t and len(t) == size]
        if len(whole) < wanted:
            return False
        for threads in whole[:wanted]:
            chosen.append(threads[0])
            extra.update(threads[1:])
    else:
        usable = free_threads
        if policy == "require":
            usable = [t for t, size in zip(free_threads, core_sizes, strict=True)
                      if size >= 2 and len(t) >= 2]
        for threads in sorted(usable, key=len, reverse=True):
            chosen.extend(threads[:wanted - len(chosen)])
            if len(chosen) == wanted:
                break
        if len(chosen) < wanted:
            return False
    guest_cpus = sorted(cell.pcpuset)
    cell.pinning = dict(zip(guest_cpus, chosen, strict=False))
    cell.reserved_pcpus = frozenset(chosen[len(guest_cpus):]) | frozenset(extra)
    return True


def apply_usage(host: NUMATopology, instance: InstanceTopology) -> None:
    """Record a fitted instance's CPUs, memory and pages on the host cells."""
    by_id = {c.id: c for c in host.cells}
    for cell in instance.cells:
        host_cell = by_id[cell.host_id]
        host_cell.cpu_usage += len(cell.cpuset)
        host_cell.memory_usage += cell.memory
        host_cell.pinned_cpus |= set(cell.pinning.values()) | set(cell.reserved_pcpus)
        if cell.pagesize and cell.pagesize > 0:
            for page in host_cell.mempages:
                if page.size_kb == cell.pagesize:
                    page.used += cell.memory * 1024 // cell.pagesize


def _int_list(value: Any, what: str) -> list[int]:
    if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ScenarioError(f"NUMA cell {what} must be a list of integers")
    return list(value)


def load_host_topology(raw: Any) -> NUMATopology | None:
    """Scenario ``numa_topology`` -> NUMATopology (defaults: no SMT, 4 KiB pages)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or not isinstance(raw.get("cells"), list):
        raise ScenarioError("numa_topology must be an object with a cells list")
    known = {"id", "cpuset", "pcpuset", "memory", "cpu_usage", "memory_usage",
             "pinned_cpus", "siblings", "mempages", "socket"}
    cells = []
    for index, entry in enumerate(raw["cells"]):
        if not isinstance(entry, Mapping):
            raise ScenarioError("numa_topology cells must be objects")
        unknown = set(entry) - known
        if unknown:
            raise ScenarioError(f"unknown NUMA cell key(s): {', '.join(sorted(unknown))}")
        cpuset = frozenset(_int_list(entry.get("cpuset", []), "cpuset"))
        pcpuset = frozenset(_int_list(entry.get("pcpuset", []), "pcpuset"))
        memory = entry.get("memory", 0)
        if not isinstance(memory, int) or memory < 0:
            raise ScenarioError("NUMA cell memory must be an integer >= 0 (MB)")
        if "siblings" in entry:
            if not isinstance(entry["siblings"], list):
                raise ScenarioError("NUMA cell siblings must be a list of CPU lists")
            siblings = [frozenset(_int_list(s, "siblings")) for s in entry["siblings"]]
        else:
            siblings = [frozenset({cpu}) for cpu in sorted(cpuset | pcpuset)]
        if "mempages" in entry:
            pages = []
            for page in entry["mempages"]:
                if not isinstance(page, Mapping) or "size_kb" not in page:
                    raise ScenarioError("NUMA mempages entries need size_kb")
                try:
                    pages.append(MemPage(int(page["size_kb"]), int(page.get("total", 0)),
                                         int(page.get("used", 0)),
                                         int(page.get("reserved", 0))))
                except (TypeError, ValueError) as exc:
                    raise ScenarioError(f"invalid NUMA mempage {page!r}") from exc
        else:
            pages = [MemPage(4, memory * 1024 // 4)]
        cells.append(NUMACell(
            id=int(entry.get("id", index)), cpuset=cpuset, pcpuset=pcpuset, memory=memory,
            cpu_usage=int(entry.get("cpu_usage", 0)),
            memory_usage=int(entry.get("memory_usage", 0)),
            pinned_cpus=set(_int_list(entry.get("pinned_cpus", []), "pinned_cpus")),
            siblings=siblings, mempages=pages, socket=entry.get("socket")))
    return NUMATopology(cells)
