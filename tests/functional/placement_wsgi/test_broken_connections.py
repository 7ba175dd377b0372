"""Claims over a database connection that breaks, on PostgreSQL and MariaDB.

The service reaches its database through :class:`tests.fixtures.tcp_proxy.TcpProxy`.
A connection cut in the middle of a claim (``PUT /allocations/{consumer}``)
is retried in a fresh transaction and succeeds, exactly once; a database
that stays down is a 503 with ``Retry-After`` and nothing written; once it
is back the same app serves again (the pool pings idle connections and
retries on a new one), no restart.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from placement_wsgi import deploy
from placement_wsgi.db.database import Database
from tests.fixtures import databases, seed
from tests.fixtures.client import AppClient
from tests.fixtures.config import make_conf
from tests.fixtures.tcp_proxy import TcpProxy

SERVER_ENGINES = [engine for engine in databases.enabled_engines() if engine != "sqlite"]

pytestmark = pytest.mark.skipif(not SERVER_ENGINES, reason=(
    "needs NOVA_RESHAPE_TEST_POSTGRESQL or NOVA_RESHAPE_TEST_MYSQL"))


@pytest.fixture(params=SERVER_ENGINES or ["none"])
def setup(request):
    """(proxy, app client, direct database, provider uuid) on one server engine."""
    url = databases.SERVERS.fresh_url(request.param)
    direct = Database(url)
    provider = seed.add_provider(direct)
    seed.add_inventory(direct, provider, "VCPU", 16)
    with TcpProxy.for_url(url, lifetime=120) as proxy:
        app = deploy.loadapp(make_conf(proxy.url_for(url)))
        try:
            yield proxy, AppClient(app, version="1.38"), direct, provider
        finally:
            app.placement_app.database.dispose()
            direct.dispose()


def _claim(provider: str, amount: int = 2) -> dict:
    return {"allocations": {provider: {"resources": {"VCPU": amount}}},
            "project_id": "p", "user_id": "u", "consumer_generation": None,
            "consumer_type": "INSTANCE"}


@pytest.mark.parametrize("statement", [b"INSERT INTO allocations", b"COMMIT"])
def test_a_claim_cut_mid_transaction_is_retried_and_applied_once(setup, statement) -> None:
    proxy, client, direct, provider = setup
    consumer = str(uuid.uuid4())
    proxy.cut_when(statement)
    response = client.put(f"/allocations/{consumer}", _claim(provider, 3))
    assert proxy.cuts == 1, "the cut did not happen"
    assert response.status_int == 204, response.body
    assert seed.usage(direct, provider, "VCPU") == 3
    assert seed.provider_generation(direct, provider) == 1
    held = client.get(f"/allocations/{consumer}").json
    assert held["allocations"][provider]["resources"] == {"VCPU": 3}
    assert held["consumer_generation"] == 1


def test_a_claim_while_the_database_is_down_is_503_and_writes_nothing(setup) -> None:
    proxy, client, direct, provider = setup
    before = databases.checksum(direct)
    proxy.refuse()
    response = client.put(f"/allocations/{uuid.uuid4()}", _claim(provider))
    assert response.status_int == 503, response.body
    error = response.json["errors"][0]
    assert error["status"] == 503
    assert error["code"] == "placement.undefined_code"
    assert "Traceback" not in response.text
    assert int(response.headers["Retry-After"]) > 0
    assert databases.checksum(direct) == before
    proxy.restore()
    # The same app, no restart: the pool replaces the dead connections.
    consumer = str(uuid.uuid4())
    assert client.put(f"/allocations/{consumer}", _claim(provider)).status_int == 204
    assert seed.usage(direct, provider, "VCPU") == 2


def test_the_service_recovers_when_every_pooled_connection_was_cut(setup) -> None:
    proxy, client, direct, provider = setup
    for _ in range(3):  # fill the pool
        assert client.get(f"/resource_providers/{provider}").status_int == 200
    proxy.cut()
    assert client.get(f"/resource_providers/{provider}").status_int == 200
    assert client.put(f"/allocations/{uuid.uuid4()}", _claim(provider)).status_int == 204
    assert seed.usage(direct, provider, "VCPU") == 2


def test_a_claim_during_a_stall_completes_when_the_database_answers_again(setup) -> None:
    proxy, client, direct, provider = setup
    assert client.get(f"/resource_providers/{provider}").status_int == 200
    proxy.stall()
    timer = threading.Timer(1.0, proxy.restore)
    timer.start()
    started = time.monotonic()
    try:
        response = client.put(f"/allocations/{uuid.uuid4()}", _claim(provider))
    finally:
        timer.join()
    assert response.status_int == 204, response.body
    assert time.monotonic() - started >= 0.9
    assert seed.usage(direct, provider, "VCPU") == 2


def test_a_claim_whose_commit_answer_is_lost_is_not_applied_twice(setup) -> None:
    """The COMMIT reaches the server, its answer does not reach the service.

    The service cannot tell this from a commit that failed, so it runs the
    transaction again; the consumer exists by then, so the retry is refused
    as a consumer generation conflict (409) and nothing is written twice. The
    client re-reads, finds exactly what it sent, and is done; a repeat with
    the generation it read is applied once more without doubling anything.
    """
    proxy, client, direct, provider = setup
    consumer = str(uuid.uuid4())
    proxy.cut_after_commit(b"INSERT INTO allocations")
    response = client.put(f"/allocations/{consumer}", _claim(provider, 3))
    assert proxy.cuts == 1, "the answer was not lost"
    assert response.status_int == 409, response.body
    error = response.json["errors"][0]
    assert error["code"] == "placement.concurrent_update"
    assert "consumer generation conflict" in error["detail"]
    assert seed.usage(direct, provider, "VCPU") == 3
    assert seed.provider_generation(direct, provider) == 1
    held = client.get(f"/allocations/{consumer}").json
    assert held["allocations"][provider]["resources"] == {"VCPU": 3}
    assert held["consumer_generation"] == 1
    repeat = dict(_claim(provider, 3), consumer_generation=held["consumer_generation"])
    assert client.put(f"/allocations/{consumer}", repeat).status_int == 204
    assert seed.usage(direct, provider, "VCPU") == 3
    assert client.get(f"/allocations/{consumer}").json["consumer_generation"] == 2
