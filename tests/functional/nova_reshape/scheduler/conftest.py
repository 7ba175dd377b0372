"""Helpers for the scheduler-over-Placement tests: PlacementDirect, recorded managers."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from nova_reshape.report import SchedulerReportClient
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.manager import SchedulerManager
from placement_wsgi.direct import PlacementDirect
from tests.fixtures.config import make_conf
from tests.fixtures.transports import RecordingTransport


@contextlib.contextmanager
def placement(db_url: str) -> Iterator[Any]:
    """The project's Placement on ``db_url``, in process."""
    with PlacementDirect(make_conf(db_url)) as client:
        yield client


def make_manager(client: Any, config: dict[str, Any] | None = None,
                 **kwargs: Any) -> tuple[SchedulerManager, RecordingTransport]:
    """A manager over a recorded report client; RAMWeigher only unless configured."""
    sections = {"filter_scheduler": {"weight_classes": ["RAMWeigher"]}}
    for section, options in (config or {}).items():
        sections.setdefault(section, {}).update(options)
    recording = RecordingTransport(client)
    report = SchedulerReportClient(recording, retry_backoff=0)
    return SchedulerManager(report, SchedulerConfig(sections), **kwargs), recording


def usages(client: Any, rp_uuid: str) -> dict[str, int]:
    response = client.get(f"/resource_providers/{rp_uuid}/usages", microversion="1.9")
    assert response.status_code == 200, response.text
    return {rc: n for rc, n in response.json()["usages"].items() if n}


def consumer(client: Any, consumer_uuid: str) -> dict[str, Any]:
    response = client.get(f"/allocations/{consumer_uuid}", microversion="1.28")
    assert response.status_code == 200, response.text
    return response.json()
