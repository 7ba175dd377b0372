"""Schemas of the resource class routes.

The same schema validates the POST body, the 1.2-1.6 rename body, and (as
``{"name": <path name>}``) the path of the >=1.7 create-or-verify PUT, so
all three report the same jsonschema messages.
"""

CUSTOM_CLASS_PATTERN = "^CUSTOM_[A-Z0-9_]+$"

RESOURCE_CLASS_NAME = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": CUSTOM_CLASS_PATTERN, "maxLength": 255},
    },
    "required": ["name"],
    "additionalProperties": False,
}
