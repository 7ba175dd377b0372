"""Allocation bodies per microversion: list, dict, generations, mappings, consumer types."""

from __future__ import annotations

import pytest

from placement_wsgi.schemas import allocation
from tests.unit.placement_wsgi.schemas.helpers import accepts

RP = "5a3a0a58-0c4b-4b5e-9c3a-3f0a6d6c1d2e"
CONSUMER = "c0000000-0000-4000-8000-000000000001"
DICT_BODY = {"allocations": {RP: {"resources": {"VCPU": 1}}}, "project_id": "p",
             "user_id": "u"}


@pytest.mark.parametrize(("version", "schema"), [
    ((1, 0), allocation.PUT_LIST_V1_0), ((1, 8), allocation.PUT_LIST_V1_8),
    ((1, 12), allocation.PUT_DICT_V1_12), ((1, 27), allocation.PUT_DICT_V1_12),
    ((1, 28), allocation.PUT_DICT_V1_28), ((1, 34), allocation.PUT_DICT_V1_34),
    ((1, 39), allocation.PUT_DICT_V1_38)])
def test_put_schema_by_version(version, schema):
    assert allocation.put_schema(version) is schema


def test_what_each_version_adds_is_required_from_then_on():
    assert accepts(allocation.PUT_DICT_V1_12, DICT_BODY)
    assert not accepts(allocation.PUT_DICT_V1_28, DICT_BODY)  # consumer_generation
    with_generation = {**DICT_BODY, "consumer_generation": None}
    assert accepts(allocation.PUT_DICT_V1_28, with_generation)
    assert accepts(allocation.PUT_DICT_V1_34, {**with_generation, "mappings": {"": [RP]}})
    assert not accepts(allocation.PUT_DICT_V1_38, with_generation)  # consumer_type
    assert accepts(allocation.PUT_DICT_V1_38, {**with_generation, "consumer_type": "INSTANCE"})
    assert not accepts(allocation.PUT_DICT_V1_38,
                       {**with_generation, "consumer_type": "instance"})


def test_post_takes_consumers_by_uuid_and_lets_one_release_everything():
    assert allocation.post_schema((1, 13)) is allocation.POST_V1_13
    assert allocation.post_schema((1, 39)) is allocation.POST_V1_38
    assert accepts(allocation.POST_V1_13, {CONSUMER: {**DICT_BODY, "allocations": {}}})
    assert not accepts(allocation.PUT_DICT_V1_12, {**DICT_BODY, "allocations": {}})
    assert not accepts(allocation.POST_V1_13, {})
    assert not accepts(allocation.POST_V1_13, {"not-a-uuid": DICT_BODY})
