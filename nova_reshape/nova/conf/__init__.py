"""The one nova.conf model: nova's options registered per group on a ``ConfigOpts``.

:mod:`.options` declares every option nova_reshape reads, under nova's group
and option names with nova's defaults (the migration's ``[pci]``,
``[compute]``, ``[devices]`` and ``[DEFAULT]`` options, the scheduler's
``[filter_scheduler]``, ``[metrics]``, ``[scheduler]``, ``[workarounds]``
..., and the database connections). :mod:`.files` parses nova.conf files
into a fresh ``ConfigOpts`` (never a global one; callers pass it on).
:mod:`.compute` reads a compute host's options into the frozen
:class:`~nova_reshape.nova.conf.compute.NovaConf`;
``nova_reshape.scheduler.config.SchedulerConfig`` validates the scheduler's
groups against the same option declarations.
"""
