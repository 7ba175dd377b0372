"""Candidates -> JSON text: valid JSON of the microversion's shape, written once per pattern."""

from __future__ import annotations

import json

from placement_wsgi.candidates.format import Formatter, _Template, allocation_providers
from placement_wsgi.candidates.loader import SummaryData
from placement_wsgi.candidates.options import Slot
from placement_wsgi.candidates.request import parse_query
from placement_wsgi.candidates.resolved import ResolvedGroup, ResolvedRequest
from placement_wsgi.microversion import Version

VCPU, MEMORY, DISK = 0, 1, 2
UUIDS = {1: "uuid-root", 2: "uuid-numa", 3: 'uuid "quoted"'}


def _resolved(version: Version) -> ResolvedRequest:
    request = parse_query([("resources", "VCPU:1,DISK_GB:5"), ("resources1", "MEMORY_MB:64")],
                          version)
    return ResolvedRequest(
        request=request,
        groups=[ResolvedGroup(0, "", ((VCPU, 1), (DISK, 5))),
                ResolvedGroup(1, "1", ((MEMORY, 64),))],
        class_names={VCPU: "VCPU", MEMORY: "MEMORY_MB", DISK: "DISK_GB"})


SLOTS = [Slot(0, ((VCPU, 1),), False), Slot(0, ((DISK, 5),), False),
         Slot(1, ((MEMORY, 64),), True)]


def _summary() -> SummaryData:
    return SummaryData(
        uuid_of=dict(UUIDS), parent_of={1: None, 2: 1, 3: None}, root_of={1: 1, 2: 1, 3: 3},
        resources={1: [(DISK, 100, 10)], 2: [(VCPU, 4, 1), (MEMORY, 1024, 0)],
                   3: [(DISK, 50, 0)]},
        traits={1: ["CUSTOM_A"], 3: []})


def _formatter(major_minor: tuple[int, int]) -> Formatter:
    version = Version(*major_minor)
    return Formatter(_resolved(version), SLOTS, _summary(), version)


def test_allocation_providers_skips_resourceless_slots() -> None:
    slots = [*SLOTS, Slot(2, (), True)]
    assert allocation_providers(slots, [(2, 1, 2, 3), (2, 3, 2, 1)]) == {1, 2, 3}
    assert allocation_providers(slots, [(2, 2, 2, 3)]) == {2}


def test_latest_shape_with_mappings() -> None:
    text = _formatter((1, 39)).allocation_request((2, 1, 2))
    assert json.loads(text) == {
        "allocations": {"uuid-numa": {"resources": {"VCPU": 1, "MEMORY_MB": 64}},
                        "uuid-root": {"resources": {"DISK_GB": 5}}},
        "mappings": {"": ["uuid-numa", "uuid-root"], "1": ["uuid-numa"]}}


def test_older_shapes() -> None:
    assert json.loads(_formatter((1, 33)).allocation_request((2, 1, 2))) == {
        "allocations": {"uuid-numa": {"resources": {"VCPU": 1, "MEMORY_MB": 64}},
                        "uuid-root": {"resources": {"DISK_GB": 5}}}}
    assert json.loads(_formatter((1, 11)).allocation_request((2, 1, 2))) == {
        "allocations": [
            {"resource_provider": {"uuid": "uuid-numa"},
             "resources": {"VCPU": 1, "MEMORY_MB": 64}},
            {"resource_provider": {"uuid": "uuid-root"}, "resources": {"DISK_GB": 5}}]}


def test_one_provider_serving_everything() -> None:
    text = _formatter((1, 39)).allocation_request((1, 1, 1))
    assert json.loads(text) == {
        "allocations": {"uuid-root": {"resources": {"VCPU": 1, "DISK_GB": 5, "MEMORY_MB": 64}}},
        "mappings": {"": ["uuid-root"], "1": ["uuid-root"]}}


def test_the_same_pattern_with_other_providers_and_awkward_uuids() -> None:
    formatter = _formatter((1, 39))
    first = json.loads(formatter.allocation_request((2, 1, 2)))
    second = json.loads(formatter.allocation_request((3, 1, 3)))
    assert set(second["allocations"]) == {'uuid "quoted"', "uuid-root"}
    assert second["mappings"]["1"] == ['uuid "quoted"']
    assert first["allocations"]["uuid-numa"] == second["allocations"]['uuid "quoted"']


def test_provider_summaries_by_version() -> None:
    latest = json.loads(_formatter((1, 39)).provider_summaries([1, 2]))
    assert latest == {
        "uuid-root": {"resources": {"DISK_GB": {"capacity": 100, "used": 10}},
                      "traits": ["CUSTOM_A"], "parent_provider_uuid": None,
                      "root_provider_uuid": "uuid-root"},
        "uuid-numa": {"resources": {"VCPU": {"capacity": 4, "used": 1},
                                    "MEMORY_MB": {"capacity": 1024, "used": 0}},
                      "traits": [], "parent_provider_uuid": "uuid-root",
                      "root_provider_uuid": "uuid-root"}}
    assert json.loads(_formatter((1, 16)).provider_summaries([3])) == {
        'uuid "quoted"': {"resources": {"DISK_GB": {"capacity": 50, "used": 0}}}}


def test_body_is_one_json_document() -> None:
    body = json.loads(_formatter((1, 39)).body([(2, 1, 2), (1, 1, 1)], [1, 2]))
    assert len(body["allocation_requests"]) == 2
    assert set(body["provider_summaries"]) == {"uuid-root", "uuid-numa"}


def test_template_fills_every_hole_verbatim() -> None:
    """Holes repeat (``mappings`` names a provider again) and values are text, never
    a format string: braces in them stay as they are."""
    template = _Template('{"a":\x000\x00,"b":[\x001\x00,\x000\x00]}')
    assert template.fill(['"{1}"', '"x"']) == '{"a":"{1}","b":["x","{1}"]}'
    assert _Template("\x000\x00!").fill(["only"]) == "only!"
    assert _Template("no holes").fill([]) == "no holes"
