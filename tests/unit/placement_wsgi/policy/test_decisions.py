"""PolicyDecisions: the same answers as oslo.policy, re-read when the rules change."""

from __future__ import annotations

import os

import pytest
from oslo_config import cfg

from placement_wsgi import conf as placement_conf
from placement_wsgi.policy import make_enforcer
from placement_wsgi.policy.decisions import PolicyDecisions

ADMIN = {"user_id": "admin", "project_id": "admin", "roles": ["admin", "service"],
         "system_scope": None, "system": False}
READER = {"user_id": "u", "project_id": "p", "roles": ["reader"], "system_scope": None,
          "system": False}
SYSTEM = {**ADMIN, "system_scope": "all", "system": True}
TARGET = {"project_id": "admin", "user_id": "admin"}
RULES = ("placement:traits:list", "placement:reshaper:reshape", "placement:usages")


def _conf(policy_file: str | None = None) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf([], project="placement", default_config_files=[], default_config_dirs=[],
         use_env=False)
    if policy_file:
        conf.set_override("policy_file", policy_file, "oslo_policy")
    return conf


class _Counting:
    """Counts the questions that reach oslo.policy's enforce."""

    def __init__(self, enforcer, monkeypatch) -> None:
        self.calls = 0
        real = enforcer.enforce

        def enforce(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(enforcer, "enforce", enforce)


def _write(path: str, text: str, mtime: float) -> None:
    with open(path, "w") as handle:
        handle.write(text)
    os.utime(path, (mtime, mtime))


def test_same_answers_as_the_enforcer():
    enforcer = make_enforcer(_conf())
    decisions = PolicyDecisions(enforcer)
    for rule in RULES:
        for creds in (ADMIN, READER, SYSTEM):
            expected = bool(enforcer.authorize(rule, dict(TARGET), dict(creds),
                                               do_raise=False))
            assert decisions.authorize(rule, TARGET, creds) is expected
            assert decisions.authorize(rule, TARGET, creds) is expected  # from the cache
    assert decisions.authorize("placement:reshaper:reshape", TARGET, ADMIN) is True
    assert decisions.authorize("placement:reshaper:reshape", TARGET, READER) is False
    assert decisions.authorize("placement:reshaper:reshape", TARGET, SYSTEM) is False


def test_a_repeated_question_is_answered_without_the_enforcer(monkeypatch):
    enforcer = make_enforcer(_conf())
    counting = _Counting(enforcer, monkeypatch)
    decisions = PolicyDecisions(enforcer)
    for _ in range(3):
        decisions.authorize("placement:traits:list", TARGET, ADMIN)
    assert counting.calls == 1
    decisions.authorize("placement:traits:list", {**TARGET, "project_id": "other"}, ADMIN)
    decisions.authorize("placement:traits:list", TARGET, READER)
    assert counting.calls == 3


def test_unregistered_rule_raises_like_the_enforcer():
    decisions = PolicyDecisions(make_enforcer(_conf()))
    with pytest.raises(Exception) as raised:
        decisions.authorize("placement:no:such:rule", TARGET, ADMIN)
    assert type(raised.value).__name__ == "PolicyNotRegistered"


def test_a_changed_policy_file_is_honoured(tmp_path):
    path = str(tmp_path / "policy.yaml")
    _write(path, '"placement:traits:list": "@"\n', 1_000_000)
    decisions = PolicyDecisions(make_enforcer(_conf(path)))
    assert decisions.authorize("placement:traits:list", TARGET, READER) is True
    _write(path, '"placement:traits:list": "!"\n', 2_000_000)
    assert decisions.authorize("placement:traits:list", TARGET, READER) is False
    assert decisions.authorize("placement:traits:list", TARGET, ADMIN) is False
    os.unlink(path)
    _write(path, '"placement:traits:list": "role:reader"\n', 3_000_000)
    assert decisions.authorize("placement:traits:list", TARGET, READER) is True
    assert decisions.authorize("placement:traits:list", TARGET, ADMIN) is False


def test_remote_checks_are_never_cached(tmp_path, monkeypatch):
    path = str(tmp_path / "policy.yaml")
    _write(path, '"placement:usages": "http://127.0.0.1:9/check"\n', 1_000_000)
    enforcer = make_enforcer(_conf(path))
    counting = _Counting(enforcer, monkeypatch)
    decisions = PolicyDecisions(enforcer)
    for _ in range(2):
        decisions.authorize("placement:traits:list", TARGET, ADMIN)
    assert counting.calls == 2


def test_unhashable_credentials_are_answered_uncached(monkeypatch):
    enforcer = make_enforcer(_conf())
    counting = _Counting(enforcer, monkeypatch)
    decisions = PolicyDecisions(enforcer)
    creds = {**ADMIN, "odd": object.__new__(type("Unhashable", (), {"__hash__": None}))}
    assert decisions.authorize("placement:traits:list", TARGET, creds) is True
    assert decisions.authorize("placement:traits:list", TARGET, creds) is True
    assert counting.calls == 2
