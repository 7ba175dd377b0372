"""RequestSpec -> ResourceRequest: the ``GET /allocation_candidates`` query nova sends.

A :class:`ResourceRequest` is a set of request
groups keyed by suffix (``""`` is the unsuffixed group, whose resources may
come from several providers of one tree; a suffixed group must be served by
one provider), plus request-wide parts: ``group_policy``, ``limit``,
``root_required``/``root_forbidden`` and ``same_subtree``.

:func:`from_request_spec` builds it from the flavor (``resources*``,
``trait*``, ``group_policy``, CPU pinning, memory encryption, vTPM, ...),
the image (``traits_required`` and the image halves of those properties),
the RequestGroups that came from outside the flavor
(``spec.requested_resources``: device profiles, ports), PCI aliases when
``pci_in_placement`` is on, the requested destination's aggregates and the
prefilters' root traits. :meth:`ResourceRequest.to_querystring` renders it
exactly as nova does: every ``(key, value)`` pair sorted, then urlencoded.

Choices where nova's behaviour is not pinned down by the facts: an explicit
``resources*:VCPU``/``PCPU`` in the flavor wins over the pinning translation
(nova's API refuses that combination anyway), and an isolated emulator
thread adds one ``PCPU`` for ``mixed`` as it does for ``dedicated``.
"""

from __future__ import annotations

import logging
import math
import re
import uuid as uuid_mod
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlencode

import os_resource_classes
import os_traits

from nova_reshape.scheduler import numa as numa_mod
from nova_reshape.scheduler.errors import SchedulerError
from nova_reshape.scheduler.image import flexible_bool
from nova_reshape.scheduler.pci import PciRequest
from nova_reshape.scheduler.request_group import RequestGroup
from nova_reshape.scheduler.request_spec import RequestSpec

LOG = logging.getLogger(__name__)

#: Microversion of the candidates query (and of the claim that follows it).
ALLOCATION_CANDIDATES_VERSION = "1.36"
#: ``[scheduler] max_placement_results``.
DEFAULT_MAX_PLACEMENT_RESULTS = 1000

SUFFIX = r"[A-Za-z0-9_-]{1,64}"
_RESOURCES_KEY = re.compile(rf"^resources({SUFFIX})?:(.*)$")
_TRAIT_KEY = re.compile(rf"^trait({SUFFIX})?:(.*)$")
_SUFFIX_ONLY = re.compile(rf"^{SUFFIX}$")
_STANDARD_CLASSES = frozenset(os_resource_classes.STANDARDS)
_STANDARD_TRAITS = frozenset(os_traits.get_traits())

#: Hints that make nova drop ``limit`` (it must see every host to honour them).
LIMIT_DROPPING_HINTS = ("group", "same_host", "different_host")

_TPM_VERSION_TRAITS = {"1.2": "COMPUTE_SECURITY_TPM_1_2", "2.0": "COMPUTE_SECURITY_TPM_2_0"}
_TPM_MODEL_TRAITS = {"tpm-tis": "COMPUTE_SECURITY_TPM_TIS", "tpm-crb": "COMPUTE_SECURITY_TPM_CRB"}
_SEV_MODEL_TRAITS = {"amd-sev": "HW_CPU_X86_AMD_SEV", "amd-sev-es": "HW_CPU_X86_AMD_SEV_ES"}
_ADDRESS_SPACE_TRAITS = {"passthrough": "COMPUTE_ADDRESS_SPACE_PASSTHROUGH",
                         "emulate": "COMPUTE_ADDRESS_SPACE_EMULATED"}


class ResourceRequestError(SchedulerError):
    """The request cannot be expressed as a Placement query (conflicting groups ...)."""


def is_valid_resource_class(name: str) -> bool:
    """Standard classes and ``CUSTOM_[A-Z0-9_]+``."""
    return name in _STANDARD_CLASSES or bool(re.fullmatch(r"CUSTOM_[A-Z0-9_]+", name))


def normalize_name(name: str) -> str:
    """A trait or class name as Placement accepts it: standard, else ``CUSTOM_<UPPER_>``."""
    upper = re.sub(r"[^A-Z0-9_]", "_", str(name).strip().upper())
    if upper in _STANDARD_TRAITS or upper in _STANDARD_CLASSES or upper.startswith("CUSTOM_"):
        return upper
    return "CUSTOM_" + upper


