"""Placement's policy rule defaults (policy/rules.py)."""

from __future__ import annotations

from oslo_policy import policy

from placement_wsgi.policy import rules


def test_every_route_rule_is_documented_once_for_projects():
    every = rules.list_rules()
    names = [rule.name for rule in every]
    assert len(names) == len(set(names))
    assert names[:5] == [rules.ADMIN_API, rules.SERVICE_API, rules.ADMIN_OR_SERVICE_API,
                         rules.PROJECT_READER_API, rules.ADMIN_OR_PROJECT_READER_OR_SERVICE_API]
    routes = [rule for rule in every if isinstance(rule, policy.DocumentedRuleDefault)]
    assert routes and all(rule.name.startswith("placement:") for rule in routes)
    assert all(rule.scope_types == ["project"] and rule.operations for rule in routes)


def test_route_defaults_are_admin_or_service_but_usages_and_reshaper():
    by_name = {rule.name: rule.check_str for rule in rules.list_rules()}
    assert by_name["placement:resource_providers:list"] == \
        f"rule:{rules.ADMIN_OR_SERVICE_API}"
    assert by_name["placement:usages"] == f"rule:{rules.ADMIN_OR_PROJECT_READER_OR_SERVICE_API}"
    assert by_name["placement:reshaper:reshape"] == f"rule:{rules.SERVICE_API}"
