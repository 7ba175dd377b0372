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

Inside, each check answers True (valid), False (invalid) or None (not
decided here), so ``oneOf`` counts its matching branches only when every
branch is decided.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

Check = Callable[[Any], "bool | None"]

#: Keywords without effect on validity.
_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "default", "examples",
                          "$comment"})


class UnsupportedSchema(ValueError):
    """The schema uses a keyword this acceptor does not implement."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _type_check(name: str) -> Check:
    if name == "object":
        return lambda value: isinstance(value, dict)
    if name == "array":
        return lambda value: isinstance(value, list)
    if name == "string":
        return lambda value: isinstance(value, str)
    if name == "boolean":
        return lambda value: isinstance(value, bool)
    if name == "null":
        return lambda value: value is None
    if name == "number":
        return _is_number
    if name == "integer":
        def integer(value: Any) -> bool | None:
            if isinstance(value, float):
                return None  # 3.0 is an integer to draft 2020-12: jsonschema decides
            return isinstance(value, int) and not isinstance(value, bool)
        return integer
    raise UnsupportedSchema(f"type {name!r}")


def _fold(outcomes: Iterable[bool | None]) -> bool | None:
    """All of the outcomes: one certain fault decides, else any undecided one."""
    undecided = False
    for outcome in outcomes:
        if outcome is False:
            return False
        if outcome is None:
            undecided = True
    return None if undecided else True


def _all(checks: list[Check]) -> Check:
    """Valid when every check is."""
    if len(checks) == 1:
        return checks[0]
    return lambda value: _fold(check(value) for check in checks)


def _plain_values(values: list[Any]) -> bool:
    """Values whose JSON equality is Python's: strings, or integers that are not bools."""
    return (all(type(item) is str for item in values)
            or all(type(item) is int for item in values))


def _object_checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    required = tuple(schema.get("required", ()))
    properties = {name: compile_check(sub) for name, sub in schema.get("properties", {}).items()}
    patterns = [(re.compile(pattern), compile_check(sub))
                for pattern, sub in schema.get("patternProperties", {}).items()]
    additional = schema.get("additionalProperties", True)
    if additional is True:
        additional_check: Check | None = None
        closed = False
    elif additional is False:
        additional_check, closed = None, True
    else:
        additional_check, closed = compile_check(additional), False
    if not (required or properties or patterns or closed or additional_check):
        return checks

    def outcomes(value: dict[str, Any]) -> Iterator[bool | None]:
        for name in required:
            yield name in value
        for key, item in value.items():
            check = properties.get(key)
            matched = check is not None
            if check is not None:
                yield check(item)
            for pattern, pattern_check in patterns:
                if pattern.search(key):
                    matched = True
                    yield pattern_check(item)
            if not matched:
                if closed:
                    yield False
                elif additional_check is not None:
                    yield additional_check(item)

    def members(value: Any) -> bool | None:
        return _fold(outcomes(value)) if isinstance(value, dict) else True
    checks.append(members)
    return checks


def _array_checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    if "items" in schema:
        item_check = compile_check(schema["items"])

        def items(value: Any) -> bool | None:
            return _fold(item_check(item) for item in value) if isinstance(value, list) else True
        checks.append(items)
    if "minItems" in schema:
        least = schema["minItems"]
        checks.append(lambda value: not isinstance(value, list) or len(value) >= least)
    if schema.get("uniqueItems") is True:
        def unique(value: Any) -> bool | None:
            if not isinstance(value, list):
                return True
            if not _plain_values(value):
                return None  # 1 and 1.0 are equal, 1 and True are not: jsonschema decides
            return len(set(value)) == len(value)
        checks.append(unique)
    return checks


def _scalar_checks(schema: dict[str, Any]) -> list[Check]:
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
    if "minimum" in schema:
        lowest = schema["minimum"]
        checks.append(lambda value: not _is_number(value) or value >= lowest)
    if "enum" in schema:
        allowed = list(schema["enum"])
        if not all(type(item) is str for item in allowed):
            raise UnsupportedSchema("enum of values other than strings")
        choices = frozenset(allowed)
        checks.append(lambda value: value in choices if type(value) is str else None)
    if "const" in schema:
        expected = schema["const"]
        if not _plain_values([expected]):
            raise UnsupportedSchema("const other than a string or an integer")
        kind = type(expected)
        checks.append(lambda value: value == expected if type(value) is kind else None)
    return checks


def _one_of(branches: list[Check]) -> Check:
    def exactly_one(value: Any) -> bool | None:
        matching = 0
        for branch in branches:
            outcome = branch(value)
            if outcome is None:
                return None
            matching += outcome
        return matching == 1
    return exactly_one


_SUPPORTED = _ANNOTATIONS | {
    "type", "required", "properties", "patternProperties", "additionalProperties",
    "items", "minItems", "uniqueItems", "minLength", "maxLength", "minimum", "pattern",
    "enum", "const", "oneOf"}


def compile_check(schema: Any) -> Check:
    """The three-valued check of one (sub)schema; UnsupportedSchema if it cannot be."""
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
        if not isinstance(schema["type"], str):
            raise UnsupportedSchema("a list of types")
        checks.append(_type_check(schema["type"]))
    checks += _object_checks(schema) + _array_checks(schema) + _scalar_checks(schema)
    if "oneOf" in schema:
        checks.append(_one_of([compile_check(branch) for branch in schema["oneOf"]]))
    if not checks:
        return lambda value: True
    return _all(checks)


def compile_acceptor(schema: dict[str, Any]) -> Callable[[Any], bool]:
    """``accepts(document)``: True only if jsonschema would find no error in it.

    False means "ask jsonschema", not necessarily "invalid"."""
    check = compile_check(schema)
    return lambda document: check(document) is True
