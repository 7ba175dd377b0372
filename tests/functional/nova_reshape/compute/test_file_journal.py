"""The migration over HTTP with a journal file: each written node's intent and outcome.

The run is the Migration itself (no command line), served over real HTTP
and counted by the service: the journal adds, per written node, one read
of the whole body of each consumer the plan moves (the check read it once
already), and the run counts those requests.
"""

from __future__ import annotations

from nova_reshape import journal
from nova_reshape.compute import migrate
from nova_reshape.journal import http_io, journal_file, vouched
from nova_reshape.journal.snapshot import differences
from nova_reshape.transport import http_placement
from nova_reshape.transport.http import service_url
from nova_reshape.virt.host import load_hosts
from tests.fixtures.config import make_conf
from tests.fixtures.killed_runs import generate
from tests.fixtures.served import served
from tests.functional.nova_reshape.conftest import ADMIN_HEADERS


def _run(url, out, settings):
    client = http_placement(url, token="admin", headers=ADMIN_HEADERS)
    try:
        run = migrate.Migration(client, load_hosts([out]), settings)
        return run.run(), run.calls
    finally:
        client.close()


def test_each_written_node_has_its_intent_and_its_outcome_as_read_back(db_url, tmp_path):
    out, _ = generate(db_url, tmp_path, hosts=3, instances=4, kinds=())
    path = str(tmp_path / "journal.sqlite")
    engine = journal_file.open_journal(path, create=True)
    try:
        with served(make_conf(db_url)) as (url, log):
            with journal.recording(engine, "migrate_compute_inventory", "test", {},
                                   custom_names={}) as run:
                results, calls = _run(url, out, migrate.Settings(journal=run.run_id,
                                                                 journal_file=path))
            assert {result.status for result in results} == {migrate.MIGRATED}
            assert calls == len(log)  # the journal's requests are the run's, counted
            consumer_reads = [path for method, path in log.requests
                              if method == "GET" and path.startswith("/allocations/")]
            keys = journal_file.entry_keys(engine, run.run_id)
            assert [key.nodename for key in keys] == ["cmp-0000", "cmp-0001", "cmp-0002"]
            assert all(key.id > 0 for key in keys)  # every intent closed by its outcome
            client = http_placement(url, token="admin", headers=ADMIN_HEADERS)
            try:
                for entry in journal.entries(engine, run.run_id):
                    whole = http_io.whole_consumers(entry.before)
                    assert whole and whole == http_io.whole_consumers(entry.after)
                    # Read whole by the check, and once more for the outcome; no other.
                    assert sorted(path for path in consumer_reads if path.removeprefix(
                        "/allocations/") in whole) == sorted(
                            2 * [f"/allocations/{consumer}" for consumer in whole])
                    now = http_io.read_snapshot(client, entry.root, whole)
                    assert differences(entry.after, now) == []
                    assert differences(entry.before, now) != []
            finally:
                client.close()
    finally:
        engine.dispose()


def test_an_outcome_vouches_only_when_the_listing_was_its_read_back(db_url, tmp_path):
    """Each written node's outcome vouches for it (a later run with the file may
    take its inventories and traits from it) in the service written to; a node
    another client wrote between its writes and its read-back is read back in
    full, and its outcome vouches for nothing (its traits are the plan's, not
    read, at a generation the node's writes do not explain). Nodes without
    GPUs: their writes are PUTs, each answering its generation (a provider the
    reshaper wrote need only be past the generation it was sent, as for the
    read-back)."""
    out, _ = generate(db_url, tmp_path, hosts=3, gpus=0, instances=4, kinds=())
    path = str(tmp_path / "journal.sqlite")
    engine = journal_file.open_journal(path, create=True)
    generations: dict[str, int] = {}
    touched: list[str] = []
    try:
        with served(make_conf(db_url)) as (url, _log):
            other = http_placement(url, token="admin", headers=ADMIN_HEADERS)

            def listing():
                return other.get("/resource_providers", microversion="1.14").json()[
                    "resource_providers"]

            def another_writer(phase, done, total):
                if phase == "check" and done == total and not generations:
                    generations.update((p["uuid"], p["generation"]) for p in listing())
                if phase != "migrate" or touched:
                    return
                for provider in listing():
                    uuid = provider["uuid"]
                    if (provider["parent_provider_uuid"] is None
                            and provider["generation"] > generations.get(uuid, 1 << 30)):
                        response = other.put(f"/resource_providers/{uuid}/aggregates", json={
                            "aggregates": [],
                            "resource_provider_generation": provider["generation"]},
                            microversion="1.19")
                        assert response.status_code == 200, response.text
                        touched.append(uuid)
                        return

            try:
                with journal.recording(engine, "migrate_compute_inventory", "test", {},
                                       custom_names={}) as run:
                    client = http_placement(url, token="admin", headers=ADMIN_HEADERS)
                    try:
                        results = migrate.Migration(
                            client, load_hosts([out]),
                            migrate.Settings(journal=run.run_id, journal_file=path),
                            progress=another_writer).run()
                    finally:
                        client.close()
            finally:
                other.close()
            here = service_url(http_placement(url))
        assert {result.status for result in results} == {migrate.UPDATED}
        assert len(touched) == 1
        roots = {entry.root: entry for entry in journal.entries(engine, run.run_id)}
        assert touched[0] in roots
        found = vouched.recorded(engine, list(roots), here)
        assert found == {root: entry.after for root, entry in roots.items()
                         if root != touched[0]}
        assert vouched.recorded(engine, list(roots), "http://elsewhere:8778") == {}
    finally:
        engine.dispose()
