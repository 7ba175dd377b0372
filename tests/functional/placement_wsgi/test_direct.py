"""PlacementDirect: the service in-process over wsgi-intercept (see docs/architecture.md)."""

from __future__ import annotations

import threading
import uuid

import pytest
import requests
from oslo_config import cfg
from requests.packages.urllib3.connectionpool import HTTPConnectionPool

from placement_wsgi import direct
from placement_wsgi.db.database import Database
from placement_wsgi.direct import PlacementDirect
from placement_wsgi.objects.resource_provider import NewProvider
from placement_wsgi.objects.tree_change import TreeChange
from tests.fixtures.config import make_conf
from tests.fixtures.databases import SERVERS


def _bare_conf(db_url: str) -> cfg.ConfigOpts:
    """Registered options and a connection, auth_strategy left at its default."""
    from placement_wsgi import conf as placement_conf

    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf([], project="placement", default_config_files=[], default_config_dirs=[],
         use_env=False)
    conf.set_override("connection", db_url, "placement_database")
    return conf


def test_requests_reach_the_app_with_admin_identity(db_url):
    conf = _bare_conf(db_url)
    with PlacementDirect(conf) as placement:
        assert placement.base_url.startswith("http://placement-direct-")
        assert placement.base_url.endswith("/placement")
        root = placement.get("/")
        assert root.status_code == 200
        assert root.headers["openstack-api-version"] == "placement 1.0"
        created = placement.post("/resource_providers", json={"name": "cn1"},
                                 microversion="1.20")
        assert created.status_code == 200, created.text
        # Links carry the mount point (SCRIPT_NAME).
        links = {link["rel"]: link["href"] for link in created.json()["links"]}
        assert links["self"].startswith("/placement/resource_providers/")
        listed = placement.get("/resource_providers", microversion="1.14")
        assert [rp["name"] for rp in listed.json()["resource_providers"]] == ["cn1"]
        # admin,service roles: service-only policies pass.
        assert placement.put(f"/traits/CUSTOM_{uuid.uuid4().hex.upper()}",
                             microversion="1.6").status_code == 201
    # The caller's conf is left as given: the noauth2 override was temporary.
    assert conf.api.auth_strategy == "keystone"


def test_latest_microversion_is_the_default(db_url):
    with PlacementDirect(make_conf(db_url), latest_microversion=True) as placement:
        response = placement.get("/")
        assert response.headers["openstack-api-version"] == "placement 1.39"
        older = placement.get("/", microversion="1.14")
        assert older.headers["openstack-api-version"] == "placement 1.14"


def test_two_at_once_on_different_databases(engine, db_url):
    other_url = SERVERS.fresh_url("sqlite")
    with PlacementDirect(make_conf(db_url)) as one, PlacementDirect(make_conf(other_url)) as two:
        assert one.base_url != two.base_url
        one.post("/resource_providers", json={"name": "only-in-one"}, microversion="1.20")
        two.post("/resource_providers", json={"name": "only-in-two"}, microversion="1.20")
        names_one = [rp["name"] for rp in one.get("/resource_providers").json()[
            "resource_providers"]]
        names_two = [rp["name"] for rp in two.get("/resource_providers").json()[
            "resource_providers"]]
        assert names_one == ["only-in-one"]
        assert names_two == ["only-in-two"]
        two_url = two.base_url
    # Closing both restores requests and unregisters the hosts.
    assert HTTPConnectionPool.ConnectionCls.__name__ == "HTTPConnection"
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.get(two_url + "/", timeout=2)


def test_nested_close_keeps_the_other_working(db_url):
    outer = PlacementDirect(make_conf(db_url))
    with outer as placement:
        other_url = SERVERS.fresh_url("sqlite")
        with PlacementDirect(make_conf(other_url)) as inner:
            assert inner.get("/").status_code == 200
        assert placement.get("/resource_providers").status_code == 200


def test_one_after_another_in_a_process(db_url):
    for index in range(3):
        with PlacementDirect(make_conf(db_url)) as placement:
            response = placement.post("/resource_providers", json={"name": f"rp{index}"},
                                      microversion="1.20")
            assert response.status_code == 200
            assert len(placement.get("/resource_providers").json()[
                "resource_providers"]) == index + 1


def test_two_on_one_conf_both_use_noauth2(db_url):
    """A second PlacementDirect on the same conf still builds a noauth2 app.

    Regression: the first open used to override and clear ``[api]
    auth_strategy``, after which oslo.config reported the option as set,
    so the second open built a keystone app and every request failed.
    """
    conf = _bare_conf(db_url)
    for name in ("first", "second", "third"):
        with PlacementDirect(conf) as placement:
            assert "x-auth-token" in {key.lower() for key in placement.headers}
            created = placement.post("/resource_providers", json={"name": name},
                                     microversion="1.20")
            assert created.status_code == 200, created.text
    assert conf.api.auth_strategy == "keystone"


