"""Which database server a test runs on."""

from __future__ import annotations

import pytest

from placement_wsgi.testing import databases


@pytest.mark.parametrize("server, engine", [
    ("sqlite", "sqlite"),
    ("postgresql+psycopg://postgres@127.0.0.1:5432", "postgresql"),
    ("mysql+pymysql://root@127.0.0.1:3306", "mysql"),
    ("mariadb+pymysql://root@127.0.0.1", "mysql"),
])
def test_engine_of_a_server(server: str, engine: str) -> None:
    assert databases.engine_of(server) == engine


@pytest.mark.parametrize("server, name, url", [
    ("postgresql+psycopg://postgres@127.0.0.1:5432", "t1",
     "postgresql+psycopg://postgres@127.0.0.1:5432/t1"),
    ("postgresql+psycopg://postgres:pw@127.0.0.1:5432/", "t1",
     "postgresql+psycopg://postgres:pw@127.0.0.1:5432/t1"),
    ("mysql+pymysql://root@127.0.0.1:3306", "t1",
     "mysql+pymysql://root@127.0.0.1:3306/t1?charset=utf8mb4"),
    ("mysql+pymysql://root@127.0.0.1:3306/?ssl_disabled=true", "t1",
     "mysql+pymysql://root@127.0.0.1:3306/t1?charset=utf8mb4&ssl_disabled=true"),
    ("mysql+pymysql://root@127.0.0.1:3306/?charset=latin1", None,
     "mysql+pymysql://root@127.0.0.1:3306/?charset=latin1"),
])
def test_a_database_on_a_server_keeps_the_server_s_options(server: str, name: str | None,
                                                           url: str) -> None:
    assert databases.database_url(server, name) == url


def test_the_admin_database_is_postgres_or_none() -> None:
    assert databases.admin_url("postgresql+psycopg://p@h/?connect_timeout=5") == (
        "postgresql+psycopg://p@h/postgres?connect_timeout=5")
    assert databases.admin_url("mysql+pymysql://root@h:3306/?ssl_disabled=true") == (
        "mysql+pymysql://root@h:3306/?charset=utf8mb4&ssl_disabled=true")


def test_other_servers_are_refused() -> None:
    with pytest.raises(ValueError, match="unsupported test database server"):
        databases.engine_of("oracle://scott@db")


@pytest.mark.parametrize("value, server", [
    (None, "sqlite"), ("", "sqlite"), ("  ", "sqlite"),
    ("postgresql+psycopg://postgres@127.0.0.1:5432", "postgresql+psycopg://postgres@127.0.0.1:5432"),
])
def test_server_from_environment(monkeypatch: pytest.MonkeyPatch, value: str | None,
                                 server: str) -> None:
    if value is None:
        monkeypatch.delenv(databases.ENV_DATABASE_SERVER, raising=False)
    else:
        monkeypatch.setenv(databases.ENV_DATABASE_SERVER, value)
    assert databases.server_from_environment() == server


def test_a_forked_child_leaves_the_parent_s_databases(monkeypatch: pytest.MonkeyPatch) -> None:
    throwaway = databases.ThrowawayDatabases()
    closed = []
    monkeypatch.setattr(throwaway, "close", lambda: closed.append(True))
    monkeypatch.setattr(databases.os, "getpid", lambda: -1)
    throwaway.close_at_exit()
    assert closed == []
    monkeypatch.undo()
    monkeypatch.setattr(throwaway, "close", lambda: closed.append(True))
    throwaway.close_at_exit()
    assert closed == [True]
