"""PUT /resource_providers/{uuid}/aggregates bodies before and from 1.19."""

from __future__ import annotations

from placement_wsgi.schemas import aggregate
from tests.unit.placement_wsgi.schemas.helpers import accepts

AGG = "5a3a0a58-0c4b-4b5e-9c3a-3f0a6d6c1d2e"


def test_a_bare_list_before_1_19():
    assert accepts(aggregate.SET_AGGREGATES_V1_1, [AGG])
    assert not accepts(aggregate.SET_AGGREGATES_V1_1, [AGG, AGG])  # unique
    assert not accepts(aggregate.SET_AGGREGATES_V1_1, ["urn:uuid:" + AGG])  # over 36 chars


def test_an_object_with_the_generation_from_1_19():
    assert accepts(aggregate.SET_AGGREGATES_V1_19,
                   {"aggregates": [AGG], "resource_provider_generation": 1})
    assert not accepts(aggregate.SET_AGGREGATES_V1_19, {"aggregates": [AGG]})
    assert not accepts(aggregate.SET_AGGREGATES_V1_19, [AGG])
