"""The engine against a brute-force enumerator written from the definition of a candidate.

Random small deployments (roots with 0-3 children, sometimes a grandchild,
sometimes sharing providers; random inventories, usage, traits, aggregates)
and random requests of 1-3 groups (isolate/none, same_subtree, resourceless
groups, any-of and forbidden traits, member_of, in_tree, root_required) at
1.39, and simpler ones at 1.28 (not nested-aware). Without a limit the
engine must return exactly the brute-force set (each request once); with a
limit or a ceiling, a sub-multiset of the right size. Runs on SQLite unless
``NOVA_RESHAPE_PROPERTY_ENGINE`` names another enabled engine (``mysql``,
``postgresql``): the engine reads rows differently per driver (MariaDB packs
them), so its results must be checked there too, on demand since a server
database is much slower to empty per example.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import os
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from placement_wsgi import errors
from placement_wsgi.db.database import Database
from tests.fixtures.databases import SERVERS
from tests.functional.placement_wsgi.candidates.world import World, uuid_for

CLASSES = ("VCPU", "MEMORY_MB", "DISK_GB")
TRAITS = ("CUSTOM_A", "CUSTOM_B", "CUSTOM_C")
AGGREGATES = ("AG1", "AG2")
SHARES = "MISC_SHARES_VIA_AGGREGATE"
ENGINE = os.environ.get("NOVA_RESHAPE_PROPERTY_ENGINE", "sqlite")


# -- the model and the brute force (the definition, literally) --------------------------


@dataclasses.dataclass
class Provider:
    name: str
    parent: str | None
    inventory: dict[str, dict[str, Any]]
    used: dict[str, int]
    traits: set[str]
    aggregates: set[str]


@dataclasses.dataclass
class Group:
    suffix: str
    resources: dict[str, int]
    any_of: list[set[str]]
    forbidden: set[str]
    member_of: list[set[str]]
    forbidden_aggs: set[str]
    in_tree: str | None


@dataclasses.dataclass
class Query:
    groups: list[Group]
    policy: str
    same_subtrees: list[set[str]]
    root_required: set[str]
    root_forbidden: set[str]


class Model:
    def __init__(self, providers: list[Provider]) -> None:
        self.providers = {provider.name: provider for provider in providers}

    def root(self, name: str) -> str:
        while self.providers[name].parent is not None:
            name = self.providers[name].parent
        return name

    def ancestors_or_self(self, name: str) -> set[str]:
        found = {name}
        while self.providers[name].parent is not None:
            name = self.providers[name].parent
            found.add(name)
        return found

    def capacity_for(self, name: str, rc: str, amount: int) -> bool:
        inventory = self.providers[name].inventory.get(rc)
        if inventory is None:
            return False
        used = self.providers[name].used.get(rc, 0)
        return (used + amount <= (inventory["total"] - inventory["reserved"])
                * inventory["allocation_ratio"]
                and inventory["min_unit"] <= amount <= inventory["max_unit"]
                and amount % inventory["step_size"] == 0)

    def sharing(self, name: str) -> bool:
        return SHARES in self.providers[name].traits

    def anchors(self, name: str) -> set[str]:
        mine = self.providers[name].aggregates
        return {self.root(other) for other, provider in self.providers.items()
                if provider.aggregates & mine}

    def member_ok(self, name: str, member_of: list[set[str]]) -> bool:
        return all(self.providers[name].aggregates & wanted for wanted in member_of)

    def root_ok(self, anchor: str, query: Query) -> bool:
        traits = self.providers[anchor].traits
        return query.root_required <= traits and not (query.root_forbidden & traits)

    def granular_pieces(self, group: Group, query: Query) -> list[tuple[str, dict, dict]]:
        pieces = []
        for name, provider in self.providers.items():
            if not all(self.capacity_for(name, rc, amount)
                       for rc, amount in group.resources.items()):
                continue
            if not all(provider.traits & any_of for any_of in group.any_of):
                continue
            if provider.traits & group.forbidden:
                continue
            if not self.member_ok(name, group.member_of):
                continue
            if provider.aggregates & group.forbidden_aggs:
                continue
            if group.in_tree is not None and self.root(name) != self.root(group.in_tree):
                continue
            anchors = {self.root(name)}
            if self.sharing(name):
                anchors |= self.anchors(name)
            for anchor in anchors:
                if self.root_ok(anchor, query):
                    pieces.append((anchor, {(name, rc): amount
                                            for rc, amount in group.resources.items()},
                                   {group.suffix: frozenset([name])}))
        return pieces

    def unsuffixed_pieces(self, group: Group, query: Query) -> list[tuple[str, dict, dict]]:
        pairs: dict[str, set[tuple[str, str]]] = {}
        for rc, amount in group.resources.items():
            found = set()
            for name in self.providers:
                if not self.capacity_for(name, rc, amount):
                    continue
                if group.in_tree is not None:
                    if self.root(name) == self.root(group.in_tree):
                        found.add((name, self.root(name)))
                    continue
                found.add((name, self.root(name)))
                if self.sharing(name) and (not group.member_of
                                           or self.member_ok(name, group.member_of)):
                    found |= {(name, anchor) for anchor in self.anchors(name)}
            kept = set()
            for name, anchor in found:
                if group.member_of and not (self.member_ok(name, group.member_of)
                                            or self.member_ok(anchor, group.member_of)):
                    continue
                if (self.providers[name].aggregates | self.providers[anchor].aggregates) \
                        & group.forbidden_aggs:
                    continue
                if not self.root_ok(anchor, query):
                    continue
                kept.add((name, anchor))
            pairs[rc] = kept
        classes = list(group.resources)
        anchors = set.intersection(*({anchor for _, anchor in pairs[rc]} for rc in classes))
        pieces = []
        for anchor in anchors:
            per_class = [sorted(name for name, a in pairs[rc] if a == anchor) for rc in classes]
            for chosen in itertools.product(*per_class):
                if any(self.providers[name].traits & group.forbidden for name in chosen):
                    continue
                union = set().union(*(self.providers[name].traits for name in chosen))
                if not all(union & any_of for any_of in group.any_of):
                    continue
                resources: dict = collections.Counter()
                for rc, name in zip(classes, chosen, strict=True):
                    resources[(name, rc)] += group.resources[rc]
                pieces.append((anchor, dict(resources), {"": frozenset(chosen)}))
        return pieces

    def candidates(self, query: Query, nested_aware: bool) -> set[tuple[frozenset, frozenset]]:
        per_group = []
        for group in query.groups:
            if group.suffix:
                per_group.append(self.granular_pieces(group, query))
            else:
                per_group.append(self.unsuffixed_pieces(group, query))
        has_trees = any(provider.parent for provider in self.providers.values())
        result = set()
        roots = {self.root(name) for name in self.providers}
        for anchor in roots:
            lists = [[piece for piece in pieces if piece[0] == anchor] for pieces in per_group]
            for combination in itertools.product(*lists):
                key = self._combine(combination, query)
                if key is None:
                    continue
                if not nested_aware and has_trees:
                    used = {name for (name, _), _ in key[0]}
                    if len({self.root(name) for name in used}) < len(used):
                        continue
                result.add(key)
        return result

    def _combine(self, combination: tuple, query: Query) -> tuple | None:
        mappings: dict[str, frozenset] = {}
        totals: dict = collections.Counter()
        for _, resources, mapping in combination:
            for key, amount in resources.items():
                totals[key] += amount
            mappings.update(mapping)
        granular = [next(iter(providers)) for suffix, providers in mappings.items() if suffix]
        if query.policy == "isolate" and len(set(granular)) < len(granular):
            return None
        for suffixes in query.same_subtrees:
            members = set().union(*(mappings[suffix] for suffix in suffixes))
            if not any(all(top in self.ancestors_or_self(other) for other in members)
                       for top in members):
                return None
        for (name, rc), total in totals.items():
            inventory = self.providers[name].inventory[rc]
            capacity = int((inventory["total"] - inventory["reserved"])
                           * inventory["allocation_ratio"])
            if self.providers[name].used.get(rc, 0) + total > capacity:
                return None
            if total > inventory["max_unit"]:
                return None
        return frozenset(totals.items()), frozenset(mappings.items())


# -- strategies --------------------------------------------------------------------


@st.composite
def inventories(draw: st.DrawFn) -> tuple[dict, dict]:
    """Mostly roomy inventories (so that requests often have answers), some tight."""
    inventory, used = {}, {}
    for rc in draw(st.sets(st.sampled_from(CLASSES), min_size=draw(st.sampled_from([0, 1, 1])),
                           max_size=3)):
        total = draw(st.integers(1, 6))
        inventory[rc] = {
            "total": total,
            "reserved": draw(st.sampled_from([0, 0, 0, 1])),
            "min_unit": 1,
            "max_unit": draw(st.sampled_from([total, total, draw(st.integers(1, total))])),
            "step_size": draw(st.sampled_from([1, 1, 1, 2])),
            "allocation_ratio": draw(st.sampled_from([1.0, 1.0, 1.5])),
        }
        used[rc] = draw(st.sampled_from([0, 0, 0, 1, total]))
    return inventory, used


@st.composite
def deployments(draw: st.DrawFn) -> list[Provider]:
    providers = []

    def add(name: str, parent: str | None, extra_traits: tuple = ()) -> None:
        inventory, used = draw(inventories())
        traits = set(draw(st.sets(st.sampled_from(TRAITS), max_size=2))) | set(extra_traits)
        aggregates = set(draw(st.sets(st.sampled_from(AGGREGATES), max_size=2)))
        providers.append(Provider(name, parent, inventory, used, traits, aggregates))

    for root in range(draw(st.integers(1, 3))):
        add(f"r{root}", None)
        for child in range(draw(st.integers(0, 3))):
            add(f"r{root}c{child}", f"r{root}")
            if draw(st.integers(0, 4)) == 0:
                add(f"r{root}c{child}g", f"r{root}c{child}")
    for share in range(draw(st.sampled_from([0, 0, 1, 2]))):
        add(f"s{share}", None, (SHARES,))
    return providers


@st.composite
def groups_of(draw: st.DrawFn, providers: list[Provider], modern: bool) -> Query:
    count = draw(st.integers(1, 3))
    suffixes = draw(st.sampled_from([[""], []])) + [
        ("_" if modern else "") + str(index) for index in range(1, count + 1)]
    suffixes = suffixes[:count]
    groups = []
    rarely = st.sampled_from([0, 0, 0, 1])
    for suffix in suffixes:
        resourceless = modern and suffix and draw(st.integers(0, 5)) == 0
        resources = {} if resourceless else {
            rc: draw(st.sampled_from([1, 1, 2]))
            for rc in draw(st.sets(st.sampled_from(CLASSES), min_size=1,
                                   max_size=draw(st.sampled_from([1, 1, 2]))))}
        any_of = [set(draw(st.sets(st.sampled_from(TRAITS), min_size=1,
                                   max_size=2 if modern else 1)))
                  for _ in range(draw(rarely))]
        forbidden = set(draw(st.sets(st.sampled_from(TRAITS), max_size=draw(rarely))))
        member_of = [set(draw(st.sets(st.sampled_from(AGGREGATES), min_size=1, max_size=2)))
                     for _ in range(draw(rarely))]
        forbidden_aggs = set(draw(st.sets(st.sampled_from(AGGREGATES), max_size=draw(rarely)))) \
            if modern else set()
        in_tree = None
        if modern and draw(st.integers(0, 7)) == 0:
            in_tree = draw(st.sampled_from([provider.name for provider in providers]))
        if resourceless and not (any_of or member_of or forbidden or forbidden_aggs or in_tree):
            any_of = [{draw(st.sampled_from(TRAITS))}]
        groups.append(Group(suffix, resources, any_of, forbidden, member_of, forbidden_aggs,
                            in_tree))
    granular = [group.suffix for group in groups if group.suffix]
    same_subtrees = []
    if modern and len(granular) > 1 and draw(st.booleans()):
        same_subtrees.append(set(draw(st.sets(st.sampled_from(granular), min_size=2))))
    for group in groups:
        if not group.resources and not any(group.suffix in s for s in same_subtrees):
            same_subtrees.append({group.suffix})
    root_required, root_forbidden = set(), set()
    if modern and draw(st.integers(0, 5)) == 0:
        root_required = set(draw(st.sets(st.sampled_from(TRAITS), max_size=1)))
        root_forbidden = set(draw(st.sets(st.sampled_from(TRAITS), max_size=1))) - root_required
    return Query(groups, draw(st.sampled_from(["none", "isolate"])), same_subtrees,
                 root_required, root_forbidden)


def query_string(query: Query) -> str:
    parts = [f"group_policy={query.policy}"]
    for group in query.groups:
        s = group.suffix
        if group.resources:
            parts.append(f"resources{s}=" + ",".join(
                f"{rc}:{amount}" for rc, amount in sorted(group.resources.items())))
        for any_of in group.any_of:
            if len(any_of) > 1:
                parts.append(f"required{s}=in:" + ",".join(sorted(any_of)))
            else:
                parts.append(f"required{s}=" + next(iter(any_of)))
        if group.forbidden:
            parts.append(f"required{s}=" + ",".join("!" + t for t in sorted(group.forbidden)))
        for any_of in group.member_of:
            ids = ",".join(uuid_for(name) for name in sorted(any_of))
            parts.append(f"member_of{s}=" + (f"in:{ids}" if len(any_of) > 1 else ids))
        for aggregate in sorted(group.forbidden_aggs):
            parts.append(f"member_of{s}=!{uuid_for(aggregate)}")
        if group.in_tree:
            parts.append(f"in_tree{s}={uuid_for(group.in_tree)}")
    for suffixes in query.same_subtrees:
        parts.append("same_subtree=" + ",".join(sorted(suffixes)))
    if query.root_required or query.root_forbidden:
        parts.append("root_required=" + ",".join(
            sorted(query.root_required) + ["!" + t for t in sorted(query.root_forbidden)]))
    return "&".join(parts)


def _legacy_query_string(query: Query) -> str:
    """At 1.28 ``required`` is not repeatable: one value per group."""
    parts = [f"group_policy={query.policy}"]
    for group in query.groups:
        s = group.suffix
        parts.append(f"resources{s}=" + ",".join(
            f"{rc}:{amount}" for rc, amount in sorted(group.resources.items())))
        traits = sorted(next(iter(any_of)) for any_of in group.any_of) + [
            "!" + t for t in sorted(group.forbidden)]
        if traits:
            parts.append(f"required{s}=" + ",".join(traits))
        for any_of in group.member_of:
            ids = ",".join(uuid_for(name) for name in sorted(any_of))
            parts.append(f"member_of{s}=" + (f"in:{ids}" if len(any_of) > 1 else ids))
    return "&".join(parts)


# -- running the engine ------------------------------------------------------------


def _seed(providers: list[Provider]) -> tuple[World, Database]:
    database = Database(SERVERS.fresh_url(ENGINE))
    world = World(database)
    for provider in providers:
        world.provider(provider.name, provider.parent, inventory=provider.inventory,
                       traits=tuple(sorted(provider.traits)),
                       aggregates=tuple(sorted(provider.aggregates)), used=provider.used)
    world.ensure_traits(TRAITS)
    return world, database


def _keys(world: World, body: dict, with_mappings: bool) -> collections.Counter:
    keys: collections.Counter = collections.Counter()
    for request in body["allocation_requests"]:
        allocations = frozenset(
            ((world.names[provider], rc), amount)
            for provider, value in request["allocations"].items()
            for rc, amount in value["resources"].items())
        if with_mappings:
            mappings = frozenset((suffix, frozenset(world.names[p] for p in providers))
                                 for suffix, providers in request["mappings"].items())
            keys[(allocations, mappings)] += 1
        else:
            keys[allocations] += 1
    return keys


def _expected_summaries(model: Model, keys: collections.Counter, nested: bool) -> set[str]:
    providers = set()
    for key in keys:
        allocations = key[0] if nested else key
        providers |= {name for (name, _), _ in allocations}
    if not nested:
        return providers
    roots = {model.root(name) for name in providers}
    return {name for name in model.providers if model.root(name) in roots}


def _check(data: st.DataObject, modern: bool) -> None:
    providers = data.draw(deployments(), label="deployment")
    query = data.draw(groups_of(providers, modern), label="query")
    version = "1.39" if modern else "1.28"
    text = query_string(query) if modern else _legacy_query_string(query)
    model = Model(providers)
    expected = model.candidates(query, nested_aware=modern)
    world, database = _seed(providers)
    try:
        try:
            body = world.candidates(text, version, max_candidates=-1)
        except errors.BadRequest:
            assume(False)
        got = _keys(world, body, with_mappings=modern)
        if modern:
            want = collections.Counter(expected)
        else:
            want = collections.Counter(allocations for allocations, _ in expected)
        assert got == want, text
        summaries = set(world.summaries(body))
        assert summaries == _expected_summaries(model, got, modern), text
        # a limit (and a ceiling) return a sub-multiset of the right size
        strategy = data.draw(st.sampled_from(["breadth-first", "depth-first"]))
        limit = data.draw(st.integers(1, 4))
        limited = world.candidates(text + f"&limit={limit}", version, strategy=strategy)
        part = _keys(world, limited, with_mappings=modern)
        assert sum(part.values()) == min(limit, sum(want.values()))
        assert not part - want
        assert set(world.summaries(limited)) == _expected_summaries(model, part, modern)
        ceiling = world.candidates(text, version, max_candidates=limit, strategy=strategy)
        assert sum(_keys(world, ceiling, modern).values()) == min(limit, sum(want.values()))
    finally:
        database.dispose()


_SETTINGS = settings(max_examples=120, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@_SETTINGS
@given(st.data())
def test_engine_matches_brute_force_nested(data: st.DataObject) -> None:
    _check(data, modern=True)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.data())
def test_engine_matches_brute_force_not_nested_aware(data: st.DataObject) -> None:
    _check(data, modern=False)
