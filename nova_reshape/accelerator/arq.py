"""Accelerator requests (ARQs): matching, binding, unbinding.

After the scheduler claims an allocation candidate, each device-profile
request group learns its provider from the candidate's ``mappings``
(Placement >= 1.34): :func:`match_candidate` picks the first candidate that
maps every group to a provider holding the group's resources and fills
``provider_uuids``. The conductor then creates ARQs (one per unit of each
group's resources, ``POST /accelerator_requests``) and binds each to the
provider of its group with an RFC 6902 patch (:func:`bind_patch`);
:func:`unbind_patch` removes the binding again.

:class:`ArqStore` is an in-memory stand-in for Cyborg's ARQ API (create,
patch, list, delete) used by tests and the demo: it applies the patches,
moves ARQs through their states and fills the attach handle from the
accelerator the bound provider stands for.
"""

from __future__ import annotations

import dataclasses
import uuid as uuid_module
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nova_reshape import exception
from nova_reshape.accelerator.device_profile import DeviceProfile, RequestGroup, request_groups

INITIAL = "Initial"
BOUND = "Bound"
BIND_FAILED = "BindFailed"
DELETING = "Deleting"
#: States in which compute stops waiting for the bind event.
RESOLVED_STATES = frozenset({BOUND, BIND_FAILED, DELETING})
BIND_FIELDS = ("hostname", "device_rp_uuid", "instance_uuid")


class ArqError(exception.NovaException):
    msg_fmt = "Accelerator request failed: %(error)s"


@dataclasses.dataclass
class ARQ:
    uuid: str
    device_profile_name: str
    device_profile_group_id: int
    state: str = INITIAL
    hostname: str | None = None
    device_rp_uuid: str | None = None
    instance_uuid: str | None = None
    attach_handle_type: str | None = None
    attach_handle_info: dict[str, str] = dataclasses.field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def match_candidate(candidates: Mapping[str, Any], groups: Sequence[RequestGroup],
                    ) -> dict[str, Any] | None:
    """The first allocation request serving every group; fills ``provider_uuids``.

    ``candidates`` is a ``GET /allocation_candidates`` body at >= 1.34. A
    candidate serves a group when its ``mappings`` name the group's
    requester id and those providers together hold the group's resources
    in the candidate. Returns None when no candidate serves them all.
    """
    for request in candidates.get("allocation_requests", ()):
        mappings = request.get("mappings", {})
        allocations = request.get("allocations", {})
        chosen: dict[str, list[str]] = {}
        for group in groups:
            providers = mappings.get(group.requester_id)
            if not providers:
                break
            held: dict[str, int] = {}
            for rp_uuid in providers:
                for rc, amount in allocations.get(rp_uuid, {}).get("resources", {}).items():
                    held[rc] = held.get(rc, 0) + amount
            if any(held.get(rc, 0) < amount for rc, amount in group.resources.items()):
                break
            chosen[group.requester_id] = list(providers)
        else:
            for group in groups:
                group.provider_uuids = chosen[group.requester_id]
            return request
    return None


def create_arqs(profile: DeviceProfile) -> list[ARQ]:
    """One ARQ per unit of every group's resources, as Cyborg creates them."""
    arqs = []
    for group_id, group in enumerate(request_groups(profile)):
        for _ in range(sum(group.resources.values()) or 1):
            arqs.append(ARQ(str(uuid_module.uuid4()), profile.name, group_id))
    return arqs


