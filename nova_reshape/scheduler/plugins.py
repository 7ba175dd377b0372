"""One loader for the scheduler's plug-ins: filters and weighers.

nova names plug-ins in its configuration by dotted path; both kinds resolve
the same way:

* an "all" path (``nova.scheduler.filters.all_filters``,
  ``nova.scheduler.weights.all_weighers`` or this project's equivalents)
  stands for every built-in, in nova's order;
* nova's dotted path ending in a built-in's class name
  (``nova.scheduler.weights.ram.RAMWeigher``) is that built-in, and so is
  the bare class name where the kind allows it (weighers);
* any other ``package.module.attr`` is imported: a class, or a callable
  returning a list of classes, each a subclass of the kind's base class.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nova_reshape.scheduler.errors import PluginNotFound


@dataclass(frozen=True)
class PluginKind:
    """How one kind of plug-in is named: base class, built-ins, nova's package."""

    noun: str
    base: type
    builtins: Sequence[type]
    all_paths: frozenset[str]
    nova_package: str
    bare_names: bool = False

    def builtin(self, name: str) -> type | None:
        for cls in self.builtins:
            if cls.__name__ == name:
                return cls
        return None

    def resolve(self, entry: str) -> list[type[Any]]:
        """The classes one configuration entry stands for (PluginNotFound if none)."""
        if entry in self.all_paths:
            return list(self.builtins)
        module_name, _, attr = entry.rpartition(".")
        builtin = self.builtin(attr)
        if builtin is not None and (module_name.startswith(self.nova_package) if module_name
                                    else self.bare_names):
            return [builtin]
        if not module_name:
            raise PluginNotFound(f"unknown {self.noun} {entry!r}: expected a dotted path")
        try:
            obj = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise PluginNotFound(f"cannot load {self.noun} {entry!r}: {exc}") from exc
        if isinstance(obj, type):
            found = [obj]
        elif callable(obj):
            found = list(obj())
        else:
            raise PluginNotFound(f"{entry!r} is neither a {self.noun} class nor a callable")
        for cls in found:
            if not (isinstance(cls, type) and issubclass(cls, self.base)):
                raise PluginNotFound(
                    f"{entry!r}: {cls!r} is not a {self.base.__name__} subclass")
        return found
