"""The report client's claim when Placement committed it but the answer was lost.

PostgreSQL/MariaDB behind :class:`tests.fixtures.tcp_proxy.TcpProxy`, which
drops the answer to the claim's ``COMMIT``: the service runs the
transaction again, finds the consumer already there and answers 409; the
report client says the consumer changed after it read it. The caller's
retry reads the consumer again, finds the allocations it asked for and
claims them once more as they are: nothing is allocated twice.
"""

from __future__ import annotations

import uuid

import pytest

from nova_reshape import exception
from nova_reshape.report import SchedulerReportClient
from placement_wsgi.db.database import Database
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import databases, seed
from tests.fixtures.config import make_conf
from tests.fixtures.tcp_proxy import TcpProxy

SERVER_ENGINES = [engine for engine in databases.enabled_engines() if engine != "sqlite"]

pytestmark = pytest.mark.skipif(not SERVER_ENGINES, reason=(
    "needs NOVA_RESHAPE_TEST_POSTGRESQL or NOVA_RESHAPE_TEST_MYSQL"))


@pytest.mark.parametrize("engine", SERVER_ENGINES or ["none"])
def test_a_claim_retried_after_a_lost_answer_is_not_doubled(engine) -> None:
    url = databases.SERVERS.fresh_url(engine)
    direct = Database(url)
    provider = seed.add_provider(direct)
    seed.add_inventory(direct, provider, "VCPU", 16)
    consumer = str(uuid.uuid4())
    request = {"allocations": {provider: {"resources": {"VCPU": 3}}}}
    try:
        with TcpProxy.for_url(url, lifetime=60) as proxy, \
                PlacementDirect(make_conf(proxy.url_for(url))) as placement:
            report = SchedulerReportClient(placement, retry_backoff=0)
            proxy.cut_after_commit(b"INSERT INTO allocations")
            with pytest.raises(exception.AllocationUpdateFailed,
                               match="an earlier attempt whose answer was lost"):
                report.claim_resources(None, consumer, request, "p", "u", "1.36")
            assert proxy.cuts == 1, "the answer was not lost"
            assert seed.usage(direct, provider, "VCPU") == 3  # the first attempt committed
            assert report.claim_resources(None, consumer, request, "p", "u", "1.36") is True
            assert seed.usage(direct, provider, "VCPU") == 3
            held = report.get_allocs_for_consumer(None, consumer)
            assert held["allocations"][provider]["resources"] == {"VCPU": 3}
            assert held["consumer_generation"] == 2
    finally:
        direct.dispose()
