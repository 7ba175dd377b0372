"""The capacity table as text, one block per flavor and one line per host::

    flavor m1.small: 2 of 3 host(s) valid, 46 more fit
      cmp-a  valid  16
      cmp-b  valid  30
      cmp-c  -       0  ComputeFilter: compute service is disabled

and as the documented JSON document (:func:`render_json`).
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii as quote

from nova_reshape.scheduler.capacity.records import CapacityReport, FlavorCapacity

#: One host of the JSON document, at its depth (see :func:`render_json`).
_HOST = ('        {\n          "name": %s,\n          "valid": %s,\n          "fits": %d,'
         '\n          "reason": %s\n        }')


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


def render_json(report: CapacityReport) -> str:
    """:meth:`CapacityReport.to_dict` as ``json.dumps(..., indent=2)`` writes it, and a
    newline: the same bytes, written without the standard library's pure-Python
    indenting encoder (half a million host rows take it seconds)."""
    flavors = []
    for flavor in report.flavors:
        hosts = ",\n".join(_HOST % (quote(host.name), "true" if host.valid else "false",
                                    host.fits, quote(host.reason))
                           for host in flavor.hosts)
        hosts = f"[\n{hosts}\n      ]" if hosts else "[]"
        flavors.append(f'    {{\n      "name": {quote(flavor.name)},\n      "hosts": {hosts},'
                       f'\n      "total": {flavor.total}\n    }}')
    body = "[\n" + ",\n".join(flavors) + "\n  ]" if flavors else "[]"
    return f'{{\n  "flavors": {body}\n}}\n'
