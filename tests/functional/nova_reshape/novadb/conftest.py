"""A populated nova cell database per enabled engine, shared by this package's tests."""

from __future__ import annotations

import pytest

from tests.fixtures.cyborg_db import cyborg_database
from tests.fixtures.databases import enabled_engines
from tests.fixtures.nova_db import nova_cell


@pytest.fixture(scope="session", params=enabled_engines())
def nova_db_url(request) -> str:
    """The fixture's content (tests/fixtures/nova_db.py); tests must not change it."""
    yield from nova_cell(request.param)


@pytest.fixture(scope="session", params=enabled_engines())
def cyborg_db_url(request) -> str:
    """The Cyborg fixture (tests/fixtures/cyborg_db.py); tests must not change it."""
    yield from cyborg_database(request.param)
