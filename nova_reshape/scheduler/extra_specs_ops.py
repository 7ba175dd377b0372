"""Extra-spec requirement matching (``"<in> avx"``, ``">= 2048"``, ``"<or> a <or> b"``).

``match(value, requirement)`` has nova's exact semantics (see the facts,
item 12). ``compile_requirement`` parses a requirement once per request and
returns a matcher, so filters do no string splitting per host.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

Matcher = Callable[[Any], bool]


def _num(op: Callable[[float, float], bool]) -> Callable[[Any, str], bool]:
    return lambda value, operand: op(float(value), float(operand))


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "=": _num(operator.ge),
    "==": _num(operator.eq),
    "!=": _num(operator.ne),
    ">=": _num(operator.ge),
    "<=": _num(operator.le),
    "s==": operator.eq,
    "s!=": operator.ne,
    "s<": operator.lt,
    "s<=": operator.le,
    "s>": operator.gt,
    "s>=": operator.ge,
    "<in>": lambda value, operand: operand in value,
    "<all-in>": lambda value, operands: all(word in value for word in operands),
}

OPERATORS = frozenset(_OPERATORS) | {"<or>"}


def compile_requirement(requirement: str) -> Matcher:
    """A function ``value -> bool`` equivalent to ``match(value, requirement)``.

    Errors nova raises while matching (ValueError for a non-numeric operand
    of a numeric operator, IndexError for a bare ``<or>``) are raised when
    the matcher is called with a non-None value, as in nova.
    """
    words = requirement.split()
    op = words[0] if words else None
    if op not in OPERATORS:
        return lambda value: value == requirement
    operands = words[1:]
    if op == "<or>":
        if not operands:
            def bare_or(value: Any) -> bool:
                if value is None:
                    return False
                raise IndexError("pop from empty list")
            return bare_or
        choices = frozenset(operands[0::2])
        return lambda value: value is not None and value in choices
    if not operands:
        return lambda value: False
    method = _OPERATORS[op]
    operand: Any = operands if op == "<all-in>" else operands[0]
    return lambda value: value is not None and method(value, operand)


def match(value: Any, requirement: str) -> bool:
    """Does ``value`` satisfy the extra-spec ``requirement``? (nova semantics)."""
    return compile_requirement(requirement)(value)