class ResourceRequest:
    """Request groups by suffix plus the request-wide query parameters."""

    def __init__(self, limit: int | None = DEFAULT_MAX_PLACEMENT_RESULTS) -> None:
        self._groups: dict[str, RequestGroup] = {
            "": RequestGroup(requester_id=None, use_same_provider=False)}
        #: Suffixes of groups that came from the flavor's extra specs.
        self.flavor_suffixes: set[str] = set()
        self.group_policy: str | None = None
        self.limit = limit
        self.root_required: set[str] = set()
        self.root_forbidden: set[str] = set()
        self.same_subtree: list[list[str]] = []
        #: hw:cpu_policy asked for PCPU: nova then also tries the VCPU fallback query.
        self.cpu_pinning_requested = False

    # -- groups -----------------------------------------------------------

    @property
    def unsuffixed(self) -> RequestGroup:
        return self._groups[""]

    def group(self, suffix: str) -> RequestGroup:
        """The group of ``suffix``, created (``use_same_provider``) on first use."""
        if suffix not in self._groups:
            self._groups[suffix] = RequestGroup(requester_id=suffix, use_same_provider=True)
        return self._groups[suffix]

    def groups(self) -> dict[str, RequestGroup]:
        """Suffix -> group (``""`` first, then in insertion order)."""
        return dict(self._groups)

    def add_request_group(self, group: RequestGroup) -> None:
        """Add a group from outside the flavor; its requester_id becomes its suffix."""
        suffix = group.requester_id
        if not suffix or not _SUFFIX_ONLY.match(suffix):
            raise ResourceRequestError(
                f"request group requester_id {suffix!r} is not a valid group suffix")
        if suffix in self._groups:
            raise ResourceRequestError(
                f"duplicate request group suffix {suffix!r} (flavor and {suffix} collide)")
        if group.is_empty():
            raise ResourceRequestError(f"request group {suffix!r} asks for nothing")
        self._groups[suffix] = group

    def merged_resources(self) -> dict[str, int]:
        """Total amount per class over every group."""
        merged: dict[str, int] = {}
        for group in self._groups.values():
            for resource_class, amount in group.resources.items():
                merged[resource_class] = merged.get(resource_class, 0) + amount
        return merged

    def _mentions(self, *classes: str) -> bool:
        return any(rc in group.resources for group in self._groups.values() for rc in classes)

    def strip_zeros(self) -> None:
        """Drop zero amounts (``resources:VCPU=0`` removes the class) and emptied groups."""
        for suffix, group in list(self._groups.items()):
            group.resources = {rc: n for rc, n in group.resources.items() if n}
            if suffix and group.is_empty():
                del self._groups[suffix]
                self.flavor_suffixes.discard(suffix)

    # -- query ------------------------------------------------------------

    def query_params(self) -> list[tuple[str, str]]:
        """Sorted ``(key, value)`` pairs of the query."""
        params: list[tuple[str, str]] = []
        if self.limit is not None:
            params.append(("limit", str(self.limit)))
        if self.group_policy is not None:
            params.append(("group_policy", self.group_policy))
        root = _traits_value(self.root_required, self.root_forbidden)
        if root:
            params.append(("root_required", root))
        for suffixes in self.same_subtree:
            params.append(("same_subtree", ",".join(suffixes)))
        for suffix, group in self._groups.items():
            if group.resources:
                params.append((f"resources{suffix}", ",".join(
                    f"{rc}:{amount}" for rc, amount in sorted(group.resources.items()))))
            traits = _traits_value(group.required_traits, group.forbidden_traits)
            if traits:
                params.append((f"required{suffix}", traits))
            for any_of in group.aggregates:
                params.append((f"member_of{suffix}", "in:" + ",".join(sorted(any_of))))
            if group.forbidden_aggregates:
                params.append((f"member_of{suffix}",
                               "!in:" + ",".join(sorted(group.forbidden_aggregates))))
            if group.in_tree:
                params.append((f"in_tree{suffix}", group.in_tree))
        return sorted(params)

    def to_querystring(self) -> str:
        """The urlencoded query (``,``, ``:`` and ``!`` percent-encoded)."""
        return urlencode(self.query_params())

    def __repr__(self) -> str:
        return f"<ResourceRequest {self.to_querystring()}>"


