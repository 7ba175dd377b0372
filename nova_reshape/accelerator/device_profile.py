"""Device profiles -> Placement request groups.

A flavor's ``accel:device_profile=<name>`` names a Cyborg device profile:
a list of groups, each a dict of ``key: value`` strings. Group ``N`` (in
Cyborg's order) becomes one request group with ``requester_id``
``device_profile_<N>`` (plus the owning port's uuid, appended directly,
for a port-owned profile) and ``use_same_provider=True``:

* ``resources[<suffix>]:<RC>=<amount>`` adds ``amount`` of ``RC``;
* ``trait[<suffix>]:<TRAIT>=required|forbidden`` adds a required or
  forbidden trait (other values are ignored);
* every other key (``accel:*``) is ignored.

The groups go to Placement as suffixed groups
(``resourcesdevice_profile_0=FPGA:1&requireddevice_profile_0=CUSTOM_X``).

Cyborg stores a profile as one ``device_profiles`` row whose
``profile_json`` is ``{"groups": [{key: value, ...}, ...]}``;
:func:`profile_from_json` reads that text, and :class:`ProfileCatalogue`
resolves names over the rows read once (nova asks Cyborg's API by name
and wants exactly one profile back).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping, Sequence

from nova_reshape import exception

#: ``resources`` / ``trait`` with an optional group suffix, then ``:`` and the name.
GROUP_KEY = re.compile(r"^(resources|trait)([A-Za-z0-9_-]{1,64})?:(.*)$")
REQUESTER_PREFIX = "device_profile_"


class DeviceProfileError(exception.NovaException):
    msg_fmt = "Device profile name %(name)s: %(msg)s"


@dataclasses.dataclass(frozen=True)
class DeviceProfile:
    name: str
    groups: tuple[Mapping[str, str], ...]
    uuid: str | None = None


@dataclasses.dataclass
class RequestGroup:
    """One suffixed Placement request group (the fields nova's RequestGroup uses here)."""

    requester_id: str
    use_same_provider: bool = True
    resources: dict[str, int] = dataclasses.field(default_factory=dict)
    required_traits: set[str] = dataclasses.field(default_factory=set)
    forbidden_traits: set[str] = dataclasses.field(default_factory=set)
    #: Filled after the claim from the allocation request's mappings.
    provider_uuids: list[str] = dataclasses.field(default_factory=list)

    def add_resource(self, resource_class: str, amount: int) -> None:
        self.resources[resource_class] = self.resources.get(resource_class, 0) + amount

    def add_trait(self, trait: str, trait_type: str) -> None:
        if trait_type == "required":
            self.required_traits.add(trait)
        elif trait_type == "forbidden":
            self.forbidden_traits.add(trait)


def requester_id(group_id: int, owner: str | None = None) -> str:
    """``device_profile_<N>`` (+ the owner's uuid for a port-owned profile)."""
    return f"{REQUESTER_PREFIX}{group_id}{owner or ''}"


def select_profile(name: str, found: Sequence[DeviceProfile]) -> DeviceProfile:
    """The one profile ``GET /device_profiles?name=<name>`` must return."""
    if len(found) != 1:
        raise DeviceProfileError(name=name, msg=f"expected exactly one profile, got "
                                 f"{len(found)}")
    return found[0]


def profile_from_json(name: str, text: str | None, uuid: str | None = None) -> DeviceProfile:
    """A profile from Cyborg's stored ``profile_json`` (see the module);
    DeviceProfileError when the text is not a list of groups of strings."""
    try:
        document = json.loads(text or "")
    except ValueError:
        raise DeviceProfileError(name=name, msg="its profile_json is not JSON") from None
    groups = document.get("groups") if isinstance(document, dict) else None
    if not isinstance(groups, list) or not all(
            isinstance(group, dict) and all(isinstance(value, str | None)
                                            for value in group.values())
            for group in groups):
        raise DeviceProfileError(name=name, msg="its profile_json has no list of groups "
                                 "of strings under 'groups'")
    return DeviceProfile(name, tuple(groups), uuid)


class ProfileCatalogue:
    """Device profiles by name, read once: a resolver of request groups.

    ``stored``: (name, uuid, profile_json) as Cyborg's database holds them;
    a profile's text is read when a flavor asks for it, so a broken one
    only concerns the flavors naming it. ``absent``: why there are no
    profiles at all (no Cyborg database given), said for every name asked.
    """

    def __init__(self, stored: Iterable[tuple[str, str | None, str | None]] = (),
                 absent: str | None = None) -> None:
        self.stored: dict[str, list[tuple[str | None, str | None]]] = {}
        for name, uuid, text in stored:
            self.stored.setdefault(name, []).append((uuid, text))
        self.absent = absent

    def get_device_profile_request_groups(self, dp_name: str) -> list[RequestGroup]:
        """The profile's request groups, as nova's Cyborg client builds them;
        DeviceProfileError for a name matching no profile or more than one, or a
        profile whose text cannot be read."""
        if self.absent is not None:
            raise DeviceProfileError(name=dp_name, msg=self.absent)
        found = self.stored.get(dp_name, [])
        if not found:
            raise DeviceProfileError(name=dp_name, msg="no such profile in Cyborg's database")
        profiles = [profile_from_json(dp_name, text, uuid) for uuid, text in found]
        return request_groups(select_profile(dp_name, profiles))


def request_groups(profile: DeviceProfile, owner: str | None = None) -> list[RequestGroup]:
    """One request group per profile group, in order; DeviceProfileError on bad amounts."""
    groups = []
    for group_id, spec in enumerate(profile.groups):
        group = RequestGroup(requester_id(group_id, owner))
        for key, value in spec.items():
            match = GROUP_KEY.match(key)
            if match is None:
                continue  # accel:* and anything else is Cyborg's business
            kind, _suffix, name = match.groups()
            if kind == "resources":
                try:
                    amount = int(value)
                except (TypeError, ValueError):
                    amount = -1
                if amount < 0:
                    raise DeviceProfileError(name=profile.name, msg=(
                        f"group {group_id}: {key}={value!r} is not a non-negative integer"))
                group.add_resource(name, amount)
            else:
                group.add_trait(name, value)
        groups.append(group)
    return groups


def query_params(groups: Iterable[RequestGroup]) -> list[tuple[str, str]]:
    """Suffixed ``resources<S>`` / ``required<S>`` query parameters, sorted."""
    params = []
    for group in groups:
        suffix = group.requester_id
        if group.resources:
            params.append((f"resources{suffix}", ",".join(
                f"{rc}:{amount}" for rc, amount in sorted(group.resources.items()))))
        traits = sorted(group.required_traits) + [f"!{t}" for t in sorted(group.forbidden_traits)]
        if traits:
            params.append((f"required{suffix}", ",".join(traits)))
    return sorted(params)


def group_mapping(groups: Iterable[RequestGroup]) -> dict[str, list[str]]:
    """``{requester_id: provider_uuids}`` (nova's ``get_request_group_mapping``)."""
    return {group.requester_id: list(group.provider_uuids) for group in groups}
