"""Providers and their allocations: in bulk in-process, per provider over HTTP, the same.

Placement is tests/fixtures/consistency.py's damaged one, on every engine.
"""

from __future__ import annotations

from typing import Any

import pytest

from nova_reshape.consistency import placement_reads as reads
from nova_reshape.transport import CountingTransport, http_placement, open_direct
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import consistency as cx
from tests.fixtures import nova_db as fx
from tests.fixtures.config import make_conf

ORDER = [fx.CMP1_UUID, cx.GPU_CHILD, fx.CMP2_UUID, fx.CMP3_UUID, cx.SHARED]


@pytest.fixture
def seeded(db_url):
    with PlacementDirect(make_conf(db_url)) as placement:
        cx.seed_audit(placement)
    return db_url


def read_all(placement: Any, uuid: str | None = None) -> list[reads.ProviderAllocations]:
    return list(reads.provider_allocations(placement, reads.list_providers(placement, uuid)))


def expected_on(provider: str) -> dict[str, dict[str, int]]:
    return {consumer: held[provider] for consumer, held in cx.before_delete().items()
            if provider in held}


def test_bulk_in_process_and_per_provider_over_http_agree(seeded):
    with open_direct(make_conf(seeded)) as direct:
        counted = CountingTransport(direct)
        bulk = read_all(counted)
    # The listing, then nothing per provider: the allocations came from the bulk reader.
    assert counted.calls == 1
    with cx.served(seeded) as url:
        client = http_placement(url, token="admin")
        try:
            per_provider = read_all(client)
        finally:
            client.close()
    assert bulk == per_provider
    assert [read.provider.uuid for read in bulk] == ORDER
    assert [read.provider.root for read in bulk] == [fx.CMP1_UUID, fx.CMP1_UUID, fx.CMP2_UUID,
                                                     fx.CMP3_UUID, cx.SHARED]
    assert {read.provider.uuid: read.consumers for read in bulk} == {
        uuid: expected_on(uuid) for uuid in ORDER}


def test_one_provider_and_no_such_provider(seeded):
    with open_direct(make_conf(seeded)) as direct:
        (child,) = read_all(direct, cx.GPU_CHILD)
        assert child.provider == reads.Provider(cx.GPU_CHILD, f"{fx.CMP1_NODE}_pci_0000_d8_00_0",
                                                fx.CMP1_UUID)
        assert child.consumers == {cx.GHOST: {"VGPU": 1}}
        assert reads.list_providers(direct, "d0d0d0d0-0000-4000-8000-000000000000") == []
        assert reads.list_providers(direct, "not-a-uuid") == []


def test_progress_counts_providers(seeded):
    seen = []
    with open_direct(make_conf(seeded)) as direct:
        providers = reads.list_providers(direct)
        list(reads.provider_allocations(direct, providers,
                                        lambda done, total: seen.append((done, total))))
    assert seen == [(number, 5) for number in range(1, 6)]
