"""Schemas of the /resource_providers routes.

Each microversion range that changes what is accepted has its own schema
object; the ``*_for`` functions pick one. The objects are module constants
because util.validate caches a compiled validator per schema object.
"""

from __future__ import annotations

import copy

from placement_wsgi.microversion import Version

_NAME = {"type": "string", "maxLength": 200}
_UUID = {"type": "string", "format": "uuid"}
_PARENT = {"anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]}


def _extended(schema: dict, **properties: dict) -> dict:
    """A copy of ``schema`` with more properties."""
    extended = copy.deepcopy(schema)
    extended["properties"].update(properties)
    return extended


# -- POST /resource_providers -----------------------------------------------------

CREATE_1_0 = {
    "type": "object",
    "properties": {"name": _NAME, "uuid": _UUID},
    "required": ["name"],
    "additionalProperties": False,
}
CREATE_1_14 = _extended(CREATE_1_0, parent_provider_uuid=_PARENT)


def create_schema_for(version: Version) -> dict:
    return CREATE_1_14 if version >= (1, 14) else CREATE_1_0


# -- PUT /resource_providers/{uuid} ------------------------------------------------

UPDATE_1_0 = {
    "type": "object",
    "properties": {"name": _NAME},
    "required": ["name"],
    "additionalProperties": False,
}
UPDATE_1_14 = _extended(UPDATE_1_0, parent_provider_uuid=_PARENT)


def update_schema_for(version: Version) -> dict:
    return UPDATE_1_14 if version >= (1, 14) else UPDATE_1_0


# -- GET /resource_providers query string -----------------------------------------
# Validated as a flat dict of the last value of each key; repeatable keys
# (member_of, required) are then parsed from all their values.

LIST_QUERY_1_0 = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "uuid": _UUID},
    "additionalProperties": False,
}
LIST_QUERY_1_3 = _extended(LIST_QUERY_1_0, member_of={"type": "string"})
LIST_QUERY_1_4 = _extended(LIST_QUERY_1_3, resources={"type": "string"})
LIST_QUERY_1_14 = _extended(LIST_QUERY_1_4, in_tree=_UUID)
LIST_QUERY_1_18 = _extended(LIST_QUERY_1_14, required={"type": "string"})

_LIST_QUERIES = [
    ((1, 18), LIST_QUERY_1_18),
    ((1, 14), LIST_QUERY_1_14),
    ((1, 4), LIST_QUERY_1_4),
    ((1, 3), LIST_QUERY_1_3),
    ((1, 0), LIST_QUERY_1_0),
]


def list_query_schema_for(version: Version) -> dict:
    for since, schema in _LIST_QUERIES:
        if version >= since:
            return schema
    return LIST_QUERY_1_0
