"""The service on an SQLite database whose disk fills up (a 2 MB tmpfs).

Providers are created until the disk is full: the request that does not fit
is a 507 (Insufficient Storage) in the API's error format, nothing of it is
stored, every earlier one is; reads still answer; once space is freed the
same request succeeds on the same running app. Skipped (with the reason)
where a tmpfs cannot be mounted.
"""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from placement_wsgi import deploy
from placement_wsgi.db import migration, tables
from placement_wsgi.db.database import Database
from tests.fixtures.client import AppClient
from tests.fixtures.config import make_conf
from tests.fixtures.small_disk import small_disk

#: Providers tried at most before the disk must be full (each row is small).
MAX_PROVIDERS = 3000


@pytest.fixture
def full_soon(tmp_path):
    """(disk, app client, database) on a synced SQLite file with ~48 kB left."""
    with small_disk(tmp_path / "disk") as disk:
        url = f"sqlite:///{disk.path / 'placement.sqlite'}"
        database = Database(url)
        migration.upgrade(database)
        app = deploy.loadapp(make_conf(url))
        try:
            disk.fill(keep=48 * 1024)
            yield disk, AppClient(app, version="1.38"), database
        finally:
            app.placement_app.database.dispose()
            database.dispose()


def _names(database: Database) -> list[str]:
    with database.engine.connect() as connection:
        return sorted(connection.execute(sa.select(tables.resource_providers.c.name)).scalars())


def test_writing_until_the_disk_is_full_is_507_then_recovers(full_soon) -> None:
    disk, client, database = full_soon
    created: list[str] = []
    for _ in range(MAX_PROVIDERS):
        name = f"rp-{uuid.uuid4()}-{'x' * 150}"
        response = client.post("/resource_providers", {"name": name})
        if response.status_int != 200:
            break
        created.append(name)
    else:
        pytest.fail(f"the disk never filled up after {MAX_PROVIDERS} providers")
    assert created, "the disk was full before the first provider"
    assert response.status_int == 507, response.body
    error = response.json["errors"][0]
    assert error["status"] == 507
    assert error["title"] == "Insufficient Storage"
    assert error["code"] == "placement.undefined_code"
    assert "The database is out of space; nothing was changed." in error["detail"]
    assert "Traceback" not in response.text
    assert _names(database) == sorted(created)  # every 200 stored, the 507 not at all
    assert client.get("/resource_providers").status_int == 200  # reads still answer

    disk.free()
    assert client.post("/resource_providers", {"name": name}).status_int == 200
    assert _names(database) == sorted([*created, name])