def test_two_open_at_once_on_one_conf(db_url):
    conf = _bare_conf(db_url)
    with PlacementDirect(conf) as outer, PlacementDirect(conf) as inner:
        assert inner.get("/resource_providers").status_code == 200
        assert outer.get("/resource_providers").status_code == 200


def test_explicit_keystone_is_kept_on_a_second_open(db_url):
    conf = make_conf(db_url, api={"auth_strategy": "keystone"})
    for _ in range(2):
        with PlacementDirect(conf) as placement:
            assert "x-auth-token" not in {key.lower() for key in placement.headers}


def test_threads_share_one_direct(db_url):
    errors = []
    with PlacementDirect(make_conf(db_url)) as placement:
        def worker(index: int) -> None:
            response = placement.post("/resource_providers", json={"name": f"t{index}"},
                                      microversion="1.20")
            if response.status_code != 200:
                errors.append(response.text)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert len(placement.get("/resource_providers").json()["resource_providers"]) == 6


def test_registers_options_when_missing(tmp_path, db_url):
    config = tmp_path / "placement.conf"
    config.write_text(f"[placement_database]\nconnection = {db_url}\n")
    conf = cfg.ConfigOpts()
    conf(["--config-file", str(config)], project="placement", default_config_files=[],
         default_config_dirs=[], use_env=False)
    with PlacementDirect(conf) as placement:
        assert placement.get("/resource_providers").status_code == 200


def test_explicit_keystone_sends_no_identity(db_url):
    conf = make_conf(db_url, api={"auth_strategy": "keystone"})
    with PlacementDirect(conf) as placement:
        assert {key.lower() for key in placement.headers} == {"accept"}
        assert placement.get("/").status_code == 200  # the root needs no token
        # (Anything else would need a reachable Keystone.)


def test_extra_headers_win(db_url):
    with PlacementDirect(make_conf(db_url), headers={"X-Roles": "reader"}) as placement:
        # Not admin any more: the default policy refuses.
        assert placement.get("/resource_providers").status_code == 403


def test_exit_disposes_the_database(monkeypatch, db_url):
    disposed = []
    original = Database.dispose

    def spy(self):
        disposed.append(str(self.url))
        original(self)

    monkeypatch.setattr(Database, "dispose", spy)
    with PlacementDirect(make_conf(db_url)) as placement:
        placement.get("/resource_providers")
        assert disposed == []
    assert len(disposed) == 1


def test_exit_after_an_error_still_cleans_up(db_url):
    with pytest.raises(RuntimeError), PlacementDirect(make_conf(db_url)) as placement:
        url = placement.base_url
        raise RuntimeError("boom")
    assert direct._install_count == 0
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.get(url + "/", timeout=2)


def test_reentering_an_open_direct_is_refused(db_url):
    placement = PlacementDirect(make_conf(db_url))
    with placement, pytest.raises(RuntimeError, match="already open"):
        placement.__enter__()


def test_unparsed_conf_with_overrides_works(db_url):
    from placement_wsgi import conf as placement_conf

    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf.set_override("connection", db_url, "placement_database")
    with PlacementDirect(conf) as placement:
        assert placement.get("/resource_providers").status_code == 200
    assert conf.placement_database.connection == db_url


def test_apply_tree_change_writes_through_the_open_database_only(db_url):
    new = str(uuid.uuid4())
    change = TreeChange(create=[NewProvider("one-call", new)], traits={new: ["CUSTOM_ONE"]})
    placement = PlacementDirect(make_conf(db_url))
    with pytest.raises(RuntimeError, match="not open"):
        placement.apply_tree_change(change)
    with placement as client:
        assert placement.apply_tree_change(change) == {new: 1}
        traits = client.get(f"/resource_providers/{new}/traits", microversion="1.6").json()
        assert traits["traits"] == ["CUSTOM_ONE"]


def test_the_open_database_is_offered_only_while_open(db_url):
    direct = PlacementDirect(make_conf(db_url))
    with pytest.raises(RuntimeError, match="not open"):
        direct.database  # noqa: B018 - the property is what is tested
    with direct:
        assert direct.database.engine.url.render_as_string(hide_password=False) == db_url
    with pytest.raises(RuntimeError, match="not open"):
        direct.database  # noqa: B018
