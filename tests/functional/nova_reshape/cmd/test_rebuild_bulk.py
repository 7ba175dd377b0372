"""``placement rebuild``'s set-based path against its requests' path, and its journal.

The cloud is the fixtures' (cell1: cmp-1 with PCPU, PCI devices and a VF,
cmp-2, an ironic node; cell2: cmp-3; both cells' hosts in aggregates,
Cyborg's devices where asked). The set-based path must leave every
Placement table as the requests' path leaves it (generations, times and
surrogate ids aside); its run is journaled, and ``placement revert`` of it
empties Placement again, refusing a node changed since.
"""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from nova_reshape.cmd import manage
from nova_reshape.journal import list_runs
from placement_wsgi.db import importer
from placement_wsgi.db.database import Database
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import nova_api_db as api_fx
from tests.fixtures import nova_db as fx
from tests.fixtures.config import make_conf
from tests.fixtures.placement_dump import normalized_dump
from tests.functional.nova_reshape.cmd.test_from_nova import run
from tests.functional.nova_reshape.cmd.test_nova_cells import PCI
from tests.functional.nova_reshape.cmd.test_rebuild import (
    empty_placement,
    put_hosts_in_aggregates,
    requests_path,
)

#: Tables a rebuild fills and its revert empties (Placement never deletes projects,
#: users or aggregates' rows once created; the API leaves them too).
FILLED = ("resource_providers", "inventories", "allocations", "consumers",
          "resource_provider_traits", "resource_provider_aggregates")


def rebuilt(engine, cloud, tmp_path, name, *extra):
    url, conf = empty_placement(engine, tmp_path / name)
    code, text, err = run("--config-file", conf, "placement", "rebuild", "--nova-config",
                          cloud.nova_conf(tmp_path / f"{name}.conf", pci=PCI), *extra)
    assert code == 0, text + err
    return url, conf, text


def runs(conf):
    code, text, err = run("--config-file", conf, "placement", "runs", "--format", "json")
    assert code == 0, text + err
    return json.loads(text)


@pytest.mark.parametrize("cyborg", [False, True], ids=["nova", "with-cyborg"])
def test_the_set_based_path_writes_what_the_requests_path_writes(engine, tmp_path,
                                                                  monkeypatch, cyborg):
    from tests.fixtures.cyborg_db import cyborg_database

    with api_fx.nova_cloud(engine) as cloud:
        put_hosts_in_aggregates(cloud)
        databases = cyborg_database(engine) if cyborg else None
        try:
            extra = ("--cyborg-database", next(databases)) if databases else ()
            # Read each result before the next (a server's test database is reused).
            bulk_url, bulk_conf, bulk_text = rebuilt(engine, cloud, tmp_path, "bulk", *extra)
            bulk_dump, bulk_runs = normalized_dump(bulk_url), runs(bulk_conf)
            with monkeypatch.context() as patched:
                requests_path(patched)
                ref_url, ref_conf, ref_text = rebuilt(engine, cloud, tmp_path, "requests", *extra)
            ref_dump, ref_runs = normalized_dump(ref_url), runs(ref_conf)
        finally:
            if databases:
                databases.close()
    assert bulk_text == ref_text
    assert bulk_dump == ref_dump
    assert len(bulk_dump["resource_providers"]) >= 6 and len(bulk_dump["allocations"]) > 7
    assert [item["command"] for item in bulk_runs] == ["rebuild"]
    assert ref_runs == []  # the requests' path is not journaled (docs/journal.md)


def held(url):
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            return {name: connection.execute(sa.select(sa.func.count()).select_from(
                sa.table(name))).scalar_one() for name in FILLED}
    finally:
        engine.dispose()


