"""The scheduler's seam to Cyborg: device profiles in, ARQs bound out.

The scheduler needs four things from an accelerator service, named as
nova's Cyborg client names them (:class:`AcceleratorClient`): the request
groups of a device profile, creating the ARQs of a profile, binding ARQs,
and deleting ARQs when an instance could not be placed. Any object with
those methods plugs in (``nova_reshape.accelerator`` or a test fake).

What lives here rather than in the client is the part nova's conductor does
with the scheduler's result: each ARQ gets ``device_rp_uuid =
mapping["device_profile_<group id>"][0]`` from the claimed allocation
request's ``mappings``, and is bound to the instance and the node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from nova_reshape.scheduler.errors import SchedulerError
from nova_reshape.scheduler.resource_request import RequestGroup

DEVICE_PROFILE_SPEC = "accel:device_profile"
GROUP_PREFIX = "device_profile_"


class AcceleratorRequestFailed(SchedulerError):
    """Creating, matching or binding the ARQs of an instance failed."""


class DeviceProfileResolver(Protocol):
    def get_device_profile_request_groups(self, dp_name: str) -> Sequence[Any]:
        """RequestGroups (or objects/dicts with their fields) of profile ``dp_name``."""
        ...


class AcceleratorClient(DeviceProfileResolver, Protocol):
    def create_arqs(self, dp_name: str) -> list[dict[str, Any]]:
        """New ARQs (``uuid``, ``device_profile_group_id``, ...) for the profile."""
        ...

    def bind_arqs(self, bindings: Mapping[str, Mapping[str, str]]) -> None:
        """Bind ``{arq_uuid: {"hostname", "device_rp_uuid", "instance_uuid"}}``."""
        ...

    def delete_arqs_by_uuid(self, arq_uuids: Sequence[str]) -> None:
        ...


def device_profile_name(extra_specs: Mapping[str, Any]) -> str | None:
    value = extra_specs.get(DEVICE_PROFILE_SPEC)
    return str(value) if value else None


def as_request_group(group: Any) -> RequestGroup:
    """A RequestGroup from whatever the resolver returned (same field names)."""
    if isinstance(group, RequestGroup):
        return group

    def get(name: str, default: Any) -> Any:
        if isinstance(group, Mapping):
            return group.get(name, default)
        return getattr(group, name, default)

    return RequestGroup(
        requester_id=get("requester_id", None),
        use_same_provider=bool(get("use_same_provider", True)),
        resources={str(k): int(v) for k, v in (get("resources", {}) or {}).items()},
        required_traits=set(get("required_traits", ()) or ()),
        forbidden_traits=set(get("forbidden_traits", ()) or ()),
        aggregates=[list(a) for a in get("aggregates", ()) or ()],
        forbidden_aggregates=set(get("forbidden_aggregates", ()) or ()),
        in_tree=get("in_tree", None))


def match_arqs(arqs: Sequence[Mapping[str, Any]],
               mappings: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """``{arq_uuid: device_rp_uuid}`` from the claimed candidate's ``mappings``."""
    matched = {}
    for arq in arqs:
        requester = f"{GROUP_PREFIX}{arq['device_profile_group_id']}"
        providers = mappings.get(requester)
        if not providers:
            raise AcceleratorRequestFailed(
                f"ARQ {arq['uuid']} is for group {requester}, which the claimed allocation "
                f"request does not map to any provider")
        matched[arq["uuid"]] = providers[0]
    return matched


def create_and_bind(client: AcceleratorClient, dp_name: str, instance_uuid: str,
                    nodename: str, mappings: Mapping[str, Sequence[str]]) -> list[str]:
    """The conductor's ``_create_and_bind_arqs``; returns the ARQ uuids.

    On any failure the ARQs already created are deleted before
    :class:`AcceleratorRequestFailed` is raised.
    """
    arqs = client.create_arqs(dp_name)
    uuids = [arq["uuid"] for arq in arqs]
    try:
        matched = match_arqs(arqs, mappings)
        client.bind_arqs({arq_uuid: {"hostname": nodename, "device_rp_uuid": rp_uuid,
                                     "instance_uuid": instance_uuid}
                          for arq_uuid, rp_uuid in matched.items()})
    except Exception as error:
        client.delete_arqs_by_uuid(uuids)
        if isinstance(error, AcceleratorRequestFailed):
            raise
        raise AcceleratorRequestFailed(
            f"binding the ARQs of {instance_uuid} failed: {error}") from error
    return uuids


def bind_patch(bindings: Mapping[str, Mapping[str, str]]) -> dict[str, list[dict[str, Any]]]:
    """RFC 6902 body of ``PATCH /accelerator_requests`` for ``bind_arqs`` bindings."""
    return {arq_uuid: [{"op": "add", "path": f"/{name}", "value": binding[name]}
                       for name in ("hostname", "device_rp_uuid", "instance_uuid")]
            for arq_uuid, binding in bindings.items()}


class ArqStoreClient:
    """:class:`AcceleratorClient` over ``nova_reshape.accelerator``'s in-memory Cyborg.

    ``store`` is an ``nova_reshape.accelerator.arq.ArqStore`` (device
    profiles and ARQs); profiles become request groups with that package's
    ``request_groups`` (exactly one profile per name, else an error).
    """

    def __init__(self, store: Any) -> None:
        self.store = store

    def get_device_profile_request_groups(self, dp_name: str) -> Sequence[Any]:
        from nova_reshape.accelerator.device_profile import request_groups, select_profile
        return request_groups(select_profile(dp_name, self.store.device_profiles(dp_name)))

    def create_arqs(self, dp_name: str) -> list[dict[str, Any]]:
        return [arq.as_dict() for arq in self.store.create(dp_name)]

    def bind_arqs(self, bindings: Mapping[str, Mapping[str, str]]) -> None:
        self.store.patch(bind_patch(bindings))

    def delete_arqs_by_uuid(self, arq_uuids: Sequence[str]) -> None:
        self.store.delete(arqs=list(arq_uuids))
