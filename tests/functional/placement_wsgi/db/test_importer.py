"""``placement-manage db import --from URL``: Placement's tables out of a Queens nova_api.

On every enabled engine (source and target on the same engine): the
import copies every row, records the initial revision, and the database is
then upgraded by ``db sync`` and served by the project (reads and new
writes through PlacementDirect). A non-empty target, a source missing a
table and a source whose rows name rows that do not exist are refused with
one line and exit status 3, the target left as it was.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from placement_wsgi.cmd import manage
from placement_wsgi.db import importer, migration
from placement_wsgi.db.database import Database
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import nova_api_placement_db as nova_api
from tests.fixtures.config import make_conf
from tests.fixtures.empty_databases import empty_database


def ok(response):
    assert response.status_code < 400, (response.status_code, response.text)
    return response.json() if response.text else None


@pytest.fixture
def databases(engine, tmp_path):
    """(source URL, empty target URL, the target's placement.conf) on ``engine``."""
    with empty_database(engine, tmp_path) as source, \
            empty_database(engine, tmp_path) as target:
        conf = tmp_path / "placement.conf"
        conf.write_text(f"[placement_database]\nconnection = {target}\n")
        yield source, target, str(conf)


def place(conf, *argv):
    return manage.main(["--config-file", conf, "db", *argv])


def table_names(url):
    engine = sa.create_engine(url)
    try:
        return sorted(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_import_then_sync_then_serve(databases, capsys):
    source, target, conf = databases
    nova_api.populate(source)
    assert place(conf, "import", "--from", source) == 0
    out = capsys.readouterr().out
    assert "Imported 27 rows of 11 tables" in out and "revision b4ed3a175331" in out
    assert "Columns left behind: resource_providers.can_host." in out
    database = Database(target)
    try:
        assert migration.current_revision(database) == importer.INITIAL_REVISION
    finally:
        database.dispose()
    assert place(conf, "sync") == 0
    assert "upgraded from b4ed3a175331 to revision a082b8bb98d0" in capsys.readouterr().out
    with PlacementDirect(make_conf(target)) as placement:
        child = ok(placement.get(f"/resource_providers/{nova_api.CHILD_UUID}",
                                 microversion="1.14"))
        assert (child["name"], child["generation"]) == ("cmp-2_0000:D8:00.0", 2)
        assert child["root_provider_uuid"] == child["parent_provider_uuid"] == nova_api.CMP2_UUID
        held = ok(placement.get(f"/allocations/{nova_api.INSTANCE_1}", microversion="1.28"))
        assert {rp: entry["resources"] for rp, entry in held["allocations"].items()} == {
            nova_api.CMP2_UUID: {"VCPU": 2}, nova_api.CHILD_UUID: {"CUSTOM_PCI_10DE_20B5": 1}}
        assert held["consumer_generation"] == 0  # Queens had none: the schema's default
        inventory = ok(placement.get(f"/resource_providers/{nova_api.CMP1_UUID}/inventories"))
        assert inventory["inventories"]["VCPU"]["allocation_ratio"] == 4.0
        traits = ok(placement.get(f"/resource_providers/{nova_api.CMP2_UUID}/traits",
                                  microversion="1.6"))["traits"]
        assert sorted(traits) == ["COMPUTE_NODE", "CUSTOM_GOLD"]
        aggregates = ok(placement.get(f"/resource_providers/{nova_api.CMP1_UUID}/aggregates",
                                      microversion="1.19"))["aggregates"]
        assert aggregates == [nova_api.AGGREGATE]
        # New rows after the copied ids (the id sequences went on past them).
        ok(placement.post("/resource_providers", json={"name": "cmp-3"}, microversion="1.20"))
        ok(placement.put("/resource_classes/CUSTOM_NEW", microversion="1.7"))
        ok(placement.put("/traits/CUSTOM_NEW", microversion="1.6"))
        ok(placement.put(f"/allocations/{nova_api.INSTANCE_2}", json={
            "allocations": {nova_api.CMP1_UUID: {"resources": {"VCPU": 1}}},
            "project_id": "project-c", "user_id": "user-c", "consumer_generation": 0},
            microversion="1.28"))


def test_a_non_empty_target_is_refused(databases, capsys):
    source, target, conf = databases
    nova_api.populate(source)
    assert place(conf, "sync") == 0
    before = table_names(target)
    assert place(conf, "import", "--from", source) == manage.EXIT_REFUSED
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(
        "placement-manage: refused: the target database is not empty")
    assert table_names(target) == before


def test_a_source_missing_a_table_is_refused(databases, capsys):
    source, target, conf = databases
    nova_api.populate(source, skip=("consumers",))
    assert place(conf, "import", "--from", source) == manage.EXIT_REFUSED
    shown = sa.engine.make_url(source).render_as_string(hide_password=True)
    assert capsys.readouterr().err.splitlines() == [
        f"placement-manage: refused: the source {shown} has no table consumers: it is not a "
        "nova_api database of Pike or later, nor a Placement database"]
    assert table_names(target) == []


def test_rows_naming_missing_rows_roll_everything_back(databases, capsys):
    source, target, conf = databases
    content = nova_api.rows()
    content[nova_api.allocations].append(
        {"id": 5, "resource_provider_id": 99, "consumer_id": nova_api.INSTANCE_2,
         "resource_class_id": nova_api.VCPU, "used": 1})
    nova_api.populate(source, content)
    assert place(conf, "import", "--from", source) == manage.EXIT_REFUSED
    assert capsys.readouterr().err.splitlines() == [
        "placement-manage: refused: 1 row(s) of allocations name a resource_provider_id "
        "that resource_providers does not hold; nothing imported (fix the source on the old "
        "release, e.g. delete the rows, and run the import again)"]
    assert table_names(target) == []
    assert place(conf, "version") == 0
    assert capsys.readouterr().out.strip() == "None"


@pytest.mark.parametrize(("source", "status"), [
    ("missing SQLite file", 2),   # a configuration to fix
    ("server refusing", 1)])      # may come up: try again
def test_a_source_that_cannot_be_read_is_one_line(databases, capsys, tmp_path, source, status):
    _, target, conf = databases
    missing = tmp_path / "no" / "such.sqlite"
    url = (f"sqlite:///{missing}" if source == "missing SQLite file"
           else "postgresql+psycopg://postgres@127.0.0.1:1/nova_api")
    assert place(conf, "import", "--from", url) == status
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("placement-manage: error: ")
    assert url in err[0]
    assert table_names(target) == []
    assert not missing.exists() and not missing.parent.exists()


def test_data_held_counts_providers_and_consumers_not_tables(engine, tmp_path):
    with empty_database(engine, tmp_path) as url:
        sql = sa.create_engine(url)
        try:
            assert importer.data_held(sql) == {}  # no table at all
            with PlacementDirect(make_conf(url, placement_database={
                    "sync_on_startup": True})) as placement:
                assert importer.data_held(sql) == {}  # synced, empty
                ok(placement.post("/resource_providers", json={"name": "rp"}))
                assert importer.data_held(sql) == {"resource_providers": 1}
                rp = ok(placement.get("/resource_providers"))["resource_providers"][0]
                ok(placement.put(f"/resource_providers/{rp['uuid']}/inventories", json={
                    "resource_provider_generation": 0,
                    "inventories": {"VCPU": {"total": 2}}}))
                ok(placement.put("/allocations/11111111-1111-4111-8111-111111111111", json={
                    "allocations": {rp["uuid"]: {"resources": {"VCPU": 1}}},
                    "project_id": "p", "user_id": "u"}, headers={
                        "OpenStack-API-Version": "placement 1.12"}))
                assert importer.data_held(sql) == {"resource_providers": 1, "consumers": 1}
        finally:
            sql.dispose()
