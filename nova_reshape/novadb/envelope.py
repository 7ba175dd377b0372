"""nova's versioned-object envelope and the field readers every parser shares.

nova serializes an object as ``{"nova_object.name": ..., "nova_object.version":
..., "nova_object.data": {...}, "nova_object.changes": [...]}``; nested objects
are envelopes inside ``data``. :func:`unwrap` turns such a document into
:class:`VersionedObject` trees; the parsers in :mod:`nova_reshape.novadb.objects`
and :mod:`nova_reshape.novadb.devices` build records from them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nova_reshape.nova.cpuset import parse_cpuset
from nova_reshape.nova.errors import ObjectFormatError

NAME = "nova_object.name"
VERSION = "nova_object.version"
DATA = "nova_object.data"


@dataclass(frozen=True)
class VersionedObject:
    """One unwrapped envelope: object name, ``(major, minor)`` version, fields."""

    name: str
    version: tuple[int, int]
    data: Mapping[str, Any]

    def at_least(self, major: int, minor: int) -> bool:
        return self.version >= (major, minor)


def version_tuple(text: Any) -> tuple[int, int]:
    """``"1.5"`` -> ``(1, 5)``; ObjectFormatError when not ``major.minor``."""
    major, _, minor = str(text).partition(".")
    try:
        return int(major), int(minor or 0)
    except ValueError as error:
        raise ObjectFormatError(f"bad object version {text!r}") from error


def unwrap(primitive: Any) -> Any:
    """Replace every envelope in a decoded JSON document by a VersionedObject."""
    if isinstance(primitive, list):
        return [unwrap(item) for item in primitive]
    if not isinstance(primitive, dict):
        return primitive
    if NAME not in primitive:
        return {key: unwrap(value) for key, value in primitive.items()}
    data = primitive.get(DATA, {})
    if not isinstance(data, dict):
        raise ObjectFormatError(f"{primitive[NAME]}: nova_object.data is not a mapping")
    return VersionedObject(name=str(primitive[NAME]),
                           version=version_tuple(primitive.get(VERSION, "1.0")),
                           data={key: unwrap(value) for key, value in data.items()})


def load_json(text: str | bytes | None, what: str) -> Any:
    """Decode a column's JSON text (None and "" stay None)."""
    if text is None or text in ("", b""):
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError) as error:
        raise ObjectFormatError(f"{what} is not JSON: {error}") from error


def expect(value: Any, name: str) -> VersionedObject:
    """``value`` as a VersionedObject named ``name``, or ObjectFormatError."""
    if not isinstance(value, VersionedObject):
        raise ObjectFormatError(f"expected a {name} object, found {type(value).__name__}")
    if value.name != name:
        raise ObjectFormatError(f"expected a {name} object, found {value.name}")
    return value


def int_set(value: Any, what: str) -> frozenset[int]:
    if value is None:
        return frozenset()
    if not isinstance(value, list | tuple):
        raise ObjectFormatError(f"{what} is not a list of CPU numbers")
    try:
        return frozenset(int(item) for item in value)
    except (TypeError, ValueError) as error:
        raise ObjectFormatError(f"{what} holds a value that is not a number") from error


def cpu_spec(value: Any, what: str) -> frozenset[int]:
    try:
        return parse_cpuset(str(value or ""))
    except ValueError as error:
        raise ObjectFormatError(f"{what}: {error}") from error


def required(data: Mapping[str, Any], key: str, what: str) -> Any:
    if key not in data or data[key] is None:
        raise ObjectFormatError(f"{what} has no {key}")
    return data[key]
