"""Shared set-up of the pre-filter tests: aggregates, a network double, one filter run."""

from __future__ import annotations

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler import prefilters
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.image import image_properties
from nova_reshape.scheduler.prefilters import PrefilterContext
from nova_reshape.scheduler.request_spec import ImageMeta, RequestSpec

AGGREGATES = [
    Aggregate("t1", frozenset(), {"filter_tenant_id": "p1"}, uuid="agg-t1"),
    Aggregate("t2", frozenset(), {"filter_tenant_id_2": "p1", "other": "x"}, uuid="agg-t2"),
    Aggregate("t3", frozenset(), {"filter_tenant_id": "p2"}, uuid="agg-t3"),
    Aggregate("az", frozenset(), {"availability_zone": "az1"}, uuid="agg-az"),
    Aggregate("gpu", frozenset(), {"trait:CUSTOM_GPU": "required"}, uuid="agg-gpu"),
    Aggregate("ssd", frozenset(), {"trait:CUSTOM_SSD": "required"}, uuid="agg-ssd"),
]


class Neutron:
    """A network service double: ports, remote-managed ports, segment aggregates."""

    ports = {"p-fixed": {"fixed_ips": [{"subnet_id": "s1"}], "network_id": "n1"},
             "p-free": {"fixed_ips": [], "network_id": "n2"},
             "p-dpu": {"fixed_ips": [], "network_id": "n3"}}

    def show_port(self, port_id):
        return self.ports[port_id]

    def is_remote_managed_port(self, port_id):
        return port_id == "p-dpu"

    def aggregates_for_network(self, network_id):
        if network_id == "broken":
            raise LookupError(network_id)
        return {"n1": ["seg-a", "seg-b"], "n2": ["seg-c"], "n3": []}[network_id]

    def aggregates_for_subnet(self, subnet_id):
        return {"s1": ["seg-a"]}[subnet_id]


def run_filters(spec=None, *, scheduler=None, aggregates=AGGREGATES, version=None, networks=None,
         resolver=None):
    spec = spec or RequestSpec()
    conf = SchedulerConfig({"scheduler": scheduler or {}})
    context = PrefilterContext(conf, aggregates=aggregates, networks=networks,
                               min_compute_version=version, resolver=resolver)
    steps = prefilters.run_request_filters(spec, context)
    return spec, {step.name: step for step in steps}


def make_spec(extra_specs=None, props=None, **fields):
    return RequestSpec(flavor=Flavor(extra_specs=dict(extra_specs or {})),
                       image=ImageMeta(properties=image_properties(props or {}),
                                       disk_format=fields.pop("disk_format", None)),
                       **fields)
