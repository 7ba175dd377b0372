"""GET /usages query strings: a project always, a consumer type from 1.38."""

from __future__ import annotations

from placement_wsgi.schemas import usage
from tests.unit.placement_wsgi.schemas.helpers import accepts


def test_project_is_required_user_optional():
    assert accepts(usage.TOTAL_USAGES_QUERY, {"project_id": "p1", "user_id": "u1"}, True)
    assert not accepts(usage.TOTAL_USAGES_QUERY, {"user_id": "u1"}, True)
    assert not accepts(usage.TOTAL_USAGES_QUERY, {"project_id": ""}, True)


def test_consumer_type_only_from_1_38_with_the_reference_pattern():
    assert not accepts(usage.TOTAL_USAGES_QUERY, {"project_id": "p", "consumer_type": "X"}, True)
    for value in ("INSTANCE", "all", "allx", "unknown"):
        assert accepts(usage.TOTAL_USAGES_QUERY_1_38, {"project_id": "p",
                                                       "consumer_type": value}, True)
    assert not accepts(usage.TOTAL_USAGES_QUERY_1_38, {"project_id": "p",
                                                       "consumer_type": "lower"}, True)
