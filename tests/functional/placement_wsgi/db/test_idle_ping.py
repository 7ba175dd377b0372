"""Pooled connections are pinged before use only after sitting idle, on PostgreSQL and MariaDB."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from placement_wsgi.db.database import Database
from placement_wsgi.db.idle_ping import ping_when_idle
from tests.fixtures import databases
from tests.fixtures.tcp_proxy import TcpProxy

SERVER_ENGINES = [engine for engine in databases.enabled_engines() if engine != "sqlite"]

pytestmark = pytest.mark.skipif(not SERVER_ENGINES, reason=(
    "needs NOVA_RESHAPE_TEST_POSTGRESQL or NOVA_RESHAPE_TEST_MYSQL"))


@pytest.fixture(params=SERVER_ENGINES or ["none"])
def server_url(request):
    return databases.SERVERS.fresh_url(request.param)


def _counting_pings(engine: sa.Engine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    pings: list[int] = []
    real = engine.dialect.do_ping

    def do_ping(dbapi_connection) -> bool:  # noqa: ANN001
        pings.append(1)
        return real(dbapi_connection)

    monkeypatch.setattr(engine.dialect, "do_ping", do_ping)
    return pings


def _select_one(engine: sa.Engine) -> int:
    with engine.connect() as connection:
        return connection.execute(sa.text("SELECT 1")).scalar_one()


def test_a_connection_in_use_a_moment_ago_is_not_pinged(server_url, monkeypatch) -> None:
    database = Database(server_url)
    try:
        pings = _counting_pings(database.engine, monkeypatch)
        for _ in range(5):
            assert database.read(lambda connection: connection.execute(
                sa.text("SELECT 1")).scalar_one()) == 1
        assert pings == []
    finally:
        database.dispose()


def test_a_connection_idle_past_the_limit_is_pinged(server_url, monkeypatch) -> None:
    engine = sa.create_engine(server_url)
    ping_when_idle(engine, idle_seconds=0.0)
    try:
        pings = _counting_pings(engine, monkeypatch)
        _select_one(engine)
        assert pings == []  # a new connection needs no ping
        _select_one(engine)
        _select_one(engine)
        assert pings == [1, 1]
    finally:
        engine.dispose()


def test_an_idle_connection_that_was_cut_is_replaced_before_use(server_url) -> None:
    with TcpProxy.for_url(server_url, lifetime=60) as proxy:
        engine = sa.create_engine(proxy.url_for(server_url))
        ping_when_idle(engine, idle_seconds=0.0)
        try:
            assert _select_one(engine) == 1
            proxy.cut()
            # No retry around this: the failed ping replaced the connection.
            assert _select_one(engine) == 1
        finally:
            engine.dispose()
