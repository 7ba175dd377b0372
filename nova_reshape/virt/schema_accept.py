"""A fast acceptance test for a JSON Schema; jsonschema still names the faults.

jsonschema costs about 0.74 CPU-ms per host file of 4 GPUs and 16
instances: it descends into each of some 125 subschemas by building a
validator for it. :func:`compile_acceptor` turns a schema into nested
closures that answer one question, "is this document certainly valid?",
with the draft 2020-12 meaning of the keywords used by this project's
host schema (``type``, ``required``, ``properties``, ``patternProperties``,
``additionalProperties``, ``items``, ``minItems``, ``uniqueItems``,
``minLength``, ``maxLength``, ``minimum``, ``pattern``, ``enum``,
``const``, ``oneOf``; annotations are ignored).

The contract: the acceptor answers True only for documents jsonschema
finds no error in. Anything else (a fault, or a value whose meaning it does
not decide itself, such as a float where an integer is asked for, or an
``enum`` of a non-string) is answered False, and the caller then runs
jsonschema, whose errors it reports as before: a bad document gives the
same message, a good one is not descended into twice. A schema with a
keyword not listed above raises :class:`UnsupportedSchema` when compiled,
so a later change of the schema cannot be accepted by a test that ignores
the new keyword.

Inside, each check answers True (valid) or False (invalid), or raises
``_Undecided`` for a value it leaves to jsonschema, which makes the whole
answer "ask jsonschema": so ``oneOf`` counts its matching branches only
when every branch is decided.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

#: Keywords without effect on validity.
_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "default", "examples",
                          "$comment"})


class UnsupportedSchema(ValueError):
    """The schema uses a keyword this acceptor does not implement."""


class _Undecided(Exception):
    """A value whose meaning jsonschema decides itself (the whole answer is "ask it")."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    if isinstance(value, float):
        raise _Undecided  # 3.0 is an integer to draft 2020-12
    return isinstance(value, int) and not isinstance(value, bool)


_TYPES: dict[str, Check] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "number": _is_number,
    "integer": _integer,
}


def _both(first: Check, second: Check) -> Check:
    return lambda value: first(value) and second(value)


def _plain_values(values: list[Any]) -> bool:
    """Values whose JSON equality is Python's: strings, or integers that are not bools."""
    return (all(type(item) is str for item in values)
            or all(type(item) is int for item in values))


def _object_checks(schema: dict[str, Any]) -> list[Check]:
    required = frozenset(schema.get("required", ()))
    properties = {name: compile_check(sub) for name, sub in schema.get("properties", {}).items()}
    patterns = [(re.compile(pattern).search, compile_check(sub))
                for pattern, sub in schema.get("patternProperties", {}).items()]
    additional = schema.get("additionalProperties", True)
    closed = additional is False
    additional_check = None if additional in (True, False) else compile_check(additional)
    if not (required or properties or patterns or closed or additional_check):
        return []

    def member(key: str, item: Any) -> bool:
        check = properties.get(key)
        if check is not None and not check(item):
            return False
        matched = check is not None
        for search, pattern_check in patterns:
            if search(key):
                matched = True
                if not pattern_check(item):
                    return False
        if matched:
            return True
        return not closed and (additional_check is None or additional_check(item))

    def members(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        if not required <= value.keys():
            return False
        if closed and not patterns:  # the usual case: named members only
            return value.keys() <= properties.keys() and all(
                properties[key](item) for key, item in value.items())
        return all(member(key, item) for key, item in value.items())
    return [members]


def _array_checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    if "items" in schema:
        item_check = compile_check(schema["items"])
        checks.append(lambda value: not isinstance(value, list) or all(map(item_check, value)))
    if "minItems" in schema:
        least = schema["minItems"]
        checks.append(lambda value: not isinstance(value, list) or len(value) >= least)
    if schema.get("uniqueItems") is True:
        def unique(value: Any) -> bool:
            if not isinstance(value, list):
                return True
            if not _plain_values(value):
                raise _Undecided  # 1 and 1.0 are equal, 1 and True are not
            return len(set(value)) == len(value)
        checks.append(unique)
    return checks


def _string_checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    if "minLength" in schema:
        shortest = schema["minLength"]
        checks.append(lambda value: not isinstance(value, str) or len(value) >= shortest)
    if "maxLength" in schema:
        longest = schema["maxLength"]
        checks.append(lambda value: not isinstance(value, str) or len(value) <= longest)
    if "pattern" in schema:
        search = re.compile(schema["pattern"]).search
        checks.append(lambda value: not isinstance(value, str) or search(value) is not None)
    return checks


def _value_checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    if "minimum" in schema:
        lowest = schema["minimum"]
        checks.append(lambda value: not _is_number(value) or value >= lowest)
    if "enum" in schema:
        allowed = list(schema["enum"])
        if not all(type(item) is str for item in allowed):
            raise UnsupportedSchema("enum of values other than strings")
        choices = frozenset(allowed)
        checks.append(lambda value: _same_kind(value, str) and value in choices)
    if "const" in schema:
        expected = schema["const"]
        if not _plain_values([expected]):
            raise UnsupportedSchema("const other than a string or an integer")
        kind = type(expected)
        checks.append(lambda value: _same_kind(value, kind) and value == expected)
    return checks


def _same_kind(value: Any, kind: type) -> bool:
    """``type(value) is kind``; any other type is left to jsonschema's equality."""
    if type(value) is not kind:
        raise _Undecided
    return True


def _one_of(branches: list[Check]) -> Check:
    return lambda value: sum(1 for branch in branches if branch(value)) == 1


_SUPPORTED = _ANNOTATIONS | {
    "type", "required", "properties", "patternProperties", "additionalProperties",
    "items", "minItems", "uniqueItems", "minLength", "maxLength", "minimum", "pattern",
    "enum", "const", "oneOf"}


def compile_check(schema: Any) -> Check:
    """The check of one (sub)schema (raises _Undecided for a value it leaves to
    jsonschema); UnsupportedSchema if it cannot be compiled."""
    if schema is True or schema == {}:
        return lambda value: True
    if not isinstance(schema, dict):
        raise UnsupportedSchema(f"schema {schema!r}")
    unknown = set(schema) - _SUPPORTED
    if unknown:
        raise UnsupportedSchema(f"keywords {sorted(unknown)}")
    if schema.get("uniqueItems") not in (None, True, False):
        raise UnsupportedSchema("uniqueItems")
    checks: list[Check] = []
    if "type" in schema:
        if not isinstance(schema["type"], str) or schema["type"] not in _TYPES:
            raise UnsupportedSchema(f"type {schema['type']!r}")
        checks.append(_TYPES[schema["type"]])
    checks += (_object_checks(schema) + _array_checks(schema) + _string_checks(schema)
               + _value_checks(schema))
    if "oneOf" in schema:
        checks.append(_one_of([compile_check(branch) for branch in schema["oneOf"]]))
    if not checks:
        return lambda value: True
    return functools.reduce(_both, checks)


def compile_acceptor(schema: dict[str, Any]) -> Callable[[Any], bool]:
    """``accepts(document)``: True only if jsonschema would find no error in it.

    False means "ask jsonschema", not necessarily "invalid"."""
    check = compile_check(schema)

    def accepts(document: Any) -> bool:
        try:
            return check(document)
        except _Undecided:
            return False
    return accepts
