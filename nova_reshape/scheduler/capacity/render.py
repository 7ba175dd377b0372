"""The capacity table as text: one block per flavor, one line per host.

::

    flavor m1.small: 2 of 3 host(s) valid, 46 more fit
      cmp-a  valid  16
      cmp-b  valid  30
      cmp-c  -       0  ComputeFilter: compute service is disabled
"""

from __future__ import annotations

from nova_reshape.scheduler.capacity.records import CapacityReport, FlavorCapacity


def flavor_heading(flavor: FlavorCapacity) -> str:
    valid = sum(host.valid for host in flavor.hosts)
    return (f"flavor {flavor.name}: {valid} of {len(flavor.hosts)} host(s) valid, "
            f"{flavor.total} more fit")


def flavor_lines(flavor: FlavorCapacity) -> list[str]:
    """The flavor's heading, its hosts and its notes."""
    lines = [flavor_heading(flavor)]
    width = max((len(host.name) for host in flavor.hosts), default=0)
    digits = max((len(str(host.fits)) for host in flavor.hosts), default=1)
    for host in flavor.hosts:
        mark = "valid" if host.valid else "-    "
        reason = f"  {host.reason}" if host.reason else ""
        lines.append(f"  {host.name.ljust(width)}  {mark}  {str(host.fits).rjust(digits)}"
                     f"{reason}")
    lines.extend(f"  note: {note}" for note in flavor.notes)
    return lines


def render_report(report: CapacityReport) -> str:
    """Every flavor's block, then the notes that apply to all."""
    lines: list[str] = []
    for flavor in report:
        lines.extend(flavor_lines(flavor))
    if not report.flavors:
        lines.append("no flavor to check")
    lines.extend(f"note: {note}" for note in report.notes)
    return "\n".join(lines) + "\n"
