"""Scheduler configuration: a view of nova's scheduler options for filters and weighers.

The options (names, types, defaults) are declared once, in
:func:`nova_reshape.nova.conf.options.scheduler_opts`. The configuration is
laid out like ``nova.conf`` (section -> option -> value) and validated with
those options' oslo.config types, so a value nova would refuse at
startup (a negative ``pci_weight_multiplier``, ``host_subset_size = 0`` ...)
is refused here with a ``ConfigError``. Sections fully modelled here reject
unknown option names so that typos do not silently fall back to defaults;
other sections (nova has hundreds of options) are accepted and ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from oslo_config import cfg, types

from nova_reshape.nova.conf.files import refusing_bad_values
from nova_reshape.nova.conf.options import scheduler_opts
from nova_reshape.scheduler import pci as pci_mod
from nova_reshape.scheduler.errors import ConfigError

_LIST = types.List()

#: Options given as they are (``[pci] alias`` entries may be JSON objects already).
RAW_OPTIONS = frozenset({("pci", "alias")})

#: section -> option -> (oslo type or None for raw, default), from the one
#: declaration of nova's scheduler options (``None`` defaults are nullable).
OPTIONS: dict[str, dict[str, tuple[Any, Any]]] = {
    group or "DEFAULT": {opt.dest: (None if (group, opt.dest) in RAW_OPTIONS else opt.type,
                                    opt.default) for opt in opts}
    for group, opts in scheduler_opts().items()
}

#: Sections whose unknown option names are rejected.
STRICT_SECTIONS = frozenset({"filter_scheduler", "metrics"})


class Configured:
    """What the scheduler configures once, before any request: filters and weighers."""

    def __init__(self) -> None:
        self.conf: SchedulerConfig | None = None

    @property
    def name(self) -> str:
        return type(self).__name__

    def configure(self, conf: SchedulerConfig) -> None:
        """Receive the scheduler configuration once, before any request."""
        self.conf = conf


class SchedulerConfig:
    """Validated options, read as ``conf.filter_scheduler.host_subset_size``.

    Also carries the pre-parsed forms that nova computes from list options
    (``metrics_weight_setting``, ``image_props_weight_setting``) so that no
    filter or weigher parses them per host.
    """

    def __init__(self, sections: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        sections = sections or {}
        if not isinstance(sections, Mapping):
            raise ConfigError("config must be an object of sections")
        for name, options in sections.items():
            if not isinstance(options, Mapping):
                raise ConfigError(f"config section [{name}] must be an object")
            if name in STRICT_SECTIONS:
                unknown = sorted(set(options) - set(OPTIONS[name]))
                if unknown:
                    raise ConfigError(
                        f"unknown option(s) in [{name}]: {', '.join(unknown)}")
        for section, options in OPTIONS.items():
            given = sections.get(section, {})
            values = {}
            for option, (otype, default) in options.items():
                if option in given and given[option] is not None:
                    values[option] = _convert(section, option, otype, given[option])
                else:
                    values[option] = _copy(default)
            setattr(self, section, SimpleNamespace(**values))
        self.metrics_weight_setting = parse_weight_setting(self.metrics.weight_setting)
        self.image_props_weight_setting = dict(
            parse_weight_setting(self.filter_scheduler.image_props_weight_setting))
        self.pci_aliases = pci_mod.parse_aliases(self.pci.alias)

    @classmethod
    def from_opts(cls, conf: cfg.ConfigOpts) -> SchedulerConfig:
        """The scheduler's view of a parsed nova.conf
        (:func:`nova_reshape.nova.conf.files.load_conf`).

        NovaConfError for a value oslo.config refuses, ConfigError for one
        the scheduler refuses (a bad ``[pci] alias``).
        """
        with refusing_bad_values():
            sections = {section: {option: (conf[option] if section == "DEFAULT"
                                           else conf[section][option]) for option in options}
                        for section, options in OPTIONS.items()}
        return cls(sections)

    filter_scheduler: SimpleNamespace
    metrics: SimpleNamespace
    DEFAULT: SimpleNamespace
    pci: SimpleNamespace
    compute: SimpleNamespace
    scheduler: SimpleNamespace
    workarounds: SimpleNamespace


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _convert(section: str, option: str, otype: Any, value: Any) -> Any:
    if otype is None:
        return value
    if isinstance(otype, types.List) and isinstance(value, str):
        value = _LIST(value)
    try:
        return otype(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"invalid value for [{section}] {option}: {value!r}: {exc}") from exc


def parse_weight_setting(entries: list[str]) -> list[tuple[str, float]]:
    """Parse ``name=ratio`` entries the way nova does.

    Entries without exactly one ``=`` or whose ratio is not a float are
    dropped (nova logs a warning and ignores them); order is kept.
    """
    parsed = []
    for entry in entries:
        parts = str(entry).split("=")
        if len(parts) != 2:
            continue
        name, ratio = parts[0].strip(), parts[1].strip()
        try:
            parsed.append((name, float(ratio)))
        except ValueError:
            continue
    return parsed
