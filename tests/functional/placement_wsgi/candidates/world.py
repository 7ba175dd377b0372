"""Seed provider trees straight into the database and ask the engine about them.

Tests describe a deployment with :class:`World` (providers, inventories,
traits, aggregates, usage) and run queries with :meth:`World.candidates`,
which goes through the same parse -> load -> plan -> format path as the
HTTP handler, minus WebOb.
"""

from __future__ import annotations

import json
import urllib.parse
import uuid as uuid_module
from typing import Any

import sqlalchemy as sa

from placement_wsgi.candidates import engine
from placement_wsgi.candidates.request import parse_query
from placement_wsgi.db import tables
from placement_wsgi.db.database import Database
from placement_wsgi.microversion import Version

_NAMESPACE = uuid_module.UUID("6a1f0d7e-51c3-4f0e-9a4e-1d2b3c4d5e6f")


def uuid_for(name: str) -> str:
    """A stable uuid per provider/aggregate name, so expectations can use names."""
    return str(uuid_module.uuid5(_NAMESPACE, name))


class World:
    """A deployment built row by row (explicit ids; one transaction per call)."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.ids: dict[str, int] = {}
        self.names: dict[str, str] = {}     # uuid -> name
        self._next_id = 1
        self._next_allocation = 1

    def _class_id(self, connection: sa.Connection, name: str) -> int:
        table = tables.resource_classes
        found = connection.execute(sa.select(table.c.id).where(table.c.name == name)).scalar()
        if found is None:
            found = max(10000, (connection.execute(
                sa.select(sa.func.max(table.c.id))).scalar() or 0) + 1)
            connection.execute(table.insert().values(id=found, name=name))
        return found

    def _trait_id(self, connection: sa.Connection, name: str) -> int:
        table = tables.traits
        found = connection.execute(sa.select(table.c.id).where(table.c.name == name)).scalar()
        if found is None:
            connection.execute(table.insert().values(name=name))
            found = connection.execute(sa.select(table.c.id).where(table.c.name == name)).scalar()
        return found

    def _aggregate_id(self, connection: sa.Connection, name: str) -> int:
        table = tables.placement_aggregates
        agg_uuid = uuid_for(name)
        found = connection.execute(
            sa.select(table.c.id).where(table.c.uuid == agg_uuid)).scalar()
        if found is None:
            connection.execute(table.insert().values(uuid=agg_uuid))
            found = connection.execute(
                sa.select(table.c.id).where(table.c.uuid == agg_uuid)).scalar()
        return found

    def provider(self, name: str, parent: str | None = None, *,
                 inventory: dict[str, Any] | None = None, traits: tuple[str, ...] = (),
                 aggregates: tuple[str, ...] = (), used: dict[str, int] | None = None) -> str:
        """Add a provider; ``inventory`` values are a total or a dict of inventory fields."""
        provider_id = self._next_id
        self._next_id += 1
        parent_id = self.ids[parent] if parent else None
        root_id = provider_id
        if parent_id is not None:
            root_id = self.database.read(lambda connection: connection.execute(
                sa.select(tables.resource_providers.c.root_provider_id).where(
                    tables.resource_providers.c.id == parent_id)).scalar())
        provider_uuid = uuid_for(name)

        def body(connection: sa.Connection) -> None:
            connection.execute(tables.resource_providers.insert().values(
                id=provider_id, uuid=provider_uuid, name=name, generation=0,
                parent_provider_id=parent_id, root_provider_id=root_id))
            for rc_name, spec in (inventory or {}).items():
                fields = {"total": spec} if isinstance(spec, int) else dict(spec)
                row = {"reserved": 0, "min_unit": 1, "max_unit": fields.get("total"),
                       "step_size": 1, "allocation_ratio": 1.0, **fields}
                connection.execute(tables.inventories.insert().values(
                    resource_provider_id=provider_id,
                    resource_class_id=self._class_id(connection, rc_name), **row))
            for trait in traits:
                connection.execute(tables.resource_provider_traits.insert().values(
                    resource_provider_id=provider_id,
                    trait_id=self._trait_id(connection, trait)))
            for aggregate in aggregates:
                connection.execute(tables.resource_provider_aggregates.insert().values(
                    resource_provider_id=provider_id,
                    aggregate_id=self._aggregate_id(connection, aggregate)))
            for rc_name, amount in (used or {}).items():
                connection.execute(tables.allocations.insert().values(
                    resource_provider_id=provider_id, consumer_id=str(uuid_module.uuid4()),
                    resource_class_id=self._class_id(connection, rc_name), used=amount))

        self.database.write(body)
        self.ids[name] = provider_id
        self.names[provider_uuid] = name
        return provider_uuid

    def ensure_traits(self, names: tuple[str, ...]) -> None:
        """Create custom traits no provider carries yet (queries may name them)."""

        def body(connection: sa.Connection) -> None:
            for name in names:
                self._trait_id(connection, name)

        self.database.write(body)

    def candidates(self, query: str, version: str = "1.39", **settings: Any) -> dict[str, Any]:
        """The response body for ``query`` at ``version``; names may be written as
        ``{name}`` and are replaced by their uuids."""
        major, minor = (int(part) for part in version.split("."))
        items = urllib.parse.parse_qsl(self.expand(query), keep_blank_values=True)
        request = parse_query(items, Version(major, minor))
        return json.loads(
            engine.find_candidates(self.database, request, engine.Settings(**settings)))

    def expand(self, text: str) -> str:
        """Replace ``{name}`` by the uuid of that provider or aggregate."""
        out = text
        while "{" in out:
            start = out.index("{")
            end = out.index("}", start)
            out = out[:start] + uuid_for(out[start + 1:end]) + out[end + 1:]
        return out

    # -- views of a response in provider names ------------------------------

    def requests(self, body: dict[str, Any]) -> list[dict[str, dict[str, int]]]:
        """Allocation requests as {provider name: {class: amount}} (any format)."""
        result = []
        for request in body["allocation_requests"]:
            allocations = request["allocations"]
            if isinstance(allocations, list):
                result.append({self.names[item["resource_provider"]["uuid"]]: item["resources"]
                               for item in allocations})
            else:
                result.append({self.names[provider]: value["resources"]
                               for provider, value in allocations.items()})
        return result

    def mappings(self, body: dict[str, Any]) -> list[dict[str, list[str]]]:
        return [{suffix: sorted(self.names[provider] for provider in providers)
                 for suffix, providers in request["mappings"].items()}
                for request in body["allocation_requests"]]

    def summaries(self, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {self.names[provider]: summary
                for provider, summary in body["provider_summaries"].items()}


def request_names(world: World, body: dict) -> list[list[str]]:
    """Each allocation request as the sorted names of its providers, sorted."""
    return sorted(sorted(request) for request in world.requests(body))
