"""Two schedulers claiming on the same hosts at once: no overcommit, losers move on.

Each scheduler has its own in-process Placement app (its own connection
pool) over the same database, like two API workers behind one endpoint.
"""

from __future__ import annotations

import threading
import uuid

from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler.request_spec import RequestSpec
from tests.functional.nova_reshape.scheduler.conftest import (
    consumer,
    make_manager,
    placement,
    usages,
)
from tests.functional.nova_reshape.scheduler.seeding import compute_node, seed

GB = 1024


def spec(vcpus: int) -> RequestSpec:
    return RequestSpec(flavor=Flavor(vcpus=vcpus, memory_mb=GB, root_gb=1))


def test_the_loser_of_a_claim_race_takes_the_next_host(db_url):
    hosts = [compute_node(name, vcpu=4, memory_mb=gb * GB)
             for name, gb in (("X", 64), ("Y", 32), ("Z", 16))]
    seed(db_url, hosts)
    uuid_of = {h.name: h.uuid for h in hosts}
    with placement(db_url) as first, placement(db_url) as second:
        slow, slow_recording = make_manager(first)
        fast, _ = make_manager(second)
        slow_instance, fast_instance = str(uuid.uuid4()), str(uuid.uuid4())
        fast_result = []

        def race(method: str, url: str) -> None:
            # The slow scheduler has its candidates and is about to claim X:
            # the fast one runs a whole request in between.
            if method == "PUT" and not fast_result:
                fast_result.extend(fast.select_destinations(None, spec(4), [fast_instance]))

        slow_recording.before = race
        (slow_group,) = slow.select_destinations(None, spec(4), [slow_instance])
        (fast_group,) = fast_result

        assert fast_group[0].nodename == "X"
        assert slow_group[0].nodename == "Y"
        assert slow_recording.urls("PUT") == [f"/allocations/{slow_instance}"] * 2
        assert usages(first, uuid_of["X"])["VCPU"] == 4
        assert list(consumer(first, slow_instance)["allocations"]) == [uuid_of["Y"]]
        assert list(consumer(first, fast_instance)["allocations"]) == [uuid_of["X"]]
        # The slow scheduler's alternates were computed from its stale view:
        # X is still offered (unclaimed), which a reschedule would try and fail.
        assert [s.nodename for s in slow_group[1:]] == ["X", "Z"]


def test_concurrent_schedulers_fill_every_host_exactly(db_url):
    hosts = [compute_node(f"cn{i:02d}", vcpu=2, memory_mb=(16 + i) * GB) for i in range(12)]
    seed(db_url, hosts)
    results: dict[str, list[str]] = {"a": [], "b": []}
    errors: list[BaseException] = []
    with placement(db_url) as first, placement(db_url) as second:
        managers = {"a": make_manager(first)[0], "b": make_manager(second)[0]}
        start = threading.Barrier(2)

        def run(name: str) -> None:
            try:
                start.wait()
                for _ in range(3):  # three requests of two instances each
                    instances = [str(uuid.uuid4()) for _ in range(2)]
                    groups = managers[name].select_destinations(None, spec(2), instances)
                    results[name].extend(instances)
                    assert len(groups) == 2
            except BaseException as error:  # reported below
                errors.append(error)

        threads = [threading.Thread(target=run, args=(name,)) for name in managers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not errors, errors
        placed = results["a"] + results["b"]
        assert len(placed) == 12
        # Twelve 2-vCPU instances on twelve 2-vCPU hosts: one each, none doubled up.
        assert all(usages(first, h.uuid) == {"VCPU": 2, "MEMORY_MB": GB, "DISK_GB": 1}
                   for h in hosts)
        owners = [next(iter(consumer(first, i)["allocations"])) for i in placed]
        assert sorted(owners) == sorted(h.uuid for h in hosts)
