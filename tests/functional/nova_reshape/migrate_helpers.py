"""Shared pieces of the migration functional tests: the generator and checks.

The expected state after a migration is computed here from the generator's
own data (what every instance held in the flat shape, plus one unit per PCI
device it uses), independently of the migration's invariant code, and
compared with what Placement returns.
"""

from __future__ import annotations

import collections
import importlib.util
import os
import sys
from typing import Any

import sqlalchemy as sa

from placement_wsgi.db import tables
from placement_wsgi.db.database import Database

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
TOOLS = os.path.join(ROOT, "tools")


def load_tool(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, os.path.join(TOOLS, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


generator = load_tool("generate_deployment")

PCI_CLASSES = {**{address: "CUSTOM_PCI_10DE_20B5" for address in generator.PCI_GPUS},
               **{address: "CUSTOM_FAST_NIC" for address in generator.VFS}}


def generate_rows(db_url: str, out: str, hosts: int, **kwargs: Any) -> Any:
    """The generator's deployment of ``hosts`` hosts (host files in ``out``) inserted
    straight into ``db_url``'s tables (``generate_bulk``), for tests of what is done to
    a deployment, not of how it is built: the rows are those the API path writes
    (tests/functional/tools/test_generate_deployment.py), in a fraction of its time."""
    database = Database(db_url)
    try:
        return generator.generate_bulk(database, out, hosts, **kwargs)
    finally:
        database.dispose()


def shown_simulation(result: Any, simulation: Any, tree_after: Any) -> Any:
    """A migration's ``show`` that keeps each node's last planned simulation as
    its ``detail`` (results keep no trees otherwise), for tests of plans."""
    return simulation


def ok(response: Any) -> Any:
    assert response.status_code < 400, (response.status_code, response.text)
    return response.json() if response.content else None


def expected_totals(out_dir: str, seed: int = 0) -> dict[str, dict[str, int]]:
    """consumer -> {rc: amount} every instance must hold after the migration."""
    totals: dict[str, dict[str, int]] = {}
    for document in read_documents(out_dir):
        for node in document["nodes"]:
            if node.get("hypervisor_type") == "ironic":
                continue
            flat = generator.flat_allocations(node, seed)
            for consumer in node["consumers"]:
                held = collections.Counter(
                    flat[consumer["uuid"]]["allocations"][node["uuid"]]["resources"])
                for address in consumer.get("pci", ()):
                    held[PCI_CLASSES[address]] += 1
                if consumer.get("cpu_policy") == "dedicated" and "cpu_dedicated_set" in node:
                    held["PCPU"] += held.pop("VCPU")  # the PCPU reshape (Train on)
                totals[consumer["uuid"]] = dict(held)
    return totals


def actual_totals(placement: Any, consumers: Any) -> dict[str, dict[str, int]]:
    result = {}
    for consumer in consumers:
        body = ok(placement.get(f"/allocations/{consumer}", microversion="1.28"))
        held: collections.Counter[str] = collections.Counter()
        for entry in body["allocations"].values():
            held.update(entry["resources"])
        result[consumer] = dict(held)
    return result


def tree(placement: Any, root: str) -> dict[str, dict[str, Any]]:
    """name -> {inventory totals, traits, parent name} for ``root``'s tree."""
    providers = ok(placement.get(f"/resource_providers?in_tree={root}",
                                 microversion="1.14"))["resource_providers"]
    names = {p["uuid"]: p["name"] for p in providers}
    result = {}
    for provider in providers:
        inventory = ok(placement.get(f"/resource_providers/{provider['uuid']}/inventories"))
        traits = ok(placement.get(f"/resource_providers/{provider['uuid']}/traits",
                                  microversion="1.6"))
        result[provider["name"]] = {
            "uuid": provider["uuid"],
            "parent": names.get(provider["parent_provider_uuid"]),
            "inventory": {rc: r["total"] for rc, r in inventory["inventories"].items()},
            "traits": set(traits["traits"])}
    return result


def over_capacity(placement: Any, root: str) -> list[str]:
    """Providers of ``root``'s tree holding more than their capacity."""
    problems = []
    for name, data in tree(placement, root).items():
        inventories = ok(placement.get(
            f"/resource_providers/{data['uuid']}/inventories"))["inventories"]
        usages = ok(placement.get(f"/resource_providers/{data['uuid']}/usages"))["usages"]
        for rc, used in usages.items():
            record = inventories.get(rc)
            if record is None:
                if used:
                    problems.append(f"{name} {rc} used without inventory")
                continue
            capacity = (record["total"] - record["reserved"]) * record["allocation_ratio"]
            if used > capacity:
                problems.append(f"{name} {rc} {used} > {capacity}")
    return problems


def named_state(url: str, roots: Any, consumers: Any) -> tuple[dict, dict]:
    """Trees of ``roots`` (by provider name, shaped as :func:`tree` gives them) and each
    consumer's allocations (by provider name), read from the Placement database at
    ``url`` in four queries (the API took about eleven requests a provider)."""
    rps, classes = tables.resource_providers, tables.resource_classes
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            in_trees = (sa.select(rps.c.id, rps.c.uuid, rps.c.name, rps.c.parent_provider_id)
                        .where(rps.c.root_provider_id.in_(
                            sa.select(rps.c.id).where(rps.c.uuid.in_(list(roots))))))
            providers = {row.id: row for row in connection.execute(in_trees)}
            trees = {row.name: {"uuid": row.uuid,
                                "parent": (providers[row.parent_provider_id].name
                                           if row.parent_provider_id in providers else None),
                                "inventory": {}, "traits": set()}
                     for row in providers.values()}
            inventories = tables.inventories
            for provider_id, name, total in connection.execute(
                    sa.select(inventories.c.resource_provider_id, classes.c.name,
                              inventories.c.total)
                    .join(classes, classes.c.id == inventories.c.resource_class_id)
                    .where(inventories.c.resource_provider_id.in_(list(providers)))):
                trees[providers[provider_id].name]["inventory"][name] = total
            links = tables.resource_provider_traits
            for provider_id, name in connection.execute(
                    sa.select(links.c.resource_provider_id, tables.traits.c.name)
                    .join(tables.traits, tables.traits.c.id == links.c.trait_id)
                    .where(links.c.resource_provider_id.in_(list(providers)))):
                trees[providers[provider_id].name]["traits"].add(name)
            names = {data["uuid"]: name for name, data in trees.items()}
            allocations: dict[str, dict[str, dict[str, int]]] = {
                consumer: {} for consumer in consumers}
            held = tables.allocations
            for consumer, uuid, name, used in connection.execute(
                    sa.select(held.c.consumer_id, rps.c.uuid, classes.c.name, held.c.used)
                    .join(rps, rps.c.id == held.c.resource_provider_id)
                    .join(classes, classes.c.id == held.c.resource_class_id)
                    .where(held.c.consumer_id.in_(list(consumers)))):
                allocations[consumer].setdefault(names[uuid], {})[name] = used
    finally:
        engine.dispose()
    return trees, allocations


def read_documents(directory) -> list[dict]:
    """The YAML documents of ``directory``, by file name (PyYAML's safe loader,
    libyaml's when built in: the same documents, read several times faster)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    documents = []
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), encoding="utf-8") as stream:
            documents.append(yaml.load(stream, Loader=loader))  # noqa: S506 (a safe loader)
    return documents


def placement_rows(url: str) -> tuple[list, list]:
    """Every inventory and allocation row (what a reshape changes)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            result = []
            for table in (tables.inventories, tables.allocations):
                columns = [c for c in table.columns if c.name not in ("id", "updated_at")]
                result.append(sorted(tuple(row) for row in connection.execute(
                    sa.select(*columns))))
            return result[0], result[1]
    finally:
        engine.dispose()
