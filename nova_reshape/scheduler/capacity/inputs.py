"""What a capacity check reads from nova: nova.conf, the API database, the cells.

:func:`read_nova` reads, once, everything the check needs besides Placement:

* the scheduler's options from nova.conf (``[filter_scheduler]``,
  ``[scheduler]``, ``[pci] alias``, ``[workarounds]`` ...;
  :meth:`SchedulerConfig.from_opts`) and the compute options the
  HostStates fall back to (allocation ratios);
* from nova's API database (given, else ``[api_database] connection``):
  every flavor with its extra specs and the host aggregates, in one
  read-only transaction (:mod:`nova_reshape.novadb.api`);
* the compute hosts of every cell it maps (:mod:`nova_reshape.novadb.cells`,
  templates filled from ``[database] connection``), or of the one cell
  database given;
* from Cyborg's database, when given, its device profiles (what
  ``accel:device_profile`` names, :func:`~nova_reshape.novadb.cyborg.read_device_profiles`);
  without it a flavor naming one has no host, for that reason.

Without any nova database the HostStates come from Placement alone and the
flavors from a flavors file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from nova_reshape.accelerator.device_profile import ProfileCatalogue
from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.conf.compute import NovaConf, compute_conf
from nova_reshape.nova.conf.databases import DatabaseConnections, load_connections
from nova_reshape.nova.conf.files import load_conf
from nova_reshape.nova.flavor import Flavor
from nova_reshape.novadb import api, cells, cyborg
from nova_reshape.novadb.readonly import read_only
from nova_reshape.scheduler.capacity import flavors as flavors_mod
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.live.explain import HostStateSource, PlacementHostStates
from nova_reshape.scheduler.live.nova_hosts import CpuSets, NovaDatabaseHostStates
from nova_reshape.scheduler.prefilters.base import MIN_COMPUTE_VERSION_OWNER_TRAIT

#: Why a flavor's device profile cannot be resolved without Cyborg's database.
NO_CYBORG = "Cyborg's database was not given (--cyborg-database)"


@dataclass(frozen=True)
class NovaInputs:
    """nova's side of a capacity check, read once."""

    conf: SchedulerConfig = field(default_factory=SchedulerConfig)
    nova_conf: NovaConf = field(default_factory=NovaConf)
    #: The cells read; None without a nova database (Placement alone).
    cells: cells.CellsSnapshot | None = None
    #: Every flavor of the API database, and those with ``is_public``.
    catalogue: tuple[Flavor, ...] = ()
    public: tuple[Flavor, ...] = ()
    aggregates: tuple[Aggregate, ...] = ()
    #: Where the flavors were read ("nova API database", a file ...), for messages.
    where: str = "nova's API database"
    #: Cyborg's device profiles (none, with the reason, without its database).
    profiles: ProfileCatalogue = field(
        default_factory=lambda: ProfileCatalogue(absent=NO_CYBORG))

    def source(self, assume_up: bool = False,
               cpu_sets: Mapping[str, CpuSets] | None = None) -> HostStateSource:
        """The HostState source: the cells read (see
        :class:`~nova_reshape.scheduler.live.nova_hosts.NovaDatabaseHostStates` for
        ``assume_up`` and ``cpu_sets``), else Placement alone."""
        if self.cells is None:
            return PlacementHostStates(self.aggregates)
        return NovaDatabaseHostStates(self.cells, self.aggregates, self.nova_conf,
                                      assume_up=assume_up, cpu_sets=cpu_sets)

    def owner_nova_now(self) -> bool | None:
        """Whether nova 34's scheduler requires ``OWNER_NOVA`` today: every
        nova-compute at service version 73 or more (None: no cell read, as nova 34)."""
        if self.cells is None:
            return None
        versions = [service.version for read in self.cells.cells
                    for service in read.snapshot.services.values()]
        return all((version or 0) >= MIN_COMPUTE_VERSION_OWNER_TRAIT for version in versions)


def nova_conf_files(files: Sequence[str]) -> tuple[SchedulerConfig, NovaConf,
                                                   DatabaseConnections]:
    """The scheduler's and the compute's options and the connections of nova.conf
    ``files`` (defaults without any); NovaConfError or ConfigError for a bad one."""
    if not files:
        return SchedulerConfig(), NovaConf(), DatabaseConnections()
    conf = load_conf(files)
    try:
        return (SchedulerConfig.from_opts(conf), compute_conf(conf, files),
                load_connections(files))
    finally:
        conf.clear()


def read_nova(nova_configs: Sequence[str] = (), api_url: str | None = None,
              cell_url: str | None = None, cell_names: Sequence[str] = (),
              skip_unreachable: bool = False, cyborg_url: str | None = None) -> NovaInputs:
    """Everything of nova's a check needs (see the module); ``cell_names`` and
    ``skip_unreachable`` select the API database's cells as
    :class:`~nova_reshape.novadb.cells.CellsQuery` does; ``cyborg_url``:
    Cyborg's database (its device profiles). The readers' errors
    (:class:`~nova_reshape.novadb.readonly.DatabaseReadError` and its kinds)
    as they are."""
    conf, nova_conf, connections = nova_conf_files(nova_configs)
    api_url = api_url or connections.api_database
    catalogue: list[Flavor] = []
    public: list[Flavor] = []
    aggregates: list[Aggregate] = []
    if api_url:
        with read_only(api_url, api.WHAT) as connection:
            catalogue = api.flavors_on(connection)
            public = api.flavors_on(connection, public_only=True)
            aggregates = api.aggregates_on(connection)
    snapshot = None
    if cell_url:
        snapshot = cells.read_one_cell(cell_url)
    elif api_url:
        snapshot = cells.read_cells(cells.CellsQuery(
            api_url=api_url, default_connection=connections.database,
            cells=tuple(cell_names), skip_unreachable=skip_unreachable))
    profiles = (cyborg.read_device_profiles(cyborg_url) if cyborg_url
                else ProfileCatalogue(absent=NO_CYBORG))
    return NovaInputs(conf, nova_conf, snapshot, tuple(catalogue), tuple(public),
                      tuple(aggregates), profiles=profiles)


def choose_flavors(inputs: NovaInputs, names: Sequence[str] = (), all_flavors: bool = False,
                   flavors_file: str | None = None) -> list[Flavor]:
    """The flavors to check (see :mod:`.flavors`): those named (from the file, else
    the API database), else the file's, else those in use (and with
    ``all_flavors`` every public one). FlavorError when there is none to read."""
    from_file = flavors_mod.load_file(flavors_file) if flavors_file else []
    if names:
        catalogue = from_file or list(inputs.catalogue)
        where = f"--flavors-file {flavors_file}" if from_file else inputs.where
        return flavors_mod.named(catalogue, names, where)
    if from_file:
        return from_file
    if inputs.cells is None and not inputs.catalogue:
        raise flavors_mod.FlavorError(
            "no flavors to check: give nova's API database (--nova-api-database, or "
            "[api_database] connection of --nova-config), a cell database, or --flavors-file")
    used = flavors_mod.in_use(inputs.cells, inputs.catalogue) if inputs.cells else []
    return flavors_mod.together(used, inputs.public if all_flavors else ())
