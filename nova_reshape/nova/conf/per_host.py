"""``--nova-config`` per host group: nova.conf files, and directories of per-host files.

Compute hosts of one cloud rarely share one nova.conf: GPU hosts enable
mdev types, SR-IOV hosts list their ``[pci] device_spec``, pinned hosts
set ``[compute] cpu_dedicated_set``. Each ``--nova-config`` argument, in
the order given (later ones win, as ``--config-file`` does for nova), is

* a file: read for every host;
* a directory ``DIR``: ``DIR/nova.conf`` (when present) is read for every
  host, and ``DIR/<host>.conf`` only for the nova-compute service host
  ``<host>``, after ``DIR/nova.conf``. Other names are ignored.

So ``--nova-config /etc/nova/nova.conf --nova-config /srv/nova-conf.d``
with ``/srv/nova-conf.d/cmp-7.conf`` holding only cmp-7's ``[pci]``
section gives cmp-7 both, and every other host the first file. As for
nova-compute given several files, a single-valued option of a later file
wins, while the values of a multi-valued one (``[pci] device_spec``) add
up: give each host's devices in its own file, not in the shared one.
The database connections are read from what applies to every host.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from nova_reshape.nova.conf.compute import NovaConf, load_nova_conf

#: The file of a ``--nova-config`` directory read for every host.
DEFAULT_NAME = "nova.conf"
#: The suffix of a per-host file: ``<host>.conf``.
HOST_SUFFIX = ".conf"


@dataclass(frozen=True)
class NovaConfigPaths:
    """The ``--nova-config`` arguments, in order (files or directories)."""

    paths: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.paths)

    def common(self) -> list[str]:
        """The files read for every host."""
        return [file for path in self.paths for file in _files(path, None)]

    def for_host(self, host: str) -> list[str]:
        """The files read for service host ``host``, in order."""
        return [file for path in self.paths for file in _files(path, host)]

    def overridden_hosts(self) -> set[str]:
        """The hosts a directory has a ``<host>.conf`` for."""
        return {name[:-len(HOST_SUFFIX)] for path in self.paths if os.path.isdir(path)
                for name in os.listdir(path)
                if name.endswith(HOST_SUFFIX) and name != DEFAULT_NAME}


def _files(path: str, host: str | None) -> list[str]:
    if not os.path.isdir(path):
        return [path]  # a missing file is refused when read
    names = [DEFAULT_NAME] + ([f"{host}{HOST_SUFFIX}"] if host else [])
    return [os.path.join(path, name) for name in names
            if os.path.isfile(os.path.join(path, name))]


@dataclass(frozen=True)
class HostConfs:
    """The nova.conf of every host: ``default`` for all but those in ``by_host``.

    ``default`` is None when no file applies to every host (nothing given).
    """

    default: NovaConf | None = None
    by_host: Mapping[str, NovaConf] = field(default_factory=dict)

    def for_host(self, host: str | None) -> NovaConf | None:
        return self.by_host.get(host, self.default) if host else self.default


def load_host_confs(paths: NovaConfigPaths, hosts: Iterable[str]) -> HostConfs:
    """Each of ``hosts``' nova.conf (see the module); NovaConfError (one line) for a
    missing or malformed file or a bad value."""
    if not paths:
        return HostConfs()
    common = paths.common()
    default = load_nova_conf(common) if common else None
    overridden = paths.overridden_hosts()
    return HostConfs(default=default, by_host={
        host: load_nova_conf(paths.for_host(host)) for host in sorted(set(hosts))
        if host in overridden})
