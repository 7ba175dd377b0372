"""The host filter plug-in interfaces: one method to write for each.

* ``BaseHostFilter`` is nova's contract, for third parties: write
  ``host_passes(host_state, spec_obj)``, which returns a truthy value to keep
  the host. To say *why* a host was dropped, return ``self.reject("...")``
  (a falsy ``Rejection`` carrying the reason) instead of ``False``; a plain
  ``False`` is reported as "rejected by <FilterName>". ``filter_all`` calls
  it once per host.
* ``PreparedHostFilter`` is the built-ins' form: write ``checker(spec_obj)``,
  which runs once per request (parsing extra specs, hints, config) and
  returns a per-host check, or None when the request asks for nothing this
  filter checks (every host passes without a per-host call). Its
  ``host_passes`` and ``filter_all`` both follow from it, so the two entry
  points have one implementation.

The pipeline calls only ``filter_all``; which class a filter derives from is
the one place that says which method it implements.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from nova_reshape.scheduler.config import Configured

if TYPE_CHECKING:
    from nova_reshape.scheduler.host_state import HostState
    from nova_reshape.scheduler.request_spec import RequestSpec

Verdict = Any  # truthy to keep the host; False or a Rejection to drop it
HostCheck = Callable[["HostState"], Verdict]


class Rejection:
    """A falsy verdict with a reason, formatted only when someone reads it."""

    __slots__ = ("_template", "_args")

    def __init__(self, template: str, *args: Any) -> None:
        self._template = template
        self._args = args

    def __bool__(self) -> bool:
        return False

    @property
    def reason(self) -> str:
        return self._template % self._args if self._args else self._template

    def __repr__(self) -> str:
        return f"<Rejection {self.reason!r}>"


def reject(template: str, *args: Any) -> Rejection:
    """A falsy verdict explaining why the host is dropped (``%``-style args)."""
    return Rejection(template, *args)


class BaseHostFilter(Configured):
    """Base class of every host filter; third parties implement ``host_passes``.

    Class attributes, as in nova:

    * ``run_filter_once_per_request``: skipped (input passes unchanged) for
      the second and later instances of a multi-create.
    * ``RUN_ON_REBUILD``: only such filters do anything during a rebuild;
      the others pass every host.
    """

    run_filter_once_per_request = False
    RUN_ON_REBUILD = False

    @staticmethod
    def reject(template: str, *args: Any) -> Rejection:
        return Rejection(template, *args)

    def host_passes(self, host_state: HostState, spec_obj: RequestSpec) -> Verdict:
        """Keep ``host_state`` for ``spec_obj``? The one method a filter writes."""
        raise NotImplementedError(f"{self.name} must implement host_passes")

    def filter_all(self, hosts: Iterable[HostState], spec_obj: RequestSpec
                   ) -> tuple[list[HostState], dict[str, str]]:
        """Hosts that pass (order kept) and ``{label: reason}`` of those dropped."""
        host_passes = self.host_passes
        return sift(hosts, lambda host_state: host_passes(host_state, spec_obj), self.name)


class PreparedHostFilter(BaseHostFilter):
    """Base class of the built-in filters; they implement ``checker``.

    The request is read once per ``filter_all`` (not once per host), which
    is what keeps the chain cheap on large host lists.
    """

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        """Per-request preparation: a per-host check, or None if all hosts pass."""
        raise NotImplementedError(f"{self.name} must implement checker")

    def host_passes(self, host_state: HostState, spec_obj: RequestSpec) -> Verdict:
        """nova's entry point, for one host: prepares the request, then checks."""
        check = self.checker(spec_obj)
        return True if check is None else check(host_state)

    def filter_all(self, hosts: Iterable[HostState], spec_obj: RequestSpec
                   ) -> tuple[list[HostState], dict[str, str]]:
        """As ``BaseHostFilter.filter_all``, preparing the request once.

        With no host nothing is prepared (so a malformed hint cannot raise,
        exactly as nova never calls host_passes then).
        """
        hosts = list(hosts)
        if not hosts:
            return [], {}
        check = self.checker(spec_obj)
        if check is None:
            return hosts, {}
        return sift(hosts, check, self.name)


def sift(hosts: Iterable[HostState], check: HostCheck, filter_name: str
         ) -> tuple[list[HostState], dict[str, str]]:
    """Split ``hosts`` by ``check``: (passed in order, ``{label: reason}`` of the dropped).

    A dropped host's reason is its ``Rejection``'s, else "rejected by <filter>".
    """
    passed = []
    rejected = {}
    for host_state in hosts:
        verdict = check(host_state)
        if verdict:
            passed.append(host_state)
        else:
            rejected[host_state.label] = (
                verdict.reason if isinstance(verdict, Rejection)
                else f"rejected by {filter_name}")
    return passed, rejected


def prune_candidates(host_state: HostState, fits: Callable[[dict[str, Any]], bool]) -> bool:
    """Keep only the allocation candidates that ``fits``; False if none is left.

    Hosts without candidates (``None``: not built from Placement) are not
    pruned and count as fitting.
    """
    candidates = host_state.allocation_candidates
    if candidates is None:
        return True
    kept = [candidate for candidate in candidates if fits(candidate)]
    host_state.allocation_candidates = kept
    return bool(kept)
