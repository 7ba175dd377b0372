"""The aggregate isolation filters: tenants and instance types."""

from __future__ import annotations

from tests.unit.nova_reshape.scheduler.helpers import host, run_filter

TENANT_AGGS = [{"name": "t", "hosts": ["h1"], "metadata": {"filter_tenant_id": "p1, p2"}},
               {"name": "t2", "hosts": ["h1"], "metadata": {"filter_tenant_id_2": "p3"}},
               {"name": "other", "hosts": ["h2"], "metadata": {"ssd": "true"}}]


def test_multi_tenancy_isolation():
    hosts = [host("h1"), host("h2"), host("h3")]
    for project, expected in (("p1", ["h1", "h2", "h3"]), ("p3", ["h1", "h2", "h3"]),
                              ("p9", ["h2", "h3"])):
        kept, rejected = run_filter("AggregateMultiTenancyIsolation", hosts,
                                    aggregates=TENANT_AGGS, request={"project_id": project})
        assert kept == expected
    assert "p9" in rejected["h1"]


def test_type_affinity():
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"instance_type": "m1.small, m1.big"}},
            {"name": "b", "hosts": ["h2"], "metadata": {"instance_type": "m1.tiny"}}]
    hosts = [host("h1"), host("h2"), host("h3")]
    kept, rejected = run_filter("AggregateTypeAffinityFilter", hosts, aggregates=aggs,
                                request={"flavor": {"name": "m1.big"}})
    assert kept == ["h1", "h3"]
    assert "m1.big" in rejected["h2"]
