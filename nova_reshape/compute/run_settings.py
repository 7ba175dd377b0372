"""What a migration run does, as the operator asked: :class:`Settings`.

Kept apart from the run (:mod:`nova_reshape.compute.migrate`) because every
worker of a parallel run gets the same settings, pickled, and the command
line builds them without needing the run itself.
"""

from __future__ import annotations

import dataclasses

from nova_reshape.compute.node_result import Show
from nova_reshape.virt.releases import DriverOptions
from placement_wsgi.objects.tree_state import DEFAULT_BATCH_SIZE


@dataclasses.dataclass(frozen=True)
class Settings:
    """What a run does, as the operator asked; the same for every worker of a
    parallel run (so it pickles: ``show`` is a module-level function or a
    ``functools.partial`` of one).

    ``dry_run``: check and plan, write nothing. ``options``: the target release (whose
    reshapes are the ones done) and the operator's switches. ``batch_size``: nodes written
    between two read-backs (and read in one bulk read before their write). ``show``
    renders each node's detail for the report (see :data:`Show`); None: no detail.
    ``journal``: the id of the journaled run each written node is recorded in, in its
    transaction (:mod:`nova_reshape.journal`); over HTTP in ``journal_file``.
    """

    dry_run: bool = False
    options: DriverOptions = DriverOptions()
    batch_size: int = DEFAULT_BATCH_SIZE
    show: Show | None = None
    journal: str | None = None
    journal_file: str | None = None

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {self.batch_size}")
