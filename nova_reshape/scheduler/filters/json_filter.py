"""JsonFilter: a tiny query language over HostState, passed as the ``query`` hint.

Semantics are nova's, quirks included (see the facts, item 16): arguments
evaluating to None are dropped (changing arity), ``not`` returns a list,
and ``and``/``or`` are Python's ``all``/``any`` over their arguments, so a
nested non-empty ``not`` list is truthy and excludes nothing, while any
truthy value (a number, a string) satisfies ``or``.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from typing import Any

from nova_reshape.scheduler.filters.base import HostCheck, PreparedHostFilter
from nova_reshape.scheduler.request_spec import RequestSpec


def _compare(op: Callable[[Any, Any], bool]) -> Callable[[list[Any]], bool]:
    def command(args: list[Any]) -> bool:
        if len(args) < 2:
            return False
        first = args[0]
        # Every comparison is evaluated (a TypeError anywhere aborts, as in nova).
        return all([op(first, other) for other in args[1:]])
    return command


def _in(args: list[Any]) -> bool:
    if len(args) < 2:
        return False
    return args[0] in args[1:]


COMMANDS: dict[str, Callable[[list[Any]], Any]] = {
    "=": _compare(operator.eq),
    "<": _compare(operator.lt),
    ">": _compare(operator.gt),
    "<=": _compare(operator.le),
    ">=": _compare(operator.ge),
    "in": _in,
    "not": lambda args: [not arg for arg in args],
    "or": any,
    "and": all,
}


def _variable(text: str, host_state: Any) -> Any:
    if not text:
        return None
    if not text.startswith("$"):
        return text
    path = text[1:].split(".")
    value = getattr(host_state, path[0], None)
    if value is None:
        return None
    for part in path[1:]:
        value = value.get(part)
        if value is None:
            return None
    return value


def evaluate(query: Any, host_state: Any) -> Any:
    """Evaluate a parsed query against one host (KeyError for an unknown operator)."""
    if not query:
        return True
    command = COMMANDS[query[0]]
    args = []
    for arg in query[1:]:
        if isinstance(arg, list):
            arg = evaluate(arg, host_state)
        elif isinstance(arg, str):
            arg = _variable(arg, host_state)
        if arg is not None:
            args.append(arg)
    return command(args)


def compile_query(query: Any) -> Callable[[Any], Any]:
    """``evaluate`` with the query parsed once: a function of the host.

    Raises KeyError for an unknown operator at once (``evaluate`` would raise
    it on the first host, since every argument is always evaluated).
    """
    if not query:
        return lambda host_state: True
    command = COMMANDS[query[0]]
    parts: list[tuple[int, Any]] = []  # (kind, payload): 0 constant, 1 variable, 2 sub-query
    for arg in query[1:]:
        if isinstance(arg, list):
            parts.append((2, compile_query(arg)))
        elif isinstance(arg, str):
            if not arg:
                continue
            if arg.startswith("$"):
                path = arg[1:].split(".")
                parts.append((1, (path[0], path[1:])))
            else:
                parts.append((0, arg))
        elif arg is not None:
            parts.append((0, arg))
    if all(kind == 0 for kind, _ in parts):
        constant = command([payload for _, payload in parts])
        return lambda host_state: constant

    def run(host_state: Any) -> Any:
        args = []
        for kind, payload in parts:
            if kind == 0:
                args.append(payload)
                continue
            if kind == 2:
                value = payload(host_state)
            else:
                value = getattr(host_state, payload[0], None)
                for part in payload[1]:
                    if value is None:
                        break
                    value = value.get(part)
            if value is not None:
                args.append(value)
        return command(args)
    return run


class JsonFilter(PreparedHostFilter):
    """Keeps hosts for which the JSON ``query`` hint evaluates truthy."""

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        text = spec_obj.get_scheduler_hint("query")
        if not text:
            return None
        run = compile_query(json.loads(text))
        reject = self.reject

        def check(host_state):
            result = run(host_state)
            if isinstance(result, list):
                result = any(result)
            if result:
                return True
            return reject("query %s is false for this host", text)
        return check