def _traits_value(required: Iterable[str], forbidden: Iterable[str]) -> str:
    return ",".join(sorted(required) + ["!" + name for name in sorted(forbidden)])


# -- building from a RequestSpec ----------------------------------------------

NodeLookup = Callable[[str | None, str | None], list[str]]


def from_request_spec(spec: RequestSpec, *,
                      max_placement_results: int = DEFAULT_MAX_PLACEMENT_RESULTS,
                      translate_pinning: bool = True, pci_in_placement: bool = False,
                      require_owner_nova: bool = False,
                      compute_nodes: NodeLookup | None = None) -> ResourceRequest:
    """The ResourceRequest nova builds for ``spec``.

    ``translate_pinning=False`` builds the VCPU fallback query (no ``PCPU``
    and no hyperthreading trait). ``compute_nodes(host, node)`` returns the
    compute node (root provider) uuids of a forced/requested host or node:
    exactly one puts ``in_tree`` on the unsuffixed group, several drop
    ``limit``. ``require_owner_nova`` adds ``OWNER_NOVA`` to PCI groups
    (master's prefilter; the root half is in ``spec.root_required``).
    """
    request = ResourceRequest(limit=max_placement_results)
    flavor = spec.flavor
    extra_specs = {str(k): str(v) for k, v in flavor.extra_specs.items()}
    props = spec.image.properties
    _apply_extra_specs(request, extra_specs)
    for trait in props.get("traits_required") or []:
        request.unsuffixed.add_trait(str(trait), "required")
    if translate_pinning:
        _translate_pinning(request, spec, extra_specs, props)
    _translate_features(request, extra_specs, props)
    for group in spec.requested_resources:
        request.add_request_group(group)
    if pci_in_placement:
        for group in pci_request_groups(spec.pci_requests, require_owner_nova):
            request.add_request_group(group)
    _add_flavor_amounts(request, spec)
    _default_group_policy(request)
    _apply_destination(request, spec, compute_nodes)
    request.root_required |= set(spec.root_required)
    request.root_forbidden |= set(spec.root_forbidden)
    request.strip_zeros()
    return request


def _apply_extra_specs(request: ResourceRequest, extra_specs: Mapping[str, str]) -> None:
    for key, value in extra_specs.items():
        if key == "group_policy":
            if value in ("none", "isolate"):
                request.group_policy = value
            else:
                LOG.warning("Invalid group_policy %r ignored", value)
            continue
        match = _RESOURCES_KEY.match(key)
        if match:
            suffix, resource_class = match.group(1) or "", match.group(2)
            amount = _amount(resource_class, value)
            if amount is None:
                continue
            if suffix:
                request.flavor_suffixes.add(suffix)
            request.group(suffix).add_resource(resource_class, amount)
            continue
        match = _TRAIT_KEY.match(key)
        if match:
            suffix = match.group(1) or ""
            if suffix:
                request.flavor_suffixes.add(suffix)
            request.group(suffix).add_trait(match.group(2), value)


def _amount(resource_class: str, value: str) -> int | None:
    """A valid ``resources*`` amount, or None (logged and ignored) as nova does."""
    if not is_valid_resource_class(resource_class):
        LOG.warning("Resource class %r in the flavor is neither standard nor CUSTOM_*; "
                    "ignored", resource_class)
        return None
    try:
        amount = int(value)
    except ValueError:
        LOG.warning("Resource amount %r for %s is not an integer; ignored", value,
                    resource_class)
        return None
    if amount < 0:
        LOG.warning("Resource amount %d for %s is negative; ignored", amount, resource_class)
        return None
    return amount


