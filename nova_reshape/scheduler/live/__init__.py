"""Explain a scheduling request against a live Placement (``explain --placement...``).

:mod:`.reasons` says, in one set-based pass over the Placement database, why
each root provider is not an allocation candidate; :mod:`.explain` builds
the request as nova does, asks Placement, runs the filters and weighers on
the candidates and renders the result; :mod:`.nova_hosts` makes the
HostStates from nova's cell database (``--nova-database``).
"""
