"""Why a ``nova-reshape-manage`` command stops before it is done, and its exit status.

Readers (command line, configuration, host files, nova's database) and the
commands raise one exception type, :class:`Refusal`: an exit class and the
one line to print. ``main()`` (:mod:`nova_reshape.cmd.manage`) prints it and
maps the class to the exit status by :data:`EXIT_CODES`, the one table.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import Any

from nova_reshape.compute import node_result
from nova_reshape.compute.preflight import Finding
from nova_reshape.novadb.cells import CellConflict
from nova_reshape.novadb.readonly import BadDatabaseURL, DatabaseReadError
from placement_wsgi.cmd import signals

#: The command's name, which every line it prints about itself starts with.
PROGRAM = "nova-reshape-manage"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_REFUSED = 3
EXIT_CONFLICT = 4
EXIT_INVARIANT = 5


#: The exit status each node status leads to, most severe first: a run's status is
#: that of the first one any of its nodes has (else :data:`EXIT_OK`).
STATUS_EXITS: tuple[tuple[node_result.NodeStatus, int], ...] = (
    (node_result.REFUSED, EXIT_REFUSED),
    (node_result.INVARIANT, EXIT_INVARIANT),
    (node_result.FAILED, EXIT_FAILED),
    (node_result.CONFLICT, EXIT_CONFLICT),
)

#: A word per exit status, for reports.
EXIT_NAMES = {EXIT_OK: "ok", EXIT_FAILED: "failed", EXIT_BAD_INPUT: "bad-input",
              EXIT_REFUSED: "refused", EXIT_CONFLICT: "conflict", EXIT_INVARIANT: "invariant"}


class ExitClass(enum.Enum):
    """What kind of stop a refusal is."""

    #: Something could not be read or reached (a database, Placement, a file
    #: being written); running again is safe.
    FAILED = "failed"
    #: The command line, a configuration or a description is unusable.
    BAD_INPUT = "bad-input"
    #: The inputs were read and disagree: nothing was written (the findings say why).
    REFUSED = "refused"
    #: SIGINT or SIGTERM stopped the command between two writes; running
    #: again is safe. Its status is the signal's (:mod:`placement_wsgi.cmd.signals`).
    INTERRUPTED = "interrupted"


#: The exit status of each class of refusal.
EXIT_CODES: dict[ExitClass, int] = {
    ExitClass.FAILED: EXIT_FAILED,
    ExitClass.BAD_INPUT: EXIT_BAD_INPUT,
    ExitClass.REFUSED: EXIT_REFUSED,
    ExitClass.INTERRUPTED: signals.exit_status(KeyboardInterrupt()),
}


@dataclasses.dataclass(frozen=True)
class Details:
    """A refusal's context: ``lines`` for the text output, ``document`` for JSON."""

    lines: tuple[str, ...] = ()
    document: Mapping[str, Any] = dataclasses.field(default_factory=dict)


class Refusal(Exception):
    """The command stops: ``exit_class`` and the one-line ``message``.

    ``findings``: for :attr:`ExitClass.REFUSED`, the lines that say why (the
    output prints them before the message, or as its JSON document).
    ``status``: the exit status where a command keeps another tool's (the
    placement commands keep nova-manage's); default, the class's.
    ``details``: what led to the findings, as text lines printed before them
    and as keys added to the JSON document (e.g. the scheduling check's tables).
    """

    def __init__(self, exit_class: ExitClass, message: str,
                 findings: Sequence[Finding] = (), details: Details | None = None,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.exit_class = exit_class
        self.message = message
        self.findings = list(findings)
        self.details = details or Details()
        self.status = status

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.exit_class] if self.status is None else self.status


class Interruption(Refusal):
    """A command stopped by a signal: its line, and the signal's exit status
    (130 after SIGINT, 143 after SIGTERM)."""

    def __init__(self, stop: KeyboardInterrupt, message: str) -> None:
        super().__init__(ExitClass.INTERRUPTED,
                         f"interrupted by {signals.signal_name(stop)}; {message}")
        self.stop = stop

    @property
    def exit_code(self) -> int:
        return signals.exit_status(self.stop)


def database_refusal(error: DatabaseReadError) -> Refusal:
    """A database nova-reshape could not read: bad input for a bad URL (or ``--cell``),
    refused where two cells disagree (nothing written), else failed."""
    if isinstance(error, BadDatabaseURL):
        return Refusal(ExitClass.BAD_INPUT, str(error))
    if isinstance(error, CellConflict):
        return Refusal(ExitClass.REFUSED, str(error))
    return Refusal(ExitClass.FAILED, str(error))