def test_revert_of_a_rebuild_empties_placement_and_a_rebuild_runs_again(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        put_hosts_in_aggregates(cloud)
        url, conf, _ = rebuilt(engine, cloud, tmp_path, "p")
        before = normalized_dump(url)
        [entry] = runs(conf)
        assert (entry["command"], entry["changed"], entry["status"]) == ("rebuild", 3, "ok")
        code, text, err = run("--config-file", conf, "placement", "runs", "show", entry["id"],
                              "--format", "json")
        shown = json.loads(text)
        assert all(node["before"]["providers"] == [] for node in shown["nodes"])
        code, text, err = run("--config-file", conf, "placement", "revert", entry["id"])
        assert code == 0, text + err
        assert sorted(line.split(":")[0] for line in text.splitlines()[:3]) == [
            "cmp-1.example.org", "cmp-2.example.org", "cmp-3.example.org"]
        assert all(": reverted:" in line for line in text.splitlines()[:3])
        assert held(url) == dict.fromkeys(FILLED, 0)
        database = Database(url)
        try:
            assert importer.data_held(database.engine) == {}
        finally:
            database.dispose()
        dump = normalized_dump(url)
        assert not [name for (name,) in dump["resource_classes"] if name.startswith("CUSTOM_")]
        # Run again: every node is already back; then the rebuild is possible again.
        code, text, err = run("--config-file", conf, "placement", "revert", entry["id"])
        assert code == 0 and text.count("already-reverted") == 3, text + err
        code, text, err = run("--config-file", conf, "placement", "rebuild", "--nova-config",
                              cloud.nova_conf(tmp_path / "again.conf", pci=PCI))
        assert code == 0, text + err
        assert normalized_dump(url) == before


def test_a_node_changed_since_the_rebuild_is_refused_the_others_reverted(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        url, conf, _ = rebuilt(engine, cloud, tmp_path, "p")
        [entry] = runs(conf)
        with PlacementDirect(make_conf(url)) as placement:
            path = f"/resource_providers/{fx.CMP2_UUID}/inventories/DISK_GB"
            record = placement.get(path, microversion="1.28").json()
            record["total"] += 1
            assert placement.put(path, json=record, microversion="1.28").status_code == 200
        code, text, err = run("--config-file", conf, "placement", "revert", entry["id"])
        assert code == manage.EXIT_REFUSED, text + err
        [refused] = [line for line in text.splitlines() if "refused" in line]
        assert refused.startswith("cmp-2.example.org: refused: changed since the run: "
                                  "inventory DISK_GB of cmp-2.example.org total")
        assert text.count(": reverted:") == 2
        with PlacementDirect(make_conf(url)) as placement:
            roots = placement.get("/resource_providers", microversion="1.14").json()
        assert [provider["uuid"] for provider in roots["resource_providers"]] == [
            fx.CMP2_UUID]
        database = Database(url)
        try:
            [rebuild_run, revert_run] = list_runs(database.engine)
        finally:
            database.dispose()
        assert (revert_run.reverts, revert_run.changed) == (rebuild_run.id, 2)


def test_sigterm_between_batches_leaves_whole_journaled_batches_and_revert_empties(
        tmp_path, monkeypatch):
    import os
    import signal

    from nova_reshape.cmd import rebuild_bulk

    real_load = rebuild_bulk.bulk_load.load_trees

    def one_node_per_batch_then_sigterm(database, trees, **options):
        def done(count):
            if count == 1:
                os.kill(os.getpid(), signal.SIGTERM)
        return real_load(database, trees, batch_size=1, record=options["record"], done=done)

    monkeypatch.setattr(rebuild_bulk.bulk_load, "load_trees", one_node_per_batch_then_sigterm)
    with api_fx.nova_cloud("sqlite") as cloud:
        url, conf = empty_placement("sqlite", tmp_path / "p")
        code, text, err = run("--config-file", conf, "placement", "rebuild", "--nova-config",
                              cloud.nova_conf(tmp_path / "n.conf", pci=PCI))
        assert code == 143, text + err
        [line] = [line for line in err.splitlines() if "error:" in line]
        assert "interrupted by SIGTERM" in line and "placement revert" in line
        [entry] = runs(conf)
        assert (entry["status"], entry["changed"]) == ("interrupted", 1)
        assert held(url)["resource_providers"] > 0
        code, text, err = run("--config-file", conf, "placement", "revert", entry["id"])
        assert code == 0 and text.count(": reverted:") == 1, text + err
        assert held(url) == dict.fromkeys(FILLED, 0)
