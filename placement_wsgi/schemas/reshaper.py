"""Schema of POST /reshaper (1.30; 1.34 adds mappings, 1.38 consumer_type)."""

from __future__ import annotations

import copy
from typing import Any

from placement_wsgi.schemas import allocation, inventory


def _reshaper_schema(post_allocations: dict[str, Any]) -> dict[str, Any]:
    allocations = copy.deepcopy(post_allocations)
    allocations.pop("minProperties", None)  # "allocations": {} is valid
    return {
        "type": "object",
        "properties": {
            "inventories": {
                "type": "object",
                "minProperties": 1,
                "patternProperties": {"^[0-9a-fA-F-]{36}$": inventory.SET_INVENTORIES},
                "additionalProperties": False,
            },
            "allocations": allocations,
        },
        "required": ["inventories", "allocations"],
        "additionalProperties": False,
    }


RESHAPER_V1_30 = _reshaper_schema(allocation.POST_V1_28)
RESHAPER_V1_34 = _reshaper_schema(allocation.POST_V1_34)
RESHAPER_V1_38 = _reshaper_schema(allocation.POST_V1_38)


def reshaper_schema(version: tuple[int, int]) -> dict[str, Any]:
    if version >= (1, 38):
        return RESHAPER_V1_38
    if version >= (1, 34):
        return RESHAPER_V1_34
    return RESHAPER_V1_30
