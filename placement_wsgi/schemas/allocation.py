"""Schemas of PUT /allocations/{c} and POST /allocations, per version range.

Built from small pieces so that each version's schema reads as "the
previous one plus ...".
"""

from __future__ import annotations

import copy
from typing import Any

RESOURCES = {
    "type": "object",
    "minProperties": 1,
    "patternProperties": {"^[A-Z0-9_]+$": {"type": "integer", "minimum": 1}},
    "additionalProperties": False,
}

_OWNER_STRING = {"type": "string", "minLength": 1, "maxLength": 255}

MAPPINGS = {
    "type": "object",
    "minProperties": 1,
    "patternProperties": {
        "^[a-zA-Z0-9_-]{1,64}$": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "format": "uuid"},
        },
    },
}

CONSUMER_TYPE = {"type": "string", "pattern": "^[A-Z0-9_]+$", "minLength": 1, "maxLength": 255}

# -- list format: 1.0 - 1.11 --------------------------------------------------

PUT_LIST_V1_0: dict[str, Any] = {
    "type": "object",
    "properties": {
        "allocations": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "resource_provider": {
                        "type": "object",
                        "properties": {"uuid": {"type": "string", "format": "uuid"}},
                        "required": ["uuid"],
                        "additionalProperties": False,
                    },
                    "resources": RESOURCES,
                },
                "required": ["resource_provider", "resources"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["allocations"],
    "additionalProperties": False,
}

PUT_LIST_V1_8 = copy.deepcopy(PUT_LIST_V1_0)
PUT_LIST_V1_8["properties"]["project_id"] = _OWNER_STRING
PUT_LIST_V1_8["properties"]["user_id"] = _OWNER_STRING
PUT_LIST_V1_8["required"] += ["project_id", "user_id"]

# -- dict format: 1.12+ --------------------------------------------------------

_PROVIDER_ALLOCATIONS = {
    "type": "object",
    "minProperties": 1,
    "patternProperties": {
        "^[0-9a-fA-F-]{36}$": {
            "type": "object",
            "properties": {"generation": {"type": "integer"}, "resources": RESOURCES},
            "required": ["resources"],
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}

PUT_DICT_V1_12: dict[str, Any] = {
    "type": "object",
    "properties": {
        "allocations": _PROVIDER_ALLOCATIONS,
        "project_id": _OWNER_STRING,
        "user_id": _OWNER_STRING,
    },
    "required": ["allocations", "project_id", "user_id"],
    "additionalProperties": False,
}

PUT_DICT_V1_28 = copy.deepcopy(PUT_DICT_V1_12)
PUT_DICT_V1_28["properties"]["allocations"]["minProperties"] = 0
PUT_DICT_V1_28["properties"]["consumer_generation"] = {"type": ["integer", "null"]}
PUT_DICT_V1_28["required"].append("consumer_generation")

PUT_DICT_V1_34 = copy.deepcopy(PUT_DICT_V1_28)
PUT_DICT_V1_34["properties"]["mappings"] = MAPPINGS

PUT_DICT_V1_38 = copy.deepcopy(PUT_DICT_V1_34)
PUT_DICT_V1_38["properties"]["consumer_type"] = CONSUMER_TYPE
PUT_DICT_V1_38["required"].append("consumer_type")


def put_schema(version: tuple[int, int]) -> dict[str, Any]:
    if version >= (1, 38):
        return PUT_DICT_V1_38
    if version >= (1, 34):
        return PUT_DICT_V1_34
    if version >= (1, 28):
        return PUT_DICT_V1_28
    if version >= (1, 12):
        return PUT_DICT_V1_12
    if version >= (1, 8):
        return PUT_LIST_V1_8
    return PUT_LIST_V1_0


def _post_schema(consumer_schema: dict[str, Any]) -> dict[str, Any]:
    consumer = copy.deepcopy(consumer_schema)
    consumer["properties"]["allocations"]["minProperties"] = 0
    return {
        "type": "object",
        "minProperties": 1,
        "patternProperties": {"^[0-9a-fA-F-]{36}$": consumer},
        "additionalProperties": False,
    }


POST_V1_13 = _post_schema(PUT_DICT_V1_12)
POST_V1_28 = _post_schema(PUT_DICT_V1_28)
POST_V1_34 = _post_schema(PUT_DICT_V1_34)
POST_V1_38 = _post_schema(PUT_DICT_V1_38)


def post_schema(version: tuple[int, int]) -> dict[str, Any]:
    if version >= (1, 38):
        return POST_V1_38
    if version >= (1, 34):
        return POST_V1_34
    if version >= (1, 28):
        return POST_V1_28
    return POST_V1_13
