"""The live explain run on a seeded Placement database, shared by the live tests."""

from __future__ import annotations

from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.live.explain import HostStateSource, LiveResult, run
from nova_reshape.scheduler.live.placement import from_database
from nova_reshape.scheduler.live.request import LiveRequest


def explain_on_database(db_url: str, live: LiveRequest, conf: SchedulerConfig | None = None,
                        source: HostStateSource | None = None) -> LiveResult:
    """Explain ``live`` with the candidates read from the Placement database at ``db_url``."""
    ask = lambda query: from_database(db_url, query)  # noqa: E731
    return run(live, ask, conf or SchedulerConfig(), source)
