"""tools/generate_deployment.py: the bulk path writes what the API path writes.

Each test generates one small deployment through the Placement API
(PlacementDirect), reads it back by uuids and names, empties the database,
generates the same deployment with ``generate_bulk`` (a small ``chunk``, so
several transactions) and reads it back the same way. Ids and timestamps
differ between the two and are not compared; everything a client or the
migration can see is. Runs on every enabled engine.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import sqlalchemy as sa

from nova_reshape.compute import migrate
from nova_reshape.virt.host import load_hosts
from placement_wsgi.db import tables
from placement_wsgi.db.database import Database
from placement_wsgi.direct import PlacementDirect
from placement_wsgi.errors import BadRequest
from tests.fixtures.config import make_conf
from tests.fixtures.databases import empty
from tests.functional.nova_reshape import migrate_helpers as helpers

generator = helpers.generator
HOSTS, GPUS, INSTANCES = 5, 4, 16

#: (kinds, ironic nodes): the default devices; and every kind with an ironic node.
SHAPES = [(generator.KINDS, 0), (generator.KINDS + generator.EXTRA_KINDS, 1)]


def _rows(connection: Any, query: sa.Select) -> set[tuple]:
    return {tuple(row) for row in connection.execute(query)}


def deployment_state(database: Database) -> dict[str, set[tuple]]:
    """Every Placement row of the deployment, with ids replaced by uuids and names."""
    rp, parent, root = (tables.resource_providers,
                        tables.resource_providers.alias("parent"),
                        tables.resource_providers.alias("root"))
    rc, trait, consumer = tables.resource_classes, tables.traits, tables.consumers
    inv, alloc, links = tables.inventories, tables.allocations, tables.resource_provider_traits
    aggregate_links, aggregates = tables.resource_provider_aggregates, tables.placement_aggregates
    with database.engine.connect() as connection:
        return {
            "providers": _rows(connection, sa.select(
                rp.c.uuid, rp.c.name, rp.c.generation, parent.c.uuid, root.c.uuid)
                .select_from(rp).outerjoin(parent, parent.c.id == rp.c.parent_provider_id)
                .outerjoin(root, root.c.id == rp.c.root_provider_id)),
            "inventories": _rows(connection, sa.select(
                rp.c.uuid, rc.c.name, inv.c.total, inv.c.reserved, inv.c.min_unit,
                inv.c.max_unit, inv.c.step_size, inv.c.allocation_ratio)
                .select_from(inv).join(rp, rp.c.id == inv.c.resource_provider_id)
                .join(rc, rc.c.id == inv.c.resource_class_id)),
            "traits": _rows(connection, sa.select(rp.c.uuid, trait.c.name).select_from(links)
                            .join(rp, rp.c.id == links.c.resource_provider_id)
                            .join(trait, trait.c.id == links.c.trait_id)),
            "aggregates": _rows(connection, sa.select(rp.c.uuid, aggregates.c.uuid)
                                .select_from(aggregate_links)
                                .join(rp, rp.c.id == aggregate_links.c.resource_provider_id)
                                .join(aggregates,
                                      aggregates.c.id == aggregate_links.c.aggregate_id)),
            "consumers": _rows(connection, sa.select(
                consumer.c.uuid, tables.projects.c.external_id, tables.users.c.external_id,
                consumer.c.generation, tables.consumer_types.c.name)
                .select_from(consumer)
                .join(tables.projects, tables.projects.c.id == consumer.c.project_id)
                .join(tables.users, tables.users.c.id == consumer.c.user_id)
                .outerjoin(tables.consumer_types,
                           tables.consumer_types.c.id == consumer.c.consumer_type_id)),
            "allocations": _rows(connection, sa.select(
                alloc.c.consumer_id, rp.c.uuid, rc.c.name, alloc.c.used)
                .select_from(alloc).join(rp, rp.c.id == alloc.c.resource_provider_id)
                .join(rc, rc.c.id == alloc.c.resource_class_id)),
            "projects": _rows(connection, sa.select(tables.projects.c.external_id)),
            "users": _rows(connection, sa.select(tables.users.c.external_id)),
            "custom_classes": _rows(connection, sa.select(rc.c.name).where(
                rc.c.name.startswith("CUSTOM_"))),
        }


def _files(directory: str) -> dict[str, bytes]:
    result = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as stream:
            result[name] = stream.read()
    return result


@pytest.fixture
def database(db_url):
    database = Database(db_url)
    yield database
    database.dispose()


def _bulk(database: Database, out: str, kinds: tuple[str, ...], ironic: int) -> Any:
    return generator.generate_bulk(database, out, HOSTS, GPUS, INSTANCES, ironic=ironic,
                                   kinds=kinds, chunk=2)


@pytest.mark.parametrize(("kinds", "ironic"), SHAPES)
def test_bulk_path_writes_what_the_api_path_writes(db_url, database, tmp_path, kinds, ironic):
    api_out, bulk_out = str(tmp_path / "api"), str(tmp_path / "bulk")
    with PlacementDirect(make_conf(db_url)) as placement:
        api_summary = generator.generate(placement, api_out, HOSTS, GPUS, INSTANCES,
                                         ironic=ironic, kinds=kinds)
    through_api = deployment_state(database)
    empty(database)
    assert deployment_state(database)["providers"] == set()

    bulk_summary = _bulk(database, bulk_out, kinds, ironic)
    assert deployment_state(database) == through_api
    assert _files(bulk_out) == _files(api_out)
    assert (bulk_summary.hosts, bulk_summary.ironic, bulk_summary.instances) == (
        api_summary.hosts, api_summary.ironic, api_summary.instances)
    assert bulk_summary.transactions == 3  # 5 hosts, 2 per transaction
    # Not an empty comparison: every host, instance and resource is there.
    assert len(through_api["providers"]) == HOSTS
    assert len(through_api["consumers"]) == (HOSTS - ironic) * INSTANCES
    assert {row[2] for row in through_api["providers"]} == {3} | ({1} if ironic else set())
    assert {row[3] for row in through_api["consumers"]} == {1}


def test_bulk_seeded_deployment_migrates(db_url, database, tmp_path):
    out = str(tmp_path / "hosts")
    _bulk(database, out, generator.KINDS, ironic=1)
    expected = helpers.expected_totals(out)
    with PlacementDirect(make_conf(db_url)) as placement:
        results = migrate.Migration(placement, load_hosts([out])).run()
        statuses = {result.nodename: result.status for result in results}
        assert statuses == {**{f"cmp-{index:04d}": "migrated" for index in range(HOSTS - 1)},
                            f"cmp-{HOSTS - 1:04d}": "skipped"}
        assert all(not result.violations for result in results)
        assert helpers.actual_totals(placement, expected) == expected


def test_bulk_path_refuses_a_chunk_below_one(database, tmp_path):
    with pytest.raises(ValueError, match="chunk must be at least 1 host"):
        generator.generate_bulk(database, str(tmp_path), 1, chunk=0)


def test_bulk_path_names_an_unknown_trait(database):
    host = generator.flat_placement_rows.FlatRows(
        generator.stable_uuid(0, "odd"), "odd", {"VCPU": {"total": 1}}, ["CUSTOM_NOT_THERE"], {})
    with pytest.raises(BadRequest, match="No such trait CUSTOM_NOT_THERE"):
        database.write(generator.flat_placement_rows.insert_flat_rows, [host])


def test_bulk_cli_needs_a_database(tmp_path, capsys):
    with pytest.raises(SystemExit):
        generator.main(["--bulk", "--placement-url", "http://127.0.0.1:1",
                        "--out", str(tmp_path)])
    assert "--bulk writes to the tables: it needs --database" in capsys.readouterr().err


def test_bulk_path_refuses_hosts_already_there(database, tmp_path):
    _bulk(database, str(tmp_path / "first"), generator.KINDS, ironic=0)
    with pytest.raises(generator.flat_placement_rows.ExistingProviders,
                       match="already exist: cmp-0000, cmp-0001; the bulk path only"):
        _bulk(database, str(tmp_path / "again"), generator.KINDS, ironic=0)
    assert len(deployment_state(database)["providers"]) == HOSTS
