"""How many more instances of each flavor the cloud can take, host by host.

The question an operator asks before and after an upgrade: does every flavor
still get the hosts it had, and how many more of it fit? It is answered with
the scheduler of this package, not a second one:

* :mod:`.core`: per flavor, the request as nova 34 builds it (the live
  explain's :func:`~nova_reshape.scheduler.live.request.spec_for_flavor`,
  the request pre-filters, the PCPU query and its VCPU fallback), ONE
  candidates pass over Placement without ``limit`` (with the reason every
  other root is not a candidate), the HostStates of a HostState source,
  the configured filters once over every host; then per valid host the
  count of :mod:`.fit`;
* :mod:`.fit`: nova's consume-then-filter loop on one host: the first
  allocation candidate still fitting in the tree's Placement room is
  claimed, the host consumes the instance (RAM, disk, vCPUs, NUMA cells,
  PCI pools), the filters run again, until nothing fits;
* :mod:`.records` and :mod:`.render`: the per-flavor table, as text and as
  the documented JSON document;
* :mod:`.flavors`: which flavors (in use by an instance, every public one,
  named ones, or a flavors file);
* :mod:`.cli`: ``nova-reshape-scheduler capacity``.
"""
