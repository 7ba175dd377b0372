"""What every request of one application shares: options, database, policy.

Its own module so that the per-request context can name it without
importing the WSGI pipeline (:mod:`placement_wsgi.deploy`) that builds it.
"""

from __future__ import annotations

from oslo_config import cfg

from placement_wsgi import policy
from placement_wsgi.db.database import Database
from placement_wsgi.policy.decisions import PolicyDecisions


class PlacementApp:
    """What every request of one app shares: conf, database, policy."""

    def __init__(self, conf: cfg.ConfigOpts, database: Database) -> None:
        self.conf = conf
        self.database = database
        self.enforcer = policy.make_enforcer(conf)
        #: The enforcer's decisions, remembered while its rules stay the same.
        self.policy = PolicyDecisions(self.enforcer)