def _translate_pinning(request: ResourceRequest, spec: RequestSpec,
                       extra_specs: Mapping[str, str], props: Mapping[str, Any]) -> None:
    """hw:cpu_policy dedicated/mixed -> PCPU (+ VCPU for mixed) and thread-policy traits."""
    if request._mentions("VCPU", "PCPU"):
        return
    topology = spec.numa_topology or numa_mod.numa_get_constraints(
        spec.flavor.vcpus, spec.flavor.memory_mb, extra_specs, props)
    if topology is None or not topology.cells:
        return
    policy = topology.cells[0].cpu_policy
    if policy not in ("dedicated", "mixed"):
        return
    if policy == "dedicated":
        pcpus, vcpus = spec.flavor.vcpus, 0
    else:
        pcpus = sum(len(cell.pcpuset) for cell in topology.cells)
        vcpus = spec.flavor.vcpus - pcpus
    if topology.emulator_threads_isolated:
        pcpus += 1
    group = request.unsuffixed
    group.add_resource("PCPU", pcpus)
    if vcpus:
        group.add_resource("VCPU", vcpus)
    request.cpu_pinning_requested = True
    thread_policy = topology.thread_policy
    if thread_policy == "isolate":
        group.add_trait("HW_CPU_HYPERTHREADING", "forbidden")
    elif thread_policy == "require":
        group.add_trait("HW_CPU_HYPERTHREADING", "required")


def _flavor_or_image(extra_specs: Mapping[str, str], props: Mapping[str, Any],
                     spec_key: str, prop_key: str) -> Any:
    value = extra_specs.get(spec_key)
    return value if value is not None else props.get(prop_key)


def _translate_features(request: ResourceRequest, extra_specs: Mapping[str, str],
                        props: Mapping[str, Any]) -> None:
    """Memory encryption, pmem, vTPM, secure boot, address space, firmware, PCI affinity."""
    group = request.unsuffixed
    required = group.required_traits
    encryption = _flavor_or_image(extra_specs, props, "hw:mem_encryption", "hw_mem_encryption")
    if encryption is not None and flexible_bool(encryption):
        group.add_resource("MEM_ENCRYPTION_CONTEXT", 1)
        model = _flavor_or_image(extra_specs, props, "hw:mem_encryption_model",
                                 "hw_mem_encryption_model") or "amd-sev"
        trait = _SEV_MODEL_TRAITS.get(str(model))
        if trait is None:
            raise ResourceRequestError(f"unknown memory encryption model {model!r}")
        required.add(trait)
    pmem = extra_specs.get("hw:pmem")
    if pmem:
        for label in (part.strip() for part in pmem.split(",")):
            if label:
                name = "CUSTOM_PMEM_NAMESPACE_" + re.sub(r"[^A-Z0-9_]", "_", label.upper())
                group.add_resource(name, group.resources.get(name, 0) + 1)
    version = _flavor_or_image(extra_specs, props, "hw:tpm_version", "hw_tpm_version")
    if version is not None:
        if str(version) not in _TPM_VERSION_TRAITS:
            raise ResourceRequestError(f"unknown vTPM version {version!r}")
        required.add(_TPM_VERSION_TRAITS[str(version)])
        model = _flavor_or_image(extra_specs, props, "hw:tpm_model", "hw_tpm_model")
        if model is not None:
            if str(model) not in _TPM_MODEL_TRAITS:
                raise ResourceRequestError(f"unknown vTPM model {model!r}")
            required.add(_TPM_MODEL_TRAITS[str(model)])
    if _flavor_or_image(extra_specs, props, "os:secure_boot", "os_secure_boot") == "required":
        required.add("COMPUTE_SECURITY_UEFI_SECURE_BOOT")
    mode = _flavor_or_image(extra_specs, props, "hw:maxphysaddr_mode", "hw_maxphysaddr_mode")
    if mode is not None and str(mode) in _ADDRESS_SPACE_TRAITS:
        required.add(_ADDRESS_SPACE_TRAITS[str(mode)])
    if flexible_bool(props.get("hw_firmware_stateless", False)):
        required.add("COMPUTE_SECURITY_STATELESS_FIRMWARE")
    affinity = _flavor_or_image(extra_specs, props, "hw:pci_numa_affinity_policy",
                                "hw_pci_numa_affinity_policy")
    if affinity == "socket":
        required.add("COMPUTE_SOCKET_PCI_NUMA_AFFINITY")


