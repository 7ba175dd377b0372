"""Schemas of the trait routes."""

LIST_TRAITS_QUERY = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "associated": {"type": "string"},
    },
    "additionalProperties": False,
}

SET_PROVIDER_TRAITS = {
    "type": "object",
    "properties": {
        "traits": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 255},
        },
        "resource_provider_generation": {"type": "integer"},
    },
    "required": ["traits", "resource_provider_generation"],
    "additionalProperties": False,
}
