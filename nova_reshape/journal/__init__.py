"""What a run wrote to Placement, node by node, and how to put it back.

See docs/journal.md. The public face: :func:`recording` / :class:`Recorder`
(journal a run), :func:`command_line`, the snapshots (:class:`Snapshot`,
:func:`absent`, :func:`of_state`, :func:`of_tree`, :func:`differences`), the readers
(:func:`list_runs`, :func:`get_run`, :func:`entries`) and
:class:`~nova_reshape.journal.revert.Reverter`.
"""

from nova_reshape.journal.recorder import Recorder, command_line, recording
from nova_reshape.journal.snapshot import Snapshot, absent, differences, of_state, of_tree
from nova_reshape.journal.store import (
    Change,
    GroupEntries,
    NodeEntry,
    Run,
    RunStatus,
    entries,
    get_run,
    list_runs,
    record_node,
)

__all__ = ["Change", "GroupEntries", "NodeEntry", "Recorder", "Run", "RunStatus", "Snapshot",
           "absent", "command_line", "differences", "entries", "get_run", "list_runs", "of_state",
           "of_tree", "record_node", "recording"]
