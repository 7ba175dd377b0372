"""GET /allocation_candidates query string -> a :class:`CandidateRequest`.

Everything here is syntax: the query checks, in the order the reference
Placement makes them, each failing with its exact message and error code. The
query schema (schemas/allocation_candidate.py) has already accepted the key
set when :func:`parse_query` runs. Whether resource classes, traits,
aggregates or ``in_tree`` providers exist is decided later, by the search,
against the database.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from placement_wsgi import errors, uuids
from placement_wsgi.microversion import Version
from placement_wsgi.query import (
    AggregateFilter,
    TraitFilter,
    parse_member_of,
    parse_required,
    parse_resources,
)

_LIMIT = re.compile(r"^[1-9][0-9]*$")
_GROUP_KEY = re.compile(r"^(resources|required|member_of|in_tree)(.*)$")

#: root_required never accepts the ``in:`` form: parse it as 1.38 would.
_ROOT_REQUIRED_GRAMMAR = Version(1, 38)


@dataclasses.dataclass
class RequestGroup:
    """One request group: ``resources{S}``, ``required{S}``, ``member_of{S}``, ``in_tree{S}``.

    The unsuffixed group (``suffix == ""``) may be served by several providers
    of one tree plus sharing providers; a suffixed (granular) group by exactly
    one provider.
    """

    suffix: str
    resources: dict[str, int] = dataclasses.field(default_factory=dict)
    required: TraitFilter = dataclasses.field(default_factory=TraitFilter)
    member_of: AggregateFilter = dataclasses.field(default_factory=AggregateFilter)
    in_tree: str | None = None

    @property
    def granular(self) -> bool:
        """True for a suffixed group (one provider serves all of it)."""
        return self.suffix != ""


@dataclasses.dataclass
class CandidateRequest:
    """A parsed, syntactically valid allocation-candidates request."""

    version: Version
    groups: list[RequestGroup]
    limit: int | None = None
    group_policy: str | None = None
    root_required: TraitFilter = dataclasses.field(default_factory=TraitFilter)
    same_subtrees: list[frozenset[str]] = dataclasses.field(default_factory=list)

    @property
    def nested_aware(self) -> bool:
        """From 1.29 one request may use several providers of one tree."""
        return self.version >= (1, 29)

    @property
    def isolate(self) -> bool:
        return self.group_policy == "isolate"

    def resource_class_names(self) -> set[str]:
        """Every class some group asks for."""
        names: set[str] = set()
        for group in self.groups:
            names.update(group.resources)
        return names


def _values(items: Sequence[tuple[str, str]], key: str) -> list[str]:
    return [value for name, value in items if name == key]


def _parse_request_wide(items: Sequence[tuple[str, str]], version: Version,
                        request: CandidateRequest) -> None:
    limits = _values(items, "limit")
    if limits:
        # the first value is used; the schema only checked the last one
        if not _LIMIT.match(limits[0]):
            raise errors.BadRequest(
                f"Invalid query string parameters: '{limits[0]}' does not match "
                f"'{_LIMIT.pattern}'")
        request.limit = int(limits[0])
    policies = _values(items, "group_policy")
    if policies:
        request.group_policy = policies[0]
    if version >= (1, 35):
        root_values = _values(items, "root_required")
        if len(root_values) > 1:
            raise errors.BadRequest(
                "Query parameter 'root_required' may be specified only once.",
                code=errors.QUERY_DUPLICATE_KEY)
        if root_values:
            traits = parse_required(root_values, _ROOT_REQUIRED_GRAMMAR)
            conflicts = traits.required & traits.forbidden
            if conflicts:
                raise errors.BadRequest(
                    "Conflicting required and forbidden traits found in root_required: "
                    + ", ".join(sorted(conflicts)),
                    code=errors.QUERY_BAD_VALUE)
            request.root_required = traits
    if version >= (1, 36):
        for value in _values(items, "same_subtree"):
            suffixes = {item.strip() for item in value.split(",")}
            if "" in suffixes:
                raise errors.BadRequest(
                    "Empty string (unsuffixed group) can not be specified in `same_subtree` ",
                    code=errors.QUERY_BAD_VALUE)
            request.same_subtrees.append(frozenset(suffixes))


def _parse_groups(items: Sequence[tuple[str, str]], version: Version) -> dict[str, RequestGroup]:
    """Groups keyed by suffix, in the order their first key appears."""
    groups: dict[str, RequestGroup] = {}
    parsed_keys: set[str] = set()
    for key, value in items:
        match = _GROUP_KEY.match(key)
        if not match:
            continue
        prefix, suffix = match.groups()
        group = groups.get(suffix)
        if group is None:
            group = groups[suffix] = RequestGroup(suffix)
        if prefix == "resources":
            group.resources = parse_resources(value)  # every value parsed, the last wins
        elif prefix == "in_tree":
            tree = value.strip()
            if not uuids.is_lenient_uuid(tree):
                raise errors.BadRequest(
                    "Invalid query string parameters: Expected 'in_tree' parameter to be a "
                    f"format of uuid. Got: {value}")
            group.in_tree = uuids.canonical_uuid(tree)
        elif key not in parsed_keys:
            # required/member_of read every value of their key at once
            parsed_keys.add(key)
            if prefix == "required":
                group.required = parse_required(_values(items, key), version)
            else:
                group.member_of = parse_member_of(_values(items, key), version, key=key)
    return groups


def _check_orphans(groups: dict[str, RequestGroup]) -> None:
    """Before 1.36 every group needs resources (the first check on groups)."""
    orphans = [f"required{suffix}" for suffix, group in groups.items()
               if group.required.any_of and not group.resources]
    if orphans:
        raise errors.BadRequest(
            "All traits parameters must be associated with resources.  Found the following "
            "orphaned traits keys: " + ", ".join(orphans))
    orphans = [f"member_of{suffix}" for suffix, group in groups.items()
               if group.member_of and not group.resources]
    if orphans:
        raise errors.BadRequest(
            "All member_of parameters must be associated with resources. Found the "
            "following orphaned member_of keys: " + ", ".join(orphans))
    if not all(group.resources for group in groups.values()):
        raise errors.BadRequest("All request groups must specify resources.")
    if not groups:
        raise errors.BadRequest(
            "At least one request group (`resources` or `resources{$S}`) is required.")


def _check_resourceless(groups: dict[str, RequestGroup],
                        same_subtrees: list[frozenset[str]]) -> None:
    """From 1.36 resourceless groups are allowed when named in ``same_subtree``."""
    resourceless = sorted(suffix for suffix, group in groups.items() if not group.resources)
    if len(resourceless) == len(groups):
        raise errors.BadRequest(
            "There must be at least one resources or resources[$S] parameter.",
            code=errors.QUERY_MISSING_VALUE)
    in_subtrees = set().union(*same_subtrees)
    bad = [suffix for suffix in resourceless if suffix not in in_subtrees]
    if bad:
        raise errors.BadRequest(
            "Resourceless suffixed group request should be specified in `same_subtree` "
            f"query param: bad group(s) - {bad}.",
            code=errors.QUERY_BAD_VALUE)
    unknown = sorted(suffix for suffix in in_subtrees if suffix not in groups)
    if unknown:
        raise errors.BadRequest(
            f"Real suffixes should be specified in `same_subtree`: {unknown} not found in "
            f"{list(groups)}.",
            code=errors.QUERY_BAD_VALUE)


def _check_trait_conflicts(groups: dict[str, RequestGroup]) -> None:
    """An any-of set whose every trait is also forbidden can never be met."""
    conflicts = []
    for suffix, group in groups.items():
        for any_of in group.required.any_of:
            if any_of <= group.required.forbidden:
                conflicts.append(f"required{suffix}: ({', '.join(sorted(any_of))})")
    if conflicts:
        raise errors.BadRequest(
            "Conflicting required and forbidden traits found in the following traits keys: "
            + ", ".join(sorted(conflicts)))


def parse_query(items: Sequence[tuple[str, str]], version: Version) -> CandidateRequest:
    """Parse the query string (``(key, value)`` pairs in order) at ``version``.

    Checks run in the reference service's order: request-wide parameters, groups, group
    structure, ``group_policy``. The first failure raises a 400.
    """
    request = CandidateRequest(version=version, groups=[])
    _parse_request_wide(items, version, request)
    groups = _parse_groups(items, version)
    if version >= (1, 36):
        _check_resourceless(groups, request.same_subtrees)
    else:
        _check_orphans(groups)
    if version >= (1, 22):
        _check_trait_conflicts(groups)
    granular = [group for group in groups.values() if group.granular]
    if request.group_policy is None and len(granular) > 1:
        raise errors.BadRequest(
            'The "group_policy" parameter is required when specifying more than one '
            '"resources{N}" parameter.')
    request.groups = list(groups.values())
    return request
