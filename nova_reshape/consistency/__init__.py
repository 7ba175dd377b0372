"""Placement made consistent with nova's databases, offline (floor 4).

nova's ``nova-manage placement audit`` and ``sync_aggregates`` need the
Placement API and nova's services up, and take one API round trip per
provider or host. The commands built on this package read nova's API and
cell databases set-based (:mod:`nova_reshape.novadb.holders`,
:func:`nova_reshape.novadb.cells.read_each_cell`) and Placement in bulk
where it runs in-process (:mod:`.placement_reads`), decide what is wrong
as plain records, and write through the Placement API (a transport's
``request()``), so the same code works over HTTP.

* :mod:`.nova_side`: which consumers nova accounts on each compute node,
  over every cell;
* :mod:`.placement_reads`: providers and their allocations, in bulk on the
  database (``read_provider_allocations``), per provider over HTTP;
* :mod:`.audit`: allocations nobody in nova holds (findings), and their
  deletion as nova does it;
* :mod:`.aggregates`: nova's host aggregates mirrored onto the compute
  node providers;
* :mod:`.heal` (with :mod:`.resources`, :mod:`.nested` and
  :mod:`.placement_io`): ``heal_allocations``, the allocations nova 34 would
  write for instances that have none or whose consumer lacks the
  instance's project or user, written in batches.

The user's guide is docs/consistency.md.
"""
