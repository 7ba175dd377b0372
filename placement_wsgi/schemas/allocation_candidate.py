"""Query-string schemas of GET /allocation_candidates, one per microversion range.

The flat dict of the last value of every key is validated against these
(``additionalProperties: false``), so unknown keys and malformed ``limit`` /
``group_policy`` values fail with jsonschema's message. From 1.25 the group
keys are pattern properties, which changes the unknown-key message to
"... does not match any of the regexes: ...".
"""

from __future__ import annotations

import copy

from placement_wsgi.microversion import Version

_STRING = {"type": "string"}

#: Group suffixes: numbers (1.25-1.32), then names (1.33+).
NUMBERED_SUFFIX = "[1-9][0-9]*"
NAMED_SUFFIX = "[a-zA-Z0-9_-]{1,64}"

_V1_10 = {
    "type": "object",
    "properties": {"resources": _STRING},
    "required": ["resources"],
    "additionalProperties": False,
}

_V1_16 = copy.deepcopy(_V1_10)
_V1_16["properties"]["limit"] = {"type": "string", "pattern": "^[1-9][0-9]*$"}

_V1_17 = copy.deepcopy(_V1_16)
_V1_17["properties"]["required"] = _STRING

_V1_21 = copy.deepcopy(_V1_17)
_V1_21["properties"]["member_of"] = _STRING


def _granular(suffix: str, prefixes: tuple[str, ...], extra: dict) -> dict:
    schema = {
        "type": "object",
        "properties": {
            "limit": {"type": "string", "pattern": "^[1-9][0-9]*$"},
            "group_policy": {"type": "string", "enum": ["none", "isolate"]},
            **extra,
        },
        "patternProperties": {f"^{prefix}({suffix})?$": _STRING for prefix in prefixes},
        "additionalProperties": False,
    }
    return schema


_GROUP_KEYS = ("resources", "required", "member_of")
_V1_25 = _granular(NUMBERED_SUFFIX, _GROUP_KEYS, {})
_V1_31 = _granular(NUMBERED_SUFFIX, _GROUP_KEYS + ("in_tree",), {})
_V1_33 = _granular(NAMED_SUFFIX, _GROUP_KEYS + ("in_tree",), {})
_V1_35 = _granular(NAMED_SUFFIX, _GROUP_KEYS + ("in_tree",), {"root_required": _STRING})
_V1_36 = _granular(NAMED_SUFFIX, _GROUP_KEYS + ("in_tree",),
                   {"root_required": _STRING, "same_subtree": _STRING})

_BY_VERSION = [
    ((1, 36), _V1_36), ((1, 35), _V1_35), ((1, 33), _V1_33), ((1, 31), _V1_31),
    ((1, 25), _V1_25), ((1, 21), _V1_21), ((1, 17), _V1_17), ((1, 16), _V1_16),
    ((1, 10), _V1_10),
]


def query_schema(version: Version) -> dict:
    """The schema for ``version`` (the same dict object for every call)."""
    for minimum, schema in _BY_VERSION:
        if version >= minimum:
            return schema
    return _V1_10
