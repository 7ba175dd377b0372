"""Several API writes in ONE transaction, each exactly as its request writes it.

nova's consistency commands repair Placement with plain requests: ``PUT``
and ``POST /allocations`` (1.28), ``DELETE /allocations/{consumer}``, and
one ``PUT /resource_providers/{uuid}/aggregates`` (1.19) per aggregate
added. Each request is its own transaction. The offline tools make the same
writes, in the same order, but many of them in one transaction
(:meth:`~placement_wsgi.direct.PlacementDirect.write_requests`), so that
they can keep rows of their own (a journal entry per node written)
committed with them, and pay one commit per batch instead of one per
request. :class:`RequestWrites` is that transaction: each method runs the
object functions the request's handler runs, with its checks and errors,
so the rows (generations included) end as the requests leave them. Any
error rolls the whole transaction back.

It also offers the reads such a caller needs inside the transaction: a
consumer's allocations (``GET /allocations/{consumer}``), the root of each
provider, and provider trees (:func:`~.tree_state.read_batch`).
"""

from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.engine import Connection

from placement_wsgi.db import tables
from placement_wsgi.db.arrays import one_of
from placement_wsgi.objects import aggregate as aggregate_obj
from placement_wsgi.objects import allocation as allocation_obj
from placement_wsgi.objects.provider_lookup import provider_select
from placement_wsgi.objects.reshaper import provider_generations
from placement_wsgi.objects.tree_state import TreeState, consumer_body, read_batch

_providers = tables.resource_providers

#: The prefix of a refused allocation write's message, as ``POST /allocations`` words it.
UNABLE = "Unable to allocate inventory "


class RequestWrites:
    """The requests' writes on one transaction's ``connection`` (see the module).

    ``incomplete_project`` / ``incomplete_user``: ``[placement]
    incomplete_consumer_project_id`` / ``..._user_id``, as the handlers use them.
    """

    def __init__(self, connection: Connection, *, incomplete_project: str,
                 incomplete_user: str) -> None:
        self.connection = connection
        self.incomplete_project = incomplete_project
        self.incomplete_user = incomplete_user

    # -- writes ------------------------------------------------------------------------

    def put_allocations(self, requests: list[allocation_obj.ConsumerAllocations]) -> None:
        """``POST /allocations`` of ``requests`` (one consumer: ``PUT
        /allocations/{consumer}``) below 1.38: the consumer type is left as it is."""
        allocation_obj.apply_allocations(
            self.connection, requests, unknown_class_prefix=UNABLE, set_consumer_type=False,
            incomplete_project=self.incomplete_project, incomplete_user=self.incomplete_user)

    def delete_allocations(self, consumer: str) -> None:
        """``DELETE /allocations/{consumer}`` (``errors.NotFound`` when it holds none)."""
        allocation_obj.delete_allocations_of(self.connection, consumer)

    def delete_all_allocations(self, consumers: Sequence[str]) -> None:
        """``DELETE /allocations/{consumer}`` of each of ``consumers`` (those holding
        nothing are skipped, as a 404 would leave them), in two statements."""
        allocation_obj.delete_allocations_of_many(self.connection, consumers)

    def add_aggregates(self, added: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
        """For each provider uuid, its aggregates ``added[uuid]`` one by one, as one ``PUT
        .../aggregates`` (1.19) each would add them: the provider's generation goes up
        by one per aggregate it did not have yet. Returns, per provider, the aggregates
        it got (in order); a provider that does not exist is left out (as each of its
        ``GET``s would be 404).

        Set-based: a few statements for all the providers, whatever their number.
        """
        found = provider_generations(self.connection, list(added))
        ids = {uuid: provider_id for uuid, (provider_id, _) in found.items()}
        current = aggregate_obj.aggregate_uuids_by_provider(self.connection,
                                                            sorted(ids.values()))
        got: dict[str, list[str]] = {}
        for uuid, wanted in added.items():
            if uuid in ids:
                have = set(current.get(ids[uuid], []))
                got[uuid] = [aggregate for aggregate in dict.fromkeys(wanted)
                             if aggregate not in have]
        aggregate_obj.add_links(self.connection, {ids[uuid]: new for uuid, new in got.items()})
        by_count: dict[int, dict[int, int]] = collections.defaultdict(dict)
        for uuid, new in got.items():
            if new:
                by_count[len(new)][ids[uuid]] = found[uuid][1]
        for count, expected in sorted(by_count.items()):
            aggregate_obj.bump_generations_by(self.connection, expected, count)
        return got

    # -- reads -------------------------------------------------------------------------

    def allocations_of(self, consumer: str) -> dict[str, Any]:
        """``GET /allocations/{consumer}`` at 1.28 (``{"allocations": {}}`` when none)."""
        return self.consumers([consumer]).get(consumer, {"allocations": {}})

    def consumers(self, uuids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``GET /allocations/{consumer}`` at 1.28 of each of ``uuids`` holding anything
        (those holding nothing are left out), in one read."""
        if not uuids:
            return {}
        return {uuid: consumer_body(view) for uuid, view in
                allocation_obj.consumer_views(self.connection, sorted(set(uuids))).items()}

    def roots_of(self, providers: Sequence[str]) -> dict[str, str]:
        """Provider uuid -> its root's uuid, for the providers that exist."""
        if not providers:
            return {}
        return {row.uuid: row.root_provider_uuid or row.uuid for row in self.connection.execute(
            provider_select().where(
                one_of(self.connection, _providers.c.uuid, sorted(set(providers)))))}

    def trees(self, roots: Sequence[str]) -> list[TreeState]:
        """The trees of ``roots`` (uuids of root providers) as they stand in the
        transaction, in that order (:func:`~.tree_state.read_batch`)."""
        found = provider_generations(self.connection, list(roots))
        ids = [found[root][0] for root in roots if root in found]
        return read_batch(self.connection, ids) if ids else []

