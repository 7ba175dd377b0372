"""Fixtures for the concurrency tests: an app and a direct handle on its database."""

from __future__ import annotations

import pytest

from placement_wsgi import deploy
from placement_wsgi.db.database import Database
from tests.fixtures.client import AppClient
from tests.fixtures.config import make_conf


@pytest.fixture
def client_and_database(db_url):
    """An in-process client of a fresh app, and the app's database for checks."""
    app = deploy.loadapp(make_conf(db_url))
    database = Database(db_url)
    yield AppClient(app), database
    database.dispose()
    app.placement_app.database.dispose()
