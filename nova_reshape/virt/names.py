"""Resource class and trait names as nova normalizes operator-given tags.

A tag from a configuration or description (``nvidia_11``, ``a100``) is
upper-cased, characters outside ``A-Z0-9_`` become ``_``, and the result
is prefixed with ``CUSTOM_`` unless it is a standard name (from
os-resource-classes / os-traits) or already custom.
"""

from __future__ import annotations

import re

import os_resource_classes
import os_traits

_STANDARD_TRAITS = frozenset(os_traits.get_traits())


def _normalize(name: str) -> str:
    return re.sub(r"[^A-Z0-9_]", "_", name.upper())


def normalize_resource_class(name: str) -> str:
    """Upper-cased; standard classes kept, anything else made ``CUSTOM_``."""
    name = _normalize(name)
    if name in os_resource_classes.STANDARDS or name.startswith("CUSTOM_"):
        return name
    return f"CUSTOM_{name}"


def normalize_trait(name: str) -> str:
    """Upper-cased; standard traits kept, anything else made ``CUSTOM_``."""
    name = _normalize(name)
    if name in _STANDARD_TRAITS or name.startswith("CUSTOM_"):
        return name
    return f"CUSTOM_{name}"
