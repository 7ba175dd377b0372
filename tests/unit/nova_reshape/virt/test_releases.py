"""DriverOptions.conf_for: a node's own nova.conf (its host's file) before the common one."""

from __future__ import annotations

import pickle

from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.virt.releases import DriverOptions


def test_a_node_of_a_host_with_its_own_file_gets_that_one():
    common, own = NovaConf(reserved_host_memory_mb=1), NovaConf(reserved_host_memory_mb=2)
    options = DriverOptions(nova_conf=common, node_confs={"cmp-7.example.org": own})
    assert options.conf_for("cmp-7.example.org") is own
    assert options.conf_for("cmp-1.example.org") is common
    assert DriverOptions().conf_for("cmp-1.example.org") is None
    assert pickle.loads(pickle.dumps(options)) == options  # handed to the workers
