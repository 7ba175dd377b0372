"""Over ``--placement-url``: whether the token may do what the run will do, before it writes.

A token without the service role used to fail at the first ``POST
/reshaper``, after dozens of reads and some writes (empty child providers,
traits) on the first node. Before anything is written, the run now makes
one harmless request per kind of call it needs. Each write probe carries an
empty body: the service checks policy first and only then the body, so an
allowed probe is answered 400 (schema) and writes nothing, a forbidden one
401 or 403. Any 401 or 403 refuses the run with one line (bad input, exit
2: the credentials are the operator's to fix); other answers leave the
question to the run itself (e.g. a Placement too old for the reshaper).
"""

from __future__ import annotations

from typing import NamedTuple

from nova_reshape.cmd.refusal import ExitClass, Refusal
from nova_reshape.report.session import RESHAPER_VERSION
from nova_reshape.transport import Placement, Response


class Probe(NamedTuple):
    """One harmless request standing for what the run will need."""

    method: str
    path: str
    #: What the run does with that right, for the line.
    needed_for: str
    #: The policy rule the service checks (its default role in parentheses).
    rule: str
    microversion: str = RESHAPER_VERSION


#: The run reads providers, creates child providers and reshapes; in that order,
#: so the line names the first right missing.
PROBES = (
    Probe("GET", "/resource_providers?name=nova-reshape-rights-probe",
          "read the provider trees", "placement:resource_providers:list (admin or service)"),
    Probe("POST", "/resource_providers", "create the child providers",
          "placement:resource_providers:create (admin or service)"),
    Probe("POST", "/reshaper", "move inventories and allocations",
          "placement:reshaper:reshape (service)"),
)

#: The answers that mean "this token may not".
DENIED = frozenset({401, 403})


def _detail(response: Response) -> str:
    """The service's own reason, on one line."""
    try:
        detail = response.json()["errors"][0]["detail"]
    except (ValueError, KeyError, IndexError, TypeError):
        detail = response.text
    return " ".join(str(detail).split())[:200]


def check_rights(placement: Placement, url: str, dry_run: bool = False) -> None:
    """Refuse (one line, bad input) when the token may not do what the run needs.

    A dry run only reads, so only the read is probed."""
    for probe in PROBES[:1] if dry_run else PROBES:
        body = None if probe.method == "GET" else {}
        response = placement.request(probe.method, probe.path, json=body,
                                     microversion=probe.microversion)
        if response.status_code in DENIED:
            raise Refusal(ExitClass.BAD_INPUT, (
                f"Placement at {url} answered {probe.method} {probe.path.split('?')[0]} "
                f"with {response.status_code} ({_detail(response)}): the token given may not "
                f"{probe.needed_for}, which needs {probe.rule}; give a token with that role "
                "(--token, --header); nothing was written"))
