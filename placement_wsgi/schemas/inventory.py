"""Schemas of the inventory routes.

One record schema is shared by every route; the routes differ only in
which keys are required and whether ``resource_class`` may appear. Bounds
are those of the reference schema's columns: 32-bit signed integers, and a
single-precision float for ``allocation_ratio`` (which has no minimum).
"""

from __future__ import annotations

import copy
from typing import Any

from placement_wsgi.objects.inventory_record import MAX_INT

MAX_FLOAT = 3.40282e38

#: Resource class names in bodies are checked against this before lookup.
RESOURCE_CLASS_PATTERN = "^[A-Z0-9_]+$"


def _integer(minimum: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": minimum, "maximum": MAX_INT}


_RECORD_PROPERTIES: dict[str, Any] = {
    # Accepted and ignored on every route except PUT of a single class.
    "resource_provider_generation": {"type": "integer"},
    "total": _integer(1),
    "reserved": _integer(0),
    "min_unit": _integer(1),
    "max_unit": _integer(1),
    "step_size": _integer(1),
    "allocation_ratio": {"type": "number", "maximum": MAX_FLOAT},
}

#: PUT /resource_providers/{uuid}/inventories/{resource_class}
UPDATE_INVENTORY: dict[str, Any] = {
    "type": "object",
    "properties": _RECORD_PROPERTIES,
    "required": ["total", "resource_provider_generation"],
    "additionalProperties": False,
}

#: POST /resource_providers/{uuid}/inventories
CREATE_INVENTORY: dict[str, Any] = {
    "type": "object",
    "properties": {
        **copy.deepcopy(_RECORD_PROPERTIES),
        "resource_class": {"type": "string", "pattern": RESOURCE_CLASS_PATTERN},
    },
    "required": ["total", "resource_class"],
    "additionalProperties": False,
}

#: One value of ``inventories`` in PUT /resource_providers/{uuid}/inventories.
INVENTORY_RECORD: dict[str, Any] = {
    "type": "object",
    "properties": copy.deepcopy(_RECORD_PROPERTIES),
    "required": ["total"],
    "additionalProperties": False,
}

#: PUT /resource_providers/{uuid}/inventories (also the per-provider value of
#: the reshaper's ``inventories``). Keys that do not match the pattern are not
#: checked here; they fail later as unknown resource classes.
SET_INVENTORIES: dict[str, Any] = {
    "type": "object",
    "properties": {
        "resource_provider_generation": {"type": "integer"},
        "inventories": {
            "type": "object",
            "patternProperties": {RESOURCE_CLASS_PATTERN: INVENTORY_RECORD},
        },
    },
    "required": ["resource_provider_generation", "inventories"],
    "additionalProperties": False,
}
