"""Where a run finds each node's root: per batch on the database, else one whole listing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nova_reshape.compute import provider_listing
from nova_reshape.compute.tree_source import NodeState
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt.described import DescribedDriver
from nova_reshape.virt.host import Node

ROOT = "11111111-1111-1111-1111-111111111111"
ELSEWHERE = "22222222-2222-2222-2222-222222222222"
NODE = Node(nodename="cn1", uuid=ROOT)


def provider(uuid: str, name: str, root: str | None = None) -> dict[str, Any]:
    return {"uuid": uuid, "name": name, "root_provider_uuid": root or uuid,
            "parent_provider_uuid": None, "generation": 1}


class Lookup:
    """A bulk source that records each lookup and answers from ``providers``."""

    def __init__(self, providers: Sequence[dict[str, Any]]) -> None:
        self.providers = list(providers)
        self.asked: list[tuple[list[str], list[str]]] = []

    def read_batch(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - unused
        raise AssertionError("not read here")

    def listed_providers(self, uuids: Sequence[str], names: Sequence[str]) -> list[dict[str, Any]]:
        self.asked.append((list(uuids), list(names)))
        return [p for p in self.providers if p["uuid"] in uuids or p["name"] in names]


def test_a_batch_listing_asks_for_the_batch_nodes_uuids_and_names_only():
    lookup = Lookup([provider(ROOT, "cn1"), provider(ELSEWHERE, "other")])
    listing = provider_listing.BatchListing(lookup).of_nodes([NODE, Node(nodename="cn2")])
    assert lookup.asked == [([ROOT], ["cn1", "cn2"])]
    assert set(listing.by_uuid) == {ROOT}


def test_the_check_adds_only_the_providers_consumers_hold_that_are_not_listed_yet():
    lookup = Lookup([provider(ROOT, "cn1"), provider(ELSEWHERE, "shared")])
    batch = provider_listing.BatchListing(lookup)
    listing = batch.of_nodes([NODE])
    tree = ProviderTree()
    tree.new_root("cn1", ROOT)
    allocations = {"c1": {"allocations": {ROOT: {}, ELSEWHERE: {}}}}
    state = NodeState(root=ROOT, tree=tree, allocations=allocations)
    completed = batch.for_check(listing, [(NODE, state)], DescribedDriver({"cn1": NODE}, shims=()))
    assert lookup.asked[-1] == ([ELSEWHERE], [])
    assert set(completed.by_uuid) == {ROOT, ELSEWHERE}


def test_nothing_more_is_read_when_the_batch_listing_already_holds_every_key():
    lookup = Lookup([provider(ROOT, "cn1")])
    batch = provider_listing.BatchListing(lookup)
    listing = batch.of_nodes([NODE])
    tree = ProviderTree()
    tree.new_root("cn1", ROOT)
    state = NodeState(root=ROOT, tree=tree, allocations={})
    assert batch.for_check(listing, [(NODE, state)],
                           DescribedDriver({"cn1": NODE}, shims=())) is listing
    assert len(lookup.asked) == 1


def test_a_source_that_lists_providers_gets_the_batch_listing_else_the_whole_one():
    assert isinstance(provider_listing.listing_for(object(), Lookup([])),  # type: ignore[arg-type]
                      provider_listing.BatchListing)
    whole = provider_listing.listing_for(object(), None)  # type: ignore[arg-type]
    assert isinstance(whole, provider_listing.WholeListing)
    assert whole.per_batch is False
