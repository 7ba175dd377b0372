"""RequestGroup: one group of a Placement candidates query (nova's RequestGroup).

It lives apart from the query builder so that RequestSpec (which carries
the groups that came from outside the flavor) and the builder (which reads
RequestSpec) do not import each other.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

LOG = logging.getLogger(__name__)


@dataclass
class RequestGroup:
    """One request group (nova's RequestGroup).

    ``requester_id`` names who asked (a flavor suffix, ``device_profile_<N>``,
    a port uuid, ``<pci request id>-<i>``); it is the group's suffix in the
    query. ``aggregates`` are OR-lists (each an ``in:`` member_of).
    ``provider_uuids`` are filled after the claim from the candidate's
    ``mappings``.
    """

    requester_id: str | None = None
    use_same_provider: bool = True
    resources: dict[str, int] = field(default_factory=dict)
    required_traits: set[str] = field(default_factory=set)
    forbidden_traits: set[str] = field(default_factory=set)
    aggregates: list[list[str]] = field(default_factory=list)
    forbidden_aggregates: set[str] = field(default_factory=set)
    in_tree: str | None = None
    provider_uuids: list[str] = field(default_factory=list)

    def add_resource(self, resource_class: str, amount: int) -> None:
        """Set an amount (a later value for the same class replaces the earlier)."""
        self.resources[resource_class] = amount

    def add_trait(self, name: str, value: str) -> None:
        """``required`` or ``forbidden``; any other value is ignored, as nova does."""
        if value == "required":
            self.required_traits.add(name)
        elif value == "forbidden":
            self.forbidden_traits.add(name)
        else:
            LOG.warning("Only (required|forbidden) are supported for trait %s, got %r; "
                        "ignored", name, value)

    def is_empty(self) -> bool:
        return not (self.resources or self.required_traits or self.forbidden_traits
                    or self.aggregates or self.forbidden_aggregates or self.in_tree)