def bind_patch(arqs: Iterable[ARQ], mapping: Mapping[str, Sequence[str]], hostname: str,
               instance_uuid: str, owner: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """``PATCH /accelerator_requests`` body binding each ARQ to its group's provider."""
    body = {}
    for arq in arqs:
        requester = f"device_profile_{arq.device_profile_group_id}{owner or ''}"
        providers = mapping.get(requester)
        if not providers:
            raise ArqError(error=f"no provider for {requester} (ARQ {arq.uuid})")
        body[arq.uuid] = [
            {"op": "add", "path": "/hostname", "value": hostname},
            {"op": "add", "path": "/device_rp_uuid", "value": providers[0]},
            {"op": "add", "path": "/instance_uuid", "value": instance_uuid}]
    return body


def unbind_patch(arqs: Iterable[ARQ]) -> dict[str, list[dict[str, Any]]]:
    """``PATCH /accelerator_requests`` body removing every binding field."""
    return {arq.uuid: [{"op": "remove", "path": f"/{field}"} for field in BIND_FIELDS]
            for arq in arqs}


class ArqStore:
    """In-memory ARQ API. ``devices``: provider uuid -> PCI address of the device."""

    def __init__(self, profiles: Iterable[DeviceProfile],
                 devices: Mapping[str, str] | None = None) -> None:
        self.profiles = {profile.name: profile for profile in profiles}
        self.devices = dict(devices or {})
        self.arqs: dict[str, ARQ] = {}

    def device_profiles(self, name: str) -> list[DeviceProfile]:
        """``GET /device_profiles?name=<name>``."""
        return [self.profiles[name]] if name in self.profiles else []

    def create(self, device_profile_name: str) -> list[ARQ]:
        """``POST /accelerator_requests {"device_profile_name": name}``."""
        profile = self.profiles.get(device_profile_name)
        if profile is None:
            raise ArqError(error=f"no device profile {device_profile_name}")
        arqs = create_arqs(profile)
        self.arqs.update((arq.uuid, arq) for arq in arqs)
        return arqs

    def patch(self, body: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        """Apply bind/unbind patches; all ARQs are checked before any changes."""
        for arq_uuid, operations in body.items():
            if arq_uuid not in self.arqs:
                raise ArqError(error=f"no ARQ {arq_uuid}")
            for operation in operations:
                field = operation.get("path", "").lstrip("/")
                if operation.get("op") not in ("add", "remove") or field not in BIND_FIELDS:
                    raise ArqError(error=f"unsupported patch {operation} for ARQ {arq_uuid}")
        for arq_uuid, operations in body.items():
            arq = self.arqs[arq_uuid]
            for operation in operations:
                field = operation["path"].lstrip("/")
                setattr(arq, field, operation.get("value") if operation["op"] == "add"
                        else None)
            self._settle(arq)

    def _settle(self, arq: ARQ) -> None:
        if all(getattr(arq, field) is None for field in BIND_FIELDS):
            arq.state, arq.attach_handle_type, arq.attach_handle_info = INITIAL, None, {}
            return
        address = self.devices.get(arq.device_rp_uuid or "")
        if address is None or arq.hostname is None or arq.instance_uuid is None:
            arq.state = BIND_FAILED
            return
        domain, bus, rest = address.split(":")
        device, function = rest.split(".")
        arq.state, arq.attach_handle_type = BOUND, "PCI"
        arq.attach_handle_info = {"domain": domain, "bus": bus, "device": device,
                                  "function": function}

    def list(self, instance: str | None = None) -> list[ARQ]:
        """``GET /accelerator_requests[?instance=<uuid>]``."""
        return [arq for arq in self.arqs.values()
                if instance is None or arq.instance_uuid == instance]

    def delete(self, instance: str | None = None, arqs: Iterable[str] = ()) -> int:
        """``DELETE /accelerator_requests?instance=<uuid>`` or ``?arqs=a,b``."""
        doomed = set(arqs) | {arq.uuid for arq in self.arqs.values()
                              if instance is not None and arq.instance_uuid == instance}
        for arq_uuid in doomed:
            self.arqs.pop(arq_uuid, None)
        return len(doomed)


def resolved(arqs: Iterable[ARQ]) -> bool:
    """Whether every ARQ reached a state compute stops waiting in."""
    return all(arq.state in RESOLVED_STATES for arq in arqs)
