"""make_conf: a test app's configuration, nothing taken from the machine."""

from __future__ import annotations

from placement_wsgi.testing.config import make_conf


def test_the_connection_and_noauth2_are_set(monkeypatch):
    monkeypatch.setenv("OS_PLACEMENT_DATABASE__CONNECTION", "mysql://elsewhere")
    conf = make_conf("sqlite:///x.db")
    assert conf.placement_database.connection == "sqlite:///x.db"
    assert conf.api.auth_strategy == "noauth2"
    assert conf.config_file == []


def test_overrides_are_set_per_group():
    conf = make_conf("sqlite://", oslo_policy={"enforce_new_defaults": True},
                     api={"auth_strategy": "keystone"})
    assert conf.oslo_policy.enforce_new_defaults is True
    assert conf.api.auth_strategy == "keystone"


def test_each_call_is_a_fresh_object():
    first = make_conf("sqlite://", api={"auth_strategy": "keystone"})
    assert make_conf("sqlite://").api.auth_strategy == "noauth2"
    assert first.api.auth_strategy == "keystone"
