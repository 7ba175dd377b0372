"""Schemas of PUT /resource_providers/{uuid}/aggregates.

Before 1.19 the body is a bare list of aggregate uuids; from 1.19 it is an
object that also carries the provider generation the client last saw.
"""

#: ``maxLength`` is ours, not upstream's: uuids are stored verbatim in a
#: 36-character column, so a lenient form such as ``urn:uuid:...`` or
#: ``{...}`` would otherwise be a database error (500) on PostgreSQL/MySQL.
AGGREGATE_UUIDS = {
    "type": "array",
    "items": {"type": "string", "format": "uuid", "maxLength": 36},
    "uniqueItems": True,
}

SET_AGGREGATES_V1_1 = AGGREGATE_UUIDS

SET_AGGREGATES_V1_19 = {
    "type": "object",
    "properties": {
        "aggregates": AGGREGATE_UUIDS,
        "resource_provider_generation": {"type": "integer"},
    },
    "required": ["aggregates", "resource_provider_generation"],
    "additionalProperties": False,
}
