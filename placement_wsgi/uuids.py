"""UUID checks shared by body schemas, query parsing and objects.

Pure functions without WebOb, so objects and query parsing can use them
without depending on the HTTP layer. Placement accepts two spellings: the
lenient one (anything Python's :class:`uuid.UUID` parses whose hex digits
are exactly the value's) for bodies and paths, and the strict hyphenated
one for query strings.
"""

from __future__ import annotations

import re
import uuid as uuid_module
from typing import Any

_STRIP_FOR_HEX = re.compile(r"[-{}]|^urn:|uuid:", re.IGNORECASE)


def is_lenient_uuid(value: Any) -> bool:
    """Python-parsable UUID whose hex digits are exactly the value's digits."""
    if not isinstance(value, str):
        return False
    try:
        parsed = uuid_module.UUID(value)
    except (ValueError, AttributeError, TypeError):
        return False
    return _STRIP_FOR_HEX.sub("", value).lower() == parsed.hex


def is_strict_uuid(value: Any) -> bool:
    """A lenient UUID with hyphens at positions 8, 13, 18 and 23."""
    if not is_lenient_uuid(value):
        return False
    return len(value) == 36 and all(value[i] == "-" for i in (8, 13, 18, 23))


def canonical_uuid(value: str) -> str:
    return str(uuid_module.UUID(value))
