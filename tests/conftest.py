"""Shared pytest fixtures: engines, fresh databases, apps."""

from __future__ import annotations

import pytest

from placement_wsgi.db.database import Database
from tests.fixtures.config import make_conf
from tests.fixtures.databases import SERVERS, enabled_engines


@pytest.fixture(scope="session", autouse=True)
def _close_test_databases():
    yield
    SERVERS.close()


@pytest.fixture(params=enabled_engines())
def engine(request) -> str:
    """Each database-facing test runs once per enabled engine."""
    return request.param


@pytest.fixture
def db_url(engine: str) -> str:
    """URL of a fresh, migrated database with the standard names loaded."""
    return SERVERS.fresh_url(engine)


@pytest.fixture
def database(db_url: str):
    database = Database(db_url)
    yield database
    database.dispose()


@pytest.fixture
def conf(db_url: str):
    return make_conf(db_url)
