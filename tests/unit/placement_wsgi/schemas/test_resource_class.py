"""A resource class name: custom, upper case, at most 255 characters."""

from __future__ import annotations

from placement_wsgi.schemas import resource_class
from tests.unit.placement_wsgi.schemas.helpers import accepts


def test_only_custom_names():
    schema = resource_class.RESOURCE_CLASS_NAME
    assert accepts(schema, {"name": "CUSTOM_GOLD_1"})
    for bad in ("VCPU", "CUSTOM_gold", "CUSTOM_" + "X" * 249):
        assert not accepts(schema, {"name": bad}), bad
    assert not accepts(schema, {"name": "CUSTOM_A", "extra": 1})