def pci_request_groups(pci_requests: Iterable[PciRequest],
                       require_owner_nova: bool = False) -> list[RequestGroup]:
    """``count`` groups of ``{RC: 1}`` per flavor-alias PCI request (pci_in_placement).

    requester_id is ``<request_id>-<i>``; a request without an id gets a
    fresh uuid (stored on it, so the provider mapping can be matched back).
    Requests without an alias (neutron ports) are not translated. The class
    is the alias' ``resource_class`` (normalized) or
    ``CUSTOM_PCI_<VENDOR>_<PRODUCT>``; traits come from its ``traits``.
    """
    groups = []
    for pci_request in pci_requests:
        if not pci_request.alias_name:
            continue
        if len(pci_request.spec) != 1:
            raise ResourceRequestError(
                f"PCI alias {pci_request.alias_name} has {len(pci_request.spec)} specs; "
                "only single-spec aliases can be scheduled in placement")
        alias_spec = pci_request.spec[0]
        if alias_spec.get("resource_class"):
            resource_class = normalize_name(alias_spec["resource_class"])
        else:
            vendor, product = alias_spec.get("vendor_id"), alias_spec.get("product_id")
            if not vendor or not product:
                raise ResourceRequestError(
                    f"PCI alias {pci_request.alias_name} names neither a resource_class nor "
                    "a vendor_id and product_id")
            resource_class = f"CUSTOM_PCI_{vendor}_{product}".upper()
        traits = {normalize_name(t) for t in str(alias_spec.get("traits", "")).split(",")
                  if t.strip()}
        if require_owner_nova:
            traits.add("OWNER_NOVA")
        if pci_request.request_id is None:
            pci_request.request_id = str(uuid_mod.uuid4())
        for index in range(pci_request.count):
            groups.append(RequestGroup(
                requester_id=f"{pci_request.request_id}-{index}", use_same_provider=True,
                resources={resource_class: 1}, required_traits=set(traits)))
    return groups


def _add_flavor_amounts(request: ResourceRequest, spec: RequestSpec) -> None:
    """VCPU, MEMORY_MB and DISK_GB from the flavor, unless some group names them."""
    flavor = spec.flavor
    group = request.unsuffixed
    if not request._mentions("VCPU", "PCPU"):
        group.add_resource("VCPU", flavor.vcpus)
    if not request._mentions("MEMORY_MB"):
        group.add_resource("MEMORY_MB", flavor.memory_mb)
    if not request._mentions("DISK_GB"):
        disk = flavor.ephemeral_gb + math.ceil(flavor.swap / 1024)
        if not spec.is_bfv:
            disk += flavor.root_gb
        if disk:
            group.add_resource("DISK_GB", disk)


def _default_group_policy(request: ResourceRequest) -> None:
    """nova sets ``none`` when several groups exist and at most one is the flavor's."""
    suffixed = [suffix for suffix in request.groups() if suffix]
    if request.group_policy is not None or len(suffixed) < 2:
        return
    if len(request.flavor_suffixes & set(suffixed)) <= 1:
        request.group_policy = "none"
    else:
        LOG.warning("There is more than one numbered request group in the allocation "
                    "candidate query but the flavor did not specify any group policy. "
                    "Placement will reject this query.")


def _apply_destination(request: ResourceRequest, spec: RequestSpec,
                       compute_nodes: NodeLookup | None) -> None:
    destination = spec.requested_destination
    group = request.unsuffixed
    target_host = target_node = None
    if destination is not None:
        for any_of in destination.aggregates or []:
            members = [a for a in any_of.split(",") if a]
            if members:
                group.aggregates.append(members)
        group.forbidden_aggregates |= set(destination.forbidden_aggregates or ())
        target_host, target_node = destination.host, destination.node
    if spec.force_hosts:
        target_host = target_host or spec.force_hosts[0]
    if spec.force_nodes:
        target_node = target_node or spec.force_nodes[0]
    if (target_host or target_node) and compute_nodes is not None:
        nodes = compute_nodes(target_host, target_node)
        if len(nodes) == 1:
            group.in_tree = nodes[0]
        else:
            request.limit = None
    if any(spec.scheduler_hints.get(hint) for hint in LIMIT_DROPPING_HINTS):
        request.limit = None
