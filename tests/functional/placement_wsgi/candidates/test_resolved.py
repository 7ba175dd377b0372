"""Names resolved once per request: unknown classes and traits are 400s, in Placement's order."""

from __future__ import annotations

import urllib.parse

import pytest

from placement_wsgi import errors
from placement_wsgi.candidates import loader
from placement_wsgi.candidates.request import parse_query
from placement_wsgi.candidates.resolved import ResolvedRequest, resolve
from placement_wsgi.microversion import Version
from tests.functional.placement_wsgi.candidates.world import World


def test_unknown_names(two_computes: World) -> None:
    with pytest.raises(errors.BadRequest) as caught:
        two_computes.candidates("resources=VCPU:1,CUSTOM_NOPE:1")
    assert caught.value.message == (
        "Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE.")
    with pytest.raises(errors.BadRequest) as caught:
        two_computes.candidates("resources=VCPU:1&required=CUSTOM_Z,!CUSTOM_Y")
    assert caught.value.message == "No such trait(s): CUSTOM_Y, CUSTOM_Z."
    with pytest.raises(errors.BadRequest) as caught:  # root_required first
        two_computes.candidates("resources=CUSTOM_NOPE:1&root_required=CUSTOM_W")
    assert caught.value.message == "No such trait(s): CUSTOM_W."


def _resolved(world: World, query: str) -> ResolvedRequest:
    items = urllib.parse.parse_qsl(world.expand(query))
    request = parse_query(items, Version(1, 39))
    with world.database.engine.connect() as connection:
        return resolve(connection, request)


def test_stocked_classes_are_those_with_an_inventory(two_computes: World) -> None:
    resolved = _resolved(two_computes, "resources=VCPU:1")
    names = {name: rc for rc, name in resolved.class_names.items()}
    assert resolved.stocked_classes == {names["VCPU"], names["MEMORY_MB"], names["DISK_GB"]}
    assert resolved.other_classes() == {names["MEMORY_MB"], names["DISK_GB"]}
    assert not _resolved(two_computes,
                         "resources=VCPU:1,MEMORY_MB:1,DISK_GB:1").other_classes()
    unknown = ResolvedRequest(request=resolved.request, groups=resolved.groups,
                              class_names=resolved.class_names)  # not known: every class
    assert unknown.other_classes() == set(resolved.class_names) - {names["VCPU"]}


def test_summaries_without_other_stocked_classes_skip_their_read(two_computes: World,
                                                                  monkeypatch) -> None:
    """Every stocked class asked for: the summaries do not read other classes, and
    still show every class (all of them come from the request's own read)."""
    read = []
    monkeypatch.setattr(loader._OTHER_INVENTORIES, "rows",
                        lambda *args: read.append(args) or [])
    monkeypatch.setattr(loader._OTHER_INVENTORIES_IN_TREES, "rows",
                        lambda *args: read.append(args) or [])
    body = two_computes.candidates("resources=VCPU:1,MEMORY_MB:1,DISK_GB:1", "1.27")
    assert read == []
    summaries = two_computes.summaries(body)
    assert summaries["cn2"]["resources"] == {
        "VCPU": {"capacity": 8, "used": 0}, "MEMORY_MB": {"capacity": 2048, "used": 0}}
    assert summaries["disk"]["resources"] == {"DISK_GB": {"capacity": 100, "used": 0}}
    two_computes.candidates("resources=VCPU:1&in_tree={cn2}", "1.27")
    assert len(read) == 1  # MEMORY_MB and DISK_GB are stocked and not asked for
