"""The base gabbi fixture: a fresh database and app for each YAML file.

gabbi builds its HTTP clients when it *builds* the tests, before any
fixture runs, and asks ``intercept`` (a zero-argument factory) for the app
then. :func:`setup_app` therefore returns :data:`APP`, a stand-in that
forwards each request to the app of the fixture running now; a YAML file
must list a fixture (``fixtures: [APIFixture]``) for requests to be served.

:class:`APIFixture` follows upstream Placement's fixture of that name:
``[oslo_policy] enforce_new_defaults = false`` (the legacy defaults, under
which ``admin`` may do everything), noauth2, and the same identifiers in
the environment (``$ENVIRON['RP_UUID']`` ...). Subclasses say what differs
through class attributes (``database_server``, ``enforce_new_defaults``,
``overrides``, ``policy_rules``) or by overriding
:meth:`APIFixture.policy_file_rules`, and build data by overriding
:meth:`APIFixture.make_entities`, which may call the API with
``self.client``.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from gabbi import fixture

from placement_wsgi import deploy
from placement_wsgi.policy import list_rules
from placement_wsgi.testing.client import WSGIClient
from placement_wsgi.testing.config import Overrides, make_conf
from placement_wsgi.testing.databases import THROWAWAY

__all__ = [
    "APP", "APIFixture", "CORSFixture", "LegacyRBACPolicyFixture", "OpenPolicyFixture",
    "SecureRBACPolicyFixture", "setup_app",
]


class LiveApp:
    """A WSGI app forwarding to the app of the fixture running now."""

    def __init__(self) -> None:
        self.app: Callable[..., Any] | None = None

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if self.app is None:
            raise RuntimeError("no Placement app: the YAML file must list a fixture, "
                               "e.g. 'fixtures: [APIFixture]'")
        return self.app(environ, start_response)


#: The one stand-in every intercepted test reaches.
APP = LiveApp()


def setup_app() -> LiveApp:
    """gabbi's ``intercept``: the stand-in for the current fixture's app."""
    return APP


#: Variables holding a random UUID for each YAML file: upstream's, and this
#: project's own older names.
UUID_VARIABLES = (
    "RP_UUID", "RP_UUID1", "RP_UUID2", "RP_UUID3", "ALT_RP_UUID",
    "PARENT_PROVIDER_UUID", "ALT_PARENT_PROVIDER_UUID", "CHILD_RP_UUID", "GRANDCHILD_RP_UUID",
    "AGGA_UUID", "AGGB_UUID", "AGGC_UUID", "CONSUMER_UUID", "ALT_CONSUMER_UUID",
    "PROJECT_ID", "ADMIN_PROJECT_ID", "SERVICE_PROJECT_ID", "ALT_PROJECT_ID", "PROJECT_ID_ALT",
    "USER_ID", "ALT_USER_ID", "USER_ID_ALT", "INSTANCE_UUID", "MIGRATION_UUID",
)

#: Variables holding a random provider name for each YAML file.
NAME_VARIABLES = {"RP_NAME": "rp", "RP_NAME1": "rp1", "RP_NAME2": "rp2", "ALT_RP_NAME": "alt-rp"}

#: Fixed variables, as upstream sets them.
CONSTANT_VARIABLES = {
    "CUSTOM_RES_CLASS": "CUSTOM_IRON_NFV",
    "CUSTOM_RES_CLASS1": "CUSTOM_IRON_NFV1",
    "CUSTOM_RES_CLASS2": "CUSTOM_IRON_NFV2",
}


def new_uuid() -> str:
    return str(uuid.uuid4())


class APIFixture(fixture.GabbiFixture):
    """A fresh database and app, the legacy policy defaults, identifiers in the environment."""

    #: Server of the database (see placement_wsgi.testing.databases); None:
    #: the one PLACEMENT_WSGI_TEST_DB_SERVER names, else SQLite.
    database_server: ClassVar[str | None] = None
    #: ``[oslo_policy] enforce_new_defaults``.
    enforce_new_defaults: ClassVar[bool] = False
    #: More configuration: ``{group: {option: value}}``.
    overrides: ClassVar[Overrides] = {}
    #: Policy rules written to a policy file for the app (None: no file).
    policy_rules: ClassVar[Mapping[str, str] | None] = None

    def start_fixture(self) -> None:
        self.saved_environ: dict[str, str | None] = {}
        self.policy_path: str | None = None
        self.app: Any = None
        try:
            self.conf = make_conf(THROWAWAY.fresh_url(self.database_server),
                                  **self.configuration())
            self.app = deploy.loadapp(self.conf)
            self.client = WSGIClient(self.app)
            APP.app = self.app
            self.set_identifiers()
            self.make_entities()
        except BaseException:
            self.stop_fixture()
            raise

    def stop_fixture(self) -> None:
        APP.app = None
        if self.app is not None:
            self.app.placement_app.database.dispose()
            self.app = None
        for name, value in self.saved_environ.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self.saved_environ.clear()
        if self.policy_path is not None:
            os.unlink(self.policy_path)
            self.policy_path = None

    def configuration(self) -> Overrides:
        """The options of this fixture's app."""
        groups: Overrides = {group: dict(values) for group, values in self.overrides.items()}
        policy = groups.setdefault("oslo_policy", {})
        policy.setdefault("enforce_new_defaults", self.enforce_new_defaults)
        rules = self.policy_file_rules()
        if rules is not None:
            policy["policy_file"] = self.write_policy_file(rules)
        return groups

    def policy_file_rules(self) -> Mapping[str, str] | None:
        """The rules of the app's policy file (None: no file); ``policy_rules`` here."""
        return self.policy_rules

    def write_policy_file(self, rules: Mapping[str, str]) -> str:
        """A temporary policy file holding ``rules``, removed when the fixture stops."""
        handle, self.policy_path = tempfile.mkstemp(prefix="placement-policy-", suffix=".yaml")
        with os.fdopen(handle, "w") as policy_file:
            json.dump(dict(rules), policy_file)  # JSON is YAML
        return self.policy_path

    def set_environ(self, name: str, value: str) -> None:
        """Put ``name`` in the environment until the fixture stops."""
        if name not in self.saved_environ:
            self.saved_environ[name] = os.environ.get(name)
        os.environ[name] = value

    def set_identifiers(self) -> None:
        """The variables every YAML file may use."""
        for name in UUID_VARIABLES:
            self.set_environ(name, new_uuid())
        for name, prefix in NAME_VARIABLES.items():
            self.set_environ(name, f"{prefix}-{uuid.uuid4().hex[:12]}")
        for name, value in CONSTANT_VARIABLES.items():
            self.set_environ(name, value)

    def make_entities(self) -> None:
        """Build this fixture's data through ``self.client`` (nothing here)."""


class LegacyRBACPolicyFixture(APIFixture):
    """The legacy policy defaults, said explicitly (as :class:`APIFixture`)."""

    enforce_new_defaults = False


class SecureRBACPolicyFixture(APIFixture):
    """The new policy defaults (the service's own default configuration)."""

    enforce_new_defaults = True


class OpenPolicyFixture(APIFixture):
    """Every rule but ``admin_api`` open to any authenticated caller."""

    def policy_file_rules(self) -> dict[str, str]:
        return {rule.name: "@" for rule in list_rules() if rule.name != "admin_api"}


class CORSFixture(APIFixture):
    """CORS on for ``http://valid.example.com``, allowing the microversion header."""

    overrides = {"cors": {"allowed_origin": ["http://valid.example.com"],
                          "allow_headers": ["openstack-api-version"]}}
