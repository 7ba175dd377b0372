"""Configuration objects for tests of the service.

``make_conf(url)`` is what a test app needs and nothing from the machine:
no config files, no ``OS_PLACEMENT_*`` environment, ``noauth2``.
"""

from __future__ import annotations

from typing import Any

from oslo_config import cfg

from placement_wsgi import conf as placement_conf

#: ``{group: {option: value}}``, as :func:`make_conf` takes them.
Overrides = dict[str, dict[str, Any]]


def make_conf(connection: str, **overrides: dict[str, Any]) -> cfg.ConfigOpts:
    """A fresh ConfigOpts for ``connection``, noauth2, no config files.

    ``overrides`` maps a group name to {option: value}.
    """
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf([], project="placement", default_config_files=[], default_config_dirs=[],
         use_env=False)
    conf.set_override("connection", connection, "placement_database")
    conf.set_override("auth_strategy", "noauth2", "api")
    for group, values in overrides.items():
        for name, value in values.items():
            conf.set_override(name, value, group)
    return conf
