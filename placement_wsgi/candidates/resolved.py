"""A candidates request in ids: the names of classes and traits resolved once.

:func:`resolve` maps every resource class and trait name of the request to
its id, raising the 400s for unknown names in the order Placement reports
them; the rest of the engine works on ids only.
"""

from __future__ import annotations

import dataclasses

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.candidates.request import CandidateRequest
from placement_wsgi.constants import SHARING_TRAIT
from placement_wsgi.db import tables
from placement_wsgi.db.rows import Statement

_traits = tables.traits


@dataclasses.dataclass
class ResolvedGroup:
    """A request group with ids instead of names (aggregates stay uuids)."""

    index: int
    suffix: str
    amounts: tuple[tuple[int, int], ...]           # (resource class id, amount)
    any_of: tuple[frozenset[int], ...] = ()          # trait ids
    forbidden_traits: frozenset[int] = frozenset()
    member_of: tuple[frozenset[str], ...] = ()       # aggregate uuids
    forbidden_aggs: frozenset[str] = frozenset()
    in_tree: str | None = None                       # provider uuid

    @property
    def granular(self) -> bool:
        return self.suffix != ""


@dataclasses.dataclass
class ResolvedRequest:
    """The request in ids, plus the name maps the formatter needs."""

    request: CandidateRequest
    groups: list[ResolvedGroup]
    class_names: dict[int, str]                     # every resource class id -> name
    root_required: frozenset[int] = frozenset()
    root_forbidden: frozenset[int] = frozenset()
    sharing_trait: int | None = None
    #: the classes some provider has an inventory of (None: not known, maybe all)
    stocked_classes: frozenset[int] | None = None

    def other_classes(self) -> set[int]:
        """The classes the request does not ask for that some provider may have an
        inventory of (every known class but the requested when that is not known):
        ``provider_summaries`` from 1.27 show those too; none, and their read is skipped.

        Named rather than written ``NOT IN`` (the requested): the summaries' reads
        can then find their rows through the class index (on the nested bench the
        1,000 VGPU rows instead of probing the 7,000 providers' inventories)."""
        stocked = self.class_names.keys() if self.stocked_classes is None else self.stocked_classes
        return set(stocked) - self.requested_classes

    @property
    def requested_classes(self) -> set[int]:
        return {rc for group in self.groups for rc, _ in group.amounts}

    @property
    def mentioned_traits(self) -> set[int]:
        traits = set(self.root_required | self.root_forbidden)
        for group in self.groups:
            traits |= group.forbidden_traits
            for any_of in group.any_of:
                traits |= any_of
        return traits

    @property
    def mentioned_aggregates(self) -> set[str]:
        aggregates: set[str] = set()
        for group in self.groups:
            aggregates |= group.forbidden_aggs
            for any_of in group.member_of:
                aggregates |= any_of
        return aggregates


#: name -> id of the traits named (one expanding parameter: compiled once, cached)
_TRAIT_IDS = sa.select(_traits.c.name, _traits.c.id).where(
    _traits.c.name.in_(sa.bindparam("names", expanding=True)))
_rc = tables.resource_classes
#: every resource class: id, name, and whether some provider has an inventory of
#: it (an index probe per class; it spares the summaries' read of other classes,
#: a thousand index lookups for nothing, where no provider has any)
#: (``LIMIT 1`` keeps it a probe per class: PostgreSQL plans a bare ``EXISTS``
#: as one scan of every inventory, hashed)
_CLASSES = Statement(lambda: sa.select(_rc.c.id, _rc.c.name, sa.select(sa.literal(1))
                                       .where(tables.inventories.c.resource_class_id == _rc.c.id)
                                       .limit(1).scalar_subquery()))


def _missing_traits(names: set[str], known: dict[str, int]) -> None:
    missing = sorted(names - set(known))
    if missing:
        raise errors.BadRequest(f"No such trait(s): {', '.join(missing)}.")


def resolve(connection: Connection, request: CandidateRequest) -> ResolvedRequest:
    """Map class and trait names to ids; 400 on the first unknown name.

    Order: ``root_required`` traits, then per group (query order) its
    resource classes, then its traits.
    """
    classes = _CLASSES.rows(connection)
    class_names = {rc: name for rc, name, _ in classes}
    class_ids = {name: rc for rc, name in class_names.items()}
    trait_names = set(request.root_required.names) | {SHARING_TRAIT}
    for group in request.groups:
        trait_names |= group.required.names
    trait_ids = dict(connection.execute(_TRAIT_IDS, {"names": sorted(trait_names)}).all())
    _missing_traits(request.root_required.names, trait_ids)
    groups = []
    for index, group in enumerate(request.groups):
        for name in group.resources:
            if name not in class_ids:
                raise errors.BadRequest(
                    "Invalid resource class in resources parameter: No such resource "
                    f"class {name}.")
        _missing_traits(group.required.names, trait_ids)
        groups.append(ResolvedGroup(
            index=index,
            suffix=group.suffix,
            amounts=tuple((class_ids[name], amount) for name, amount in group.resources.items()),
            any_of=tuple(frozenset(trait_ids[name] for name in any_of)
                         for any_of in group.required.any_of),
            forbidden_traits=frozenset(trait_ids[name] for name in group.required.forbidden),
            member_of=tuple(frozenset(any_of) for any_of in group.member_of.any_of),
            forbidden_aggs=frozenset(group.member_of.forbidden),
            in_tree=group.in_tree,
        ))
    return ResolvedRequest(
        request=request,
        groups=groups,
        class_names=class_names,
        root_required=frozenset(trait_ids[name] for name in request.root_required.required),
        root_forbidden=frozenset(trait_ids[name] for name in request.root_required.forbidden),
        sharing_trait=trait_ids.get(SHARING_TRAIT),
        stocked_classes=frozenset(rc for rc, _, stocked in classes if stocked is not None),
    )
