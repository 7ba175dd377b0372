"""nova's CPU-set syntax, the one parser every reader uses.

nova.conf (``cpu_shared_set``, ``vcpu_pin_set``), flavor extra specs
(``hw:cpu_dedicated_mask``, ``hw:numa_cpus.N``), host description files and
the pre-Liberty NUMA documents of nova's database all write CPU sets as
``"0-3,8"`` with ``^`` exclusions (``"0-7,^3,^5-6"``).
"""

from __future__ import annotations

from collections.abc import Iterable


def parse_cpuset(value: str | int | Iterable[int] | None) -> frozenset[int]:
    """A CPU set as nova writes it, or a list of CPU numbers.

    ``"0-3,8"``, with ``^`` exclusions as nova allows (``"0-7,^3,^5-6"``),
    ``[0, 1]`` or ``5``; None is the empty set. ValueError (one line) for a
    part that is not a number or range, or a range that runs backwards.
    """
    if value is None:
        return frozenset()
    if isinstance(value, int):
        return frozenset([value])
    if not isinstance(value, str):
        return frozenset(value)
    cpus: set[int] = set()
    rejected: set[int] = set()
    for part in value.split(","):
        rule = part.strip()
        if not rule:
            continue
        target = rejected if rule.startswith("^") else cpus
        first, _, last = rule.removeprefix("^").partition("-")
        try:
            low = int(first)
            high = int(last) if last else low
        except ValueError:
            raise ValueError(f"{rule!r} is not a CPU number or range") from None
        if high < low:
            raise ValueError(f"range {rule!r} runs backwards")
        target.update(range(low, high + 1))
    return frozenset(cpus - rejected)


def format_cpuset(cpus: Iterable[int]) -> str:
    """A CPU set in nova.conf syntax, ranges merged: ``{0, 1, 2, 5}`` -> ``"0-2,5"``."""
    parts: list[str] = []
    ordered = sorted(set(cpus))
    start = 0
    for index, cpu in enumerate(ordered):
        if index + 1 == len(ordered) or ordered[index + 1] != cpu + 1:
            first = ordered[start]
            parts.append(str(first) if first == cpu else f"{first}-{cpu}")
            start = index + 1
    return ",".join(parts)
