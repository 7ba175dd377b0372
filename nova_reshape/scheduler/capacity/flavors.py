"""Which flavors a capacity check answers for.

* **In use**: the flavor of every instance of the cells read (its
  ``instance_extra.flavor``), matched by flavor id (else name) to nova's
  API database's flavors, whose current definition a new boot would use;
  an instance's flavor deleted from the API database is checked as the
  instance carries it.
* **All public** (``--all-flavors``): every flavor of the API database with
  ``is_public`` set, added to those in use.
* **Named** (``--flavor NAME``, repeatable): those of the catalogue (the API
  database's, or a flavors file's) by name or flavor id.
* **A flavors file** (``--flavors-file FILE``), YAML or JSON::

      flavors:
        - name: m1.small          # required, unique
          vcpus: 1                # required, >= 1
          memory_mb: 2048         # required, >= 1
          root_gb: 20             # default 0
          ephemeral_gb: 0         # default 0
          swap: 0                 # MB, default 0
          extra_specs:            # default {}
            hw:cpu_policy: dedicated

  Every flavor of the file is checked unless ``--flavor`` names some.

Mistakes in the file or a name that matches nothing are :class:`FlavorError`
(one line; the commands exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import yaml

from nova_reshape.nova.flavor import Flavor
from nova_reshape.novadb.cells import CellsSnapshot

_SIZES = (("vcpus", 1, True), ("memory_mb", 1, True), ("root_gb", 0, False),
          ("ephemeral_gb", 0, False), ("swap", 0, False))


class FlavorError(ValueError):
    """A flavors file or a flavor name the operator must fix (one line)."""


def in_use(cells: CellsSnapshot, catalogue: Sequence[Flavor]) -> list[Flavor]:
    """The flavors of the cells' instances (see the module), by name."""
    by_id = {flavor.flavorid: flavor for flavor in catalogue}
    by_name = {flavor.name: flavor for flavor in catalogue}
    found: dict[str, Flavor] = {}
    for read in cells.cells:
        for instance in read.snapshot.instances:
            if instance.flavor is None:
                continue
            carried = instance.flavor.cur
            flavor = by_id.get(carried.flavorid) or by_name.get(carried.name) or carried
            found.setdefault(flavor.name or flavor.flavorid, flavor)
    return [found[name] for name in sorted(found)]


def together(*groups: Iterable[Flavor]) -> list[Flavor]:
    """The flavors of ``groups``, each name once (the first wins), in order."""
    seen: dict[str, Flavor] = {}
    for group in groups:
        for flavor in group:
            seen.setdefault(flavor.name or flavor.flavorid, flavor)
    return list(seen.values())


def named(catalogue: Sequence[Flavor], names: Sequence[str], where: str) -> list[Flavor]:
    """The flavors ``names`` name (a name, else a flavor id), in that order."""
    chosen = []
    for name in names:
        flavor = next((f for f in catalogue if f.name == name), None) or next(
            (f for f in catalogue if f.flavorid == name), None)
        if flavor is None:
            raise FlavorError(f"--flavor {name}: no such flavor in {where}")
        chosen.append(flavor)
    return chosen


def load_file(path: str) -> list[Flavor]:
    """The flavors of a flavors file (see the module)."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
    except OSError as error:
        raise FlavorError(f"--flavors-file {path}: cannot read it: "
                          f"{error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise FlavorError(f"--flavors-file {path}: not YAML or JSON: "
                          f"{str(error).splitlines()[0]}") from None
    entries = document.get("flavors") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise FlavorError(f"--flavors-file {path}: needs a list under 'flavors'")
    flavors = [_flavor(entry, f"--flavors-file {path}: flavor {index}")
               for index, entry in enumerate(entries, start=1)]
    names = [flavor.name for flavor in flavors]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise FlavorError(f"--flavors-file {path}: flavor(s) named twice: {', '.join(twice)}")
    return flavors


def _flavor(entry: Any, where: str) -> Flavor:
    if not isinstance(entry, Mapping):
        raise FlavorError(f"{where}: must be a mapping")
    unknown = sorted(set(entry) - {"name", "extra_specs", *(key for key, _, _ in _SIZES)})
    if unknown:
        raise FlavorError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise FlavorError(f"{where}: needs a name")
    values: dict[str, int] = {}
    for key, minimum, required in _SIZES:
        value = entry.get(key, None if required else 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise FlavorError(f"{where} ({name}): {key} must be an integer >= {minimum}")
        values[key] = value
    specs = entry.get("extra_specs") or {}
    if not isinstance(specs, Mapping):
        raise FlavorError(f"{where} ({name}): extra_specs must be a mapping")
    return Flavor(name=name, flavorid=name, extra_specs={str(k): str(v) for k, v in
                                                         specs.items()}, **values)
