"""POST /reshaper bodies per microversion (schemas/reshaper.py)."""

from __future__ import annotations

from placement_wsgi.schemas import reshaper
from tests.unit.placement_wsgi.schemas.helpers import accepts

RP = "5a3a0a58-0c4b-4b5e-9c3a-3f0a6d6c1d2e"
CONSUMER = "c0000000-0000-4000-8000-000000000001"


def body(**consumer) -> dict:
    return {"inventories": {RP: {"resource_provider_generation": 1, "inventories": {}}},
            "allocations": {CONSUMER: {"allocations": {}, "project_id": "p", "user_id": "u",
                                       "consumer_generation": None, **consumer}}}


def test_schema_by_version():
    assert reshaper.reshaper_schema((1, 30)) is reshaper.RESHAPER_V1_30
    assert reshaper.reshaper_schema((1, 36)) is reshaper.RESHAPER_V1_34
    assert reshaper.reshaper_schema((1, 39)) is reshaper.RESHAPER_V1_38


def test_inventories_and_allocations_as_the_allocation_schemas_have_them():
    assert accepts(reshaper.RESHAPER_V1_30, body())
    assert not accepts(reshaper.RESHAPER_V1_30, {"inventories": {}})
    assert not accepts(reshaper.RESHAPER_V1_38, body())  # consumer_type from 1.38
    assert accepts(reshaper.RESHAPER_V1_38, body(consumer_type="INSTANCE"))
    assert not accepts(reshaper.RESHAPER_V1_38, {**body(consumer_type="INSTANCE"),
                                                 "allocations": {"not-a-uuid": {}}})
