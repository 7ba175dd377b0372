"""Query-string schemas of GET /usages."""

from __future__ import annotations

import copy
from typing import Any

_NAME = {"type": "string", "minLength": 1, "maxLength": 255}

#: MV 1.9 - 1.37
TOTAL_USAGES_QUERY: dict[str, Any] = {
    "type": "object",
    "properties": {
        "project_id": dict(_NAME),
        "user_id": dict(_NAME),
    },
    "required": ["project_id"],
    "additionalProperties": False,
}

#: MV 1.38 on: ``consumer_type`` filter. The pattern is the reference one,
#: unanchored ``^all`` included (so ``allx`` passes and names no type).
TOTAL_USAGES_QUERY_1_38: dict[str, Any] = copy.deepcopy(TOTAL_USAGES_QUERY)
TOTAL_USAGES_QUERY_1_38["properties"]["consumer_type"] = {
    **_NAME, "pattern": "^[A-Z0-9_]+$|^all|^unknown$",
}
