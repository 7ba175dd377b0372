"""The checks of ``placement-status upgrade check``, on oslo.upgradecheck.

The checks are those of the reference Placement, under the same names and
with the same result codes, so automation that reads the table or the exit
status (0 success, 1 warning, 2 failure; 255 when the checks could not run)
sees the same answers:

``Missing Root Provider IDs``
    failure while a resource provider has no root provider id: ``db sync``
    past ``611cd6dffd7b`` refuses until ``db online_data_migrations`` ran;
``Incomplete Consumers``
    warning while allocations have consumers with no ``consumers`` row
    (``db online_data_migrations`` creates them; ``db sync`` past
    ``b5c396305c25`` refuses until then);
``Policy File JSON to YAML Migration``
    failure while ``[oslo_policy] policy_file`` is a JSON file
    (oslo.upgradecheck's common check).

oslo.upgradecheck is the library the reference command is built on: it
draws the table and orders the codes, so the layout is the same by
construction. Each database check is one read-only query
(:mod:`placement_wsgi.objects.online_migrations` counts the rows its
migrations would complete).
"""

from __future__ import annotations

from collections.abc import Callable

from oslo_config import cfg
from oslo_upgradecheck import common_checks, upgradecheck
from sqlalchemy.engine import Connection

from placement_wsgi.db.database import Database
from placement_wsgi.objects import online_migrations

_FIX = 'run "placement-manage db online_data_migrations" until it reports nothing to do'


class Checks(upgradecheck.UpgradeCommands):
    """The upgrade checks for one configuration and its database."""

    def __init__(self, conf: cfg.ConfigOpts, database: Database) -> None:
        self.conf = conf
        self.database = database

    def _rows_check(self, counter: Callable[[Connection], int], code: upgradecheck.Code,
                    what: str) -> upgradecheck.Result:
        """``code`` with ``what`` (after the count) while ``counter`` finds rows, else success."""
        missing = self.database.read(counter)
        if missing:
            return upgradecheck.Result(code, f"{missing} {what}: {_FIX}.")
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_root_provider_ids(self) -> upgradecheck.Result:
        return self._rows_check(
            online_migrations.count_missing_root_ids, upgradecheck.Code.FAILURE,
            "resource providers have no root provider id; the schema upgrade refuses to run "
            "until they have one")

    def _check_incomplete_consumers(self) -> upgradecheck.Result:
        return self._rows_check(
            online_migrations.count_missing_consumers, upgradecheck.Code.WARNING,
            "consumers of existing allocations have no consumer record (allocations written "
            "before microversion 1.8)")

    def _check_policy_json(self) -> upgradecheck.Result:
        return common_checks.check_policy_json(self, self.conf)

    _upgrade_checks = (
        ("Missing Root Provider IDs", _check_root_provider_ids),
        ("Incomplete Consumers", _check_incomplete_consumers),
        ("Policy File JSON to YAML Migration", _check_policy_json),
    )
