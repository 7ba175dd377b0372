"""nova's filter scheduler, reimplemented: filters, weighers and an explain dry-run.

Entry points: ``FilterScheduler`` (pipeline.py) over ``HostState`` objects
(host_state.py) for a ``RequestSpec`` (request_spec.py); HostStates come from
a scenario file (scenario.py) or from Placement allocation candidates
(sources.py); ``nova-reshape-scheduler explain`` (cmd.py) prints the trace.
``SchedulerManager`` (manager.py) runs the whole workflow over Placement:
prefilters, the ResourceRequest query (resource_request.py), claims,
alternates and ``Selection`` objects (selection.py).
"""
