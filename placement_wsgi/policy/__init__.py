"""Policy: the rule defaults of the reference Placement, and an enforcer.

Each WSGI app gets its own :class:`oslo_policy.policy.Enforcer` bound to its
own configuration (``[oslo_policy] policy_file``, ``enforce_new_defaults``),
so apps with different policies can live side by side in one process.
"""

from __future__ import annotations

from oslo_config import cfg
from oslo_policy import policy

from placement_wsgi.policy.rules import list_rules


def make_enforcer(conf: cfg.ConfigOpts) -> policy.Enforcer:
    """An enforcer for ``conf`` with every default rule registered."""
    enforcer = policy.Enforcer(conf, use_conf=True)
    enforcer.register_defaults(list_rules())
    enforcer.load_rules()
    return enforcer


__all__ = ["list_rules", "make_enforcer"]
