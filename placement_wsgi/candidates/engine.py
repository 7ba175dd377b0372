"""One allocation-candidates request, end to end, inside one read transaction.

resolve names -> load the snapshot -> options and constraints -> generate (stopping at
``limit`` or the ``[placement] max_allocation_candidates`` ceiling) ->
``limit``/randomisation -> summaries -> response body.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import random
from typing import Any

from sqlalchemy.engine import Connection

from placement_wsgi.candidates import plan as plan_module
from placement_wsgi.candidates.format import Formatter, allocation_providers
from placement_wsgi.candidates.loader import Loader
from placement_wsgi.candidates.request import CandidateRequest
from placement_wsgi.candidates.resolved import resolve
from placement_wsgi.db.database import Database
from placement_wsgi.gc_pause import paused_collection


@dataclasses.dataclass(frozen=True)
class Settings:
    """The ``[placement]`` options that shape generation."""

    max_candidates: int = -1            # -1: no ceiling
    randomize: bool = False
    strategy: str = plan_module.BREADTH_FIRST

    @classmethod
    def from_conf(cls, conf: Any) -> Settings:
        placement = conf.placement
        return cls(
            max_candidates=placement.max_allocation_candidates,
            randomize=placement.randomize_allocation_candidates,
            strategy=placement.allocation_candidates_generation_strategy,
        )


def _collect(plan: plan_module.Plan, limit: int | None, settings: Settings,
             rng: random.Random | None = None) -> list[tuple[int, ...]]:
    """Generate only as many candidates as the answer can contain."""
    stop = settings.max_candidates if settings.max_candidates >= 0 else None
    if limit is not None and not settings.randomize:
        stop = limit if stop is None else min(stop, limit)
    candidates = list(itertools.islice(plan.generate(settings.strategy), stop))
    if settings.randomize:
        rng = rng or random.Random()
        if limit is not None and limit < len(candidates):
            candidates = rng.sample(candidates, limit)
        else:
            rng.shuffle(candidates)
    elif limit is not None:
        candidates = candidates[:limit]
    return candidates


LOG = logging.getLogger(__name__)


def _log_counts(plan: plan_module.Plan, found: int) -> None:
    """One debug line per request: how far the request got, and why anchors
    gave nothing (counters, never one line per candidate)."""
    if LOG.isEnabledFor(logging.DEBUG):
        counts = ", ".join(f"{name}: {count}" for name, count in sorted(plan.counts.items()))
        LOG.debug("allocation candidates: %d found; %s", found, counts or "no anchors")


EMPTY_BODY = '{"allocation_requests":[],"provider_summaries":{}}'


def find_in_transaction(connection: Connection, request: CandidateRequest,
                        settings: Settings) -> str:
    """The JSON response body for ``request``, read over ``connection``."""
    resolved = resolve(connection, request)
    loader = Loader(connection, resolved)
    snapshot = loader.load()
    plan = plan_module.Plan(resolved, snapshot,
                            lambda roots: loader.load_trees(snapshot, roots))
    candidates = _collect(plan, request.limit, settings)
    _log_counts(plan, len(candidates))
    if not candidates:
        return EMPTY_BODY
    providers = allocation_providers(plan.slots, candidates)
    whole_trees = None
    if request.nested_aware:
        # whole trees of the providers that get resources (sharing: own tree)
        roots = {snapshot.root_of[provider] for provider in providers}
        if snapshot.has_trees:
            loader.load_trees(snapshot, roots)
            shown = [member for root in sorted(roots) for member in snapshot.tree_members[root]]
            whole_trees = roots
        else:
            shown = sorted(roots)
    else:
        shown = sorted(providers)
    summary = loader.load_summaries(snapshot, set(shown), whole_trees)
    # providers of resourceless groups may sit outside the shown trees
    loader.load_uuids(snapshot, set(itertools.chain.from_iterable(candidates)))
    return Formatter(resolved, plan.slots, summary, request.version).body(candidates, shown)


def find_candidates(database: Database, request: CandidateRequest, settings: Settings) -> str:
    """Run :func:`find_in_transaction` in a (retrying) read transaction.

    The cyclic garbage collector is paused meanwhile (see :mod:`placement_wsgi.gc_pause`).
    """
    with paused_collection():
        return database.read(find_in_transaction, request, settings)
