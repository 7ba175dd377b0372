"""A node's snapshot read, and a change back written, over the Placement API.

What a revert over ``--placement-url`` needs from Placement, in API
requests (no database to share a transaction with):

* :func:`read_snapshot`: the node's :class:`~nova_reshape.journal.snapshot.Snapshot`
  as the journal of a run over HTTP holds it. The tree's listing
  (``in_tree``, 1.14), then per provider its inventories, traits,
  aggregates and allocations (4 requests); a consumer's whole body
  (``GET /allocations/{consumer}``: owner, generation, allocations outside
  the tree) only for the consumers named ``whole`` (those the run moved:
  the journal holds them whole); every other consumer holds its allocations
  in the tree only, with no owner or generation, as the migration's own
  reads over HTTP hold them.
* :func:`write_change`: one :class:`~placement_wsgi.objects.tree_change.TreeChange`
  as requests, in the migration's order: custom names (``PUT``, idempotent),
  providers created (parents first), traits and aggregates (each checked
  against its generation), then inventories and allocations together in one
  ``POST /reshaper`` when allocations move (else ``PUT .../inventories``),
  then the providers deleted (children first). Each request is guarded by
  a generation or idempotent; a stale generation is
  :class:`~placement_wsgi.errors.ConcurrentUpdate`, any other refusal
  :class:`~placement_wsgi.errors.PlacementError`.
* :func:`custom_names` / :func:`forget_unused`: the custom traits and
  resource classes, and deleting the ones a run created that nothing uses
  (Placement answers 409 for one in use: kept).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from nova_reshape.journal import names
from nova_reshape.journal.snapshot import Snapshot, of_state
from nova_reshape.report import (
    AGGREGATE_GENERATION_VERSION,
    ALLOW_RESERVED_EQUAL_TOTAL_INVENTORY_VERSION,
    CONSUMER_GENERATION_VERSION,
    NESTED_PROVIDER_API_VERSION,
    POST_RPS_RETURNS_PAYLOAD_API_VERSION,
    RESHAPER_VERSION,
    error_of,
)
from nova_reshape.transport.base import Placement
from placement_wsgi import errors
from placement_wsgi.objects.tree_change import TreeChange
from placement_wsgi.objects.tree_state import TreeState

CUSTOM_PREFIX = "CUSTOM_"
TRAITS_VERSION = "1.6"
CLASSES_VERSION = "1.7"


def _get(placement: Placement, url: str, version: str) -> Any:
    response = placement.request("GET", url, microversion=version)
    if response.status_code != 200:
        raise errors.PlacementError(f"GET {url}: {response.status_code} {response.text}")
    return response.json()


def read_snapshot(placement: Placement, root: str, whole: Collection[str]) -> Snapshot | None:
    """The node of root provider ``root`` as Placement holds it now; None when the
    root is gone (see the module docstring)."""
    listed = _get(placement, f"/resource_providers?in_tree={root}",
                  NESTED_PROVIDER_API_VERSION)["resource_providers"]
    if not any(provider["uuid"] == root for provider in listed):
        return None
    inventories, traits, aggregates, held = {}, {}, {}, {}
    for provider in listed:
        rp = provider["uuid"]
        base = f"/resource_providers/{rp}"
        inventories[rp] = _get(placement, f"{base}/inventories", "1.0")["inventories"]
        traits[rp] = sorted(_get(placement, f"{base}/traits", TRAITS_VERSION)["traits"])
        aggregates[rp] = sorted(_get(placement, f"{base}/aggregates",
                                     AGGREGATE_GENERATION_VERSION)["aggregates"])
        for consumer, entry in _get(placement, f"{base}/allocations",
                                    "1.0")["allocations"].items():
            body = held.setdefault(consumer, {"allocations": {}})
            body["allocations"][rp] = {"resources": dict(entry["resources"])}
    for consumer in sorted(set(held) & set(whole)):
        held[consumer] = _get(placement, f"/allocations/{consumer}",
                              CONSUMER_GENERATION_VERSION)
    return of_state(TreeState(root, listed, [], {}, inventories, traits, aggregates, held))


def whole_consumers(*snapshots: Snapshot) -> set[str]:
    """The consumers the snapshots hold whole (with a consumer generation)."""
    return {consumer for snapshot in snapshots
            for consumer, body in snapshot.allocations.items()
            if body.get("consumer_generation") is not None}


def _refused(method: str, url: str, response: Any) -> errors.PlacementError:
    text = f"{method} {url}: {response.status_code} {response.text}"
    if response.status_code == 409 and error_of(response).get("code") in (
            "placement.concurrent_update", None, ""):
        return errors.ConcurrentUpdate(text)
    return errors.PlacementError(text)


def _send(placement: Placement, method: str, url: str, version: str,
          body: Any = None, ok: Collection[int] = (200,)) -> Any:
    response = placement.request(method, url, json=body, microversion=version)
    if response.status_code not in ok:
        raise _refused(method, url, response)
    return response.json() if response.status_code == 200 else None


def write_change(placement: Placement, change: TreeChange) -> None:
    """Write ``change`` as the request sequence (see the module docstring)."""
    custom_traits, custom_classes = change.custom_names()
    for name in custom_traits:
        _send(placement, "PUT", f"/traits/{name}", TRAITS_VERSION, ok=(201, 204))
    for name in custom_classes:
        _send(placement, "PUT", f"/resource_classes/{name}", CLASSES_VERSION, ok=(201, 204))
    generations = dict(change.generations)
    for provider in change.create:
        payload = {"uuid": provider.uuid, "name": provider.name}
        if provider.parent_uuid is not None:
            payload["parent_provider_uuid"] = provider.parent_uuid
        generations[provider.uuid] = _send(
            placement, "POST", "/resource_providers", POST_RPS_RETURNS_PAYLOAD_API_VERSION,
            payload)["generation"]
    for what, version in (("traits", TRAITS_VERSION),
                          ("aggregates", AGGREGATE_GENERATION_VERSION)):
        for rp, wanted in sorted(getattr(change, what).items()):
            generations[rp] = _send(
                placement, "PUT", f"/resource_providers/{rp}/{what}", version,
                {what: list(wanted), "resource_provider_generation": generations[rp]},
            )["resource_provider_generation"]
    inventories = {rp: {record.resource_class: record.as_dict() for record in records}
                   for rp, records in sorted(change.inventories.items())}
    if change.reshape:
        _send(placement, "POST", "/reshaper", RESHAPER_VERSION, {
            "inventories": {rp: {"inventories": records,
                                 "resource_provider_generation": generations[rp]}
                            for rp, records in inventories.items()},
            "allocations": {consumer.consumer_uuid: {
                "allocations": {rp: {"resources": dict(resources)}
                                for rp, resources in consumer.allocations.items()},
                "project_id": consumer.project_id, "user_id": consumer.user_id,
                "consumer_generation": consumer.consumer_generation}
                for consumer in change.allocations}}, ok=(204,))
    else:
        for rp, records in inventories.items():
            _send(placement, "PUT", f"/resource_providers/{rp}/inventories",
                  ALLOW_RESERVED_EQUAL_TOTAL_INVENTORY_VERSION,
                  {"inventories": records, "resource_provider_generation": generations[rp]})
    for rp in change.delete:
        _send(placement, "DELETE", f"/resource_providers/{rp}", "1.0", ok=(204, 404))


def custom_names(placement: Placement) -> dict[str, list[str]]:
    """The custom traits and resource classes Placement holds now (sorted), as
    :func:`nova_reshape.journal.names.custom_names` reads them from the database."""
    traits = _get(placement, f"/traits?name=startswith:{CUSTOM_PREFIX}", TRAITS_VERSION)
    classes = _get(placement, "/resource_classes", CLASSES_VERSION)["resource_classes"]
    return {names.TRAITS: sorted(traits["traits"]),
            names.CLASSES: sorted(entry["name"] for entry in classes
                                  if entry["name"].startswith(CUSTOM_PREFIX))}


def forget_unused(placement: Placement, before: Mapping[str, list[str]] | None, *,
                  dry_run: bool) -> list[str]:
    """As :func:`nova_reshape.journal.names.forget_unused`, over the API."""
    created = names.new_names(custom_names(placement), before)
    done = []
    for kind, key, url in (("trait", names.TRAITS, "/traits/{}"),
                           ("resource class", names.CLASSES, "/resource_classes/{}")):
        for name in created[key]:
            if not dry_run:
                response = placement.request("DELETE", url.format(name),
                                             microversion=CLASSES_VERSION)
                if response.status_code != 204:
                    continue  # in use (kept), or gone meanwhile
            done.append(f"{kind} {name}")
    return done
