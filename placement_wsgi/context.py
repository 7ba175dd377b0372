"""The per-request context: who is calling, and the app's shared services."""

from __future__ import annotations

from typing import Any

from oslo_context import context as oslo_context

from placement_wsgi import errors
from placement_wsgi.app import PlacementApp


class RequestContext(oslo_context.RequestContext):
    """oslo.context's context plus the app it runs in (database, conf, policy)."""

    def __init__(self, *args: Any, app: PlacementApp | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.app = app

    @property
    def database(self):  # noqa: ANN201 - Database
        return self.app.database

    @property
    def conf(self):  # noqa: ANN201 - ConfigOpts
        return self.app.conf

    def policy_credentials(self) -> dict[str, Any]:
        """Credentials for oslo.policy.

        Any system scope header makes the context system-scoped (every
        placement rule is project-scoped, so it is then refused).
        """
        return {
            "user_id": self.user_id,
            "project_id": self.project_id,
            "roles": self.roles,
            "system_scope": self.system_scope,
            "system": bool(self.system_scope),
            "domain_id": self.domain_id,
            "user_domain_id": self.user_domain_id,
            "project_domain_id": self.project_domain_id,
            "is_admin_project": self.is_admin_project,
        }

    def can(self, rule: str, target: dict[str, Any] | None = None) -> None:
        """Raise 403 unless policy allows ``rule`` on ``target``."""
        if target is None:
            target = {"project_id": self.project_id, "user_id": self.user_id}
        if not self.app.policy.authorize(rule, target, self.policy_credentials()):
            raise errors.Forbidden(f"Policy does not allow {rule} to be performed.")
