"""Policy decisions remembered while the rules they came from stay the same.

oslo.policy evaluates a rule from scratch on every request: it checks the
policy files for changes (``load_rules``), then walks the rule's checks,
introspecting each check's signature. For the in-process migration that is
tens of thousands of identical questions ("may admin,service do
placement:reshaper:reshape?"), each costing about a fifth of a millisecond.

:class:`PolicyDecisions` answers a question it has answered before from a
dictionary, under this invalidation rule:

* Before every answer the enforcer's ``load_rules()`` runs, exactly as
  ``authorize`` would run it, so a changed policy file (or policy.d
  directory) is read as before. oslo.policy replaces its ``rules`` mapping
  with a new object whenever it loads changed rules (``set_rules`` with
  ``overwrite``, the Enforcer's default, which this service never changes),
  so a new ``rules`` object empties the cache.
* Options such as ``enforce_new_defaults`` take effect when oslo.policy
  loads rules, so they reach the decisions through the same new ``rules``.
  Scope checks use the rule's registered ``scope_types`` and the
  credentials, both fixed for a given key.
* Decisions are remembered only while every rule is pure (a function of the
  rule, target and credentials): when any rule uses an ``http:``/``https:``
  check, whose answer comes from a remote server, nothing is cached.

The key holds the rule name, the target and the credentials (frozen; a
value that cannot be frozen makes the question uncached). The cache is
bounded: it is emptied when it reaches :data:`MAX_DECISIONS` entries.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from oslo_policy import policy as oslo_policy

#: Entries kept before the cache is emptied (a deployment has few distinct callers).
MAX_DECISIONS = 4096

#: Check kinds whose answer is not a function of rule, target and credentials.
_REMOTE_KINDS = ("http:", "https:")


def _freeze(value: Any) -> Any:
    """A hashable equivalent of ``value`` (raises TypeError when there is none)."""
    if isinstance(value, Mapping):
        return tuple(sorted((key, _freeze(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(_freeze(item) for item in value)
    hash(value)
    return value


def _pure(rules: Mapping[str, Any]) -> bool:
    """Whether no rule consults a remote server."""
    return not any(kind in str(check) for check in rules.values() for kind in _REMOTE_KINDS)


class PolicyDecisions:
    """``authorize(rule, target, credentials) -> bool`` over an oslo.policy Enforcer."""

    def __init__(self, enforcer: oslo_policy.Enforcer) -> None:
        self.enforcer = enforcer
        self._lock = threading.Lock()
        self._rules: Any = None
        self._pure = False
        self._decisions: dict[Any, bool] = {}

    def _decide(self, rule: str, target: Mapping[str, Any],
                credentials: Mapping[str, Any]) -> bool:
        try:
            return bool(self.enforcer.authorize(rule, dict(target), dict(credentials),
                                                do_raise=False))
        except oslo_policy.InvalidScope:
            return False

    def authorize(self, rule: str, target: Mapping[str, Any],
                  credentials: Mapping[str, Any]) -> bool:
        """Whether ``credentials`` may do ``rule`` on ``target`` (scope errors are no).

        Unregistered rules raise as ``Enforcer.authorize`` does.
        """
        enforcer = self.enforcer
        enforcer.load_rules()
        try:
            key = (rule, _freeze(target), _freeze(credentials))
        except TypeError:
            return self._decide(rule, target, credentials)
        with self._lock:
            if enforcer.rules is not self._rules:
                self._rules = enforcer.rules
                self._pure = _pure(enforcer.rules)
                self._decisions = {}
            if not self._pure:
                decisions = None
            else:
                decisions = self._decisions
                if key in decisions:
                    return decisions[key]
        allowed = self._decide(rule, target, credentials)
        if decisions is not None:
            with self._lock:
                if decisions is self._decisions:
                    if len(decisions) >= MAX_DECISIONS:
                        decisions.clear()
                    decisions[key] = allowed
        return allowed
