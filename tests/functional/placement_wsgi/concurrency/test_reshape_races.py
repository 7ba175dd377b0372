"""A reshape racing allocation writes on the same providers (issue 3).

Afterwards the reshape either fully happened or fully did not, no
allocation is lost or doubled, and conflicts surface only as 409s.
"""

from __future__ import annotations

import threading
import uuid

from tests.fixtures import seed
from tests.fixtures.client import AppClient

EXISTING = 20
WRITERS = 4
CLAIMS_PER_WRITER = 10



def _claim(provider: str, generation=None, amount: int = 1) -> dict:
    return {"allocations": {provider: {"resources": {"VCPU": amount}}},
            "project_id": "p", "user_id": "u", "consumer_generation": generation,
            "consumer_type": "INSTANCE"}


def _reshape_body(client: AppClient, compute: str, child: str) -> dict:
    """Move VCPU and every VCPU allocation from ``compute`` to ``child``."""
    compute_generation = client.get(f"/resource_providers/{compute}").json["generation"]
    child_generation = client.get(f"/resource_providers/{child}").json["generation"]
    held = client.get(f"/resource_providers/{compute}/allocations").json["allocations"]
    allocations = {}
    for consumer in held:
        view = client.get(f"/allocations/{consumer}").json
        allocations[consumer] = {
            "allocations": {child: {"resources": dict(view["allocations"][compute]["resources"])}},
            "project_id": view["project_id"], "user_id": view["user_id"],
            "consumer_generation": view["consumer_generation"],
            "consumer_type": view["consumer_type"]}
    return {"inventories": {
                compute: {"resource_provider_generation": compute_generation,
                          "inventories": {}},
                child: {"resource_provider_generation": child_generation,
                        "inventories": {"VCPU": {"total": 200}}}},
            "allocations": allocations}


def test_reshape_racing_claims_is_all_or_nothing(client_and_database):
    client, database = client_and_database
    compute = seed.add_provider(database)
    child = seed.add_provider(database, parent_uuid=compute)
    seed.add_inventory(database, compute, "VCPU", 200)
    existing = [str(uuid.uuid4()) for _ in range(EXISTING)]
    for consumer in existing:
        assert client.put(f"/allocations/{consumer}", _claim(compute)).status_int == 204

    claims: list[tuple[str, int, bytes]] = []
    reshape_statuses: list[int] = []
    lock = threading.Lock()
    writers_done = threading.Event()

    def writer() -> None:
        for _ in range(CLAIMS_PER_WRITER):
            consumer = str(uuid.uuid4())
            response = client.put(f"/allocations/{consumer}", _claim(compute))
            with lock:
                claims.append((consumer, response.status_int, response.body))

    def reshaper() -> None:
        for _attempt in range(200):
            response = client.post("/reshaper", _reshape_body(client, compute, child))
            reshape_statuses.append(response.status_int)
            if response.status_int == 204:
                return
            assert response.status_int in (409,), response.body
            if writers_done.is_set() and len(reshape_statuses) > 100:
                return

    threads = [threading.Thread(target=writer) for _ in range(WRITERS)]
    reshape_thread = threading.Thread(target=reshaper)
    for thread in threads:
        thread.start()
    reshape_thread.start()
    for thread in threads:
        thread.join(timeout=300)
    writers_done.set()
    reshape_thread.join(timeout=300)

    assert all(status in (204, 409) for _, status, _ in claims), claims
    assert all(status in (204, 409) for status in reshape_statuses)
    assert reshape_statuses[-1] == 204, reshape_statuses

    # The reshape fully happened: no VCPU left on the compute node...
    assert "VCPU" not in client.get(
        f"/resource_providers/{compute}/inventories").json["inventories"]
    assert client.get(f"/resource_providers/{compute}/allocations").json["allocations"] == {}
    # ...and every allocation is held exactly once, on the child.
    accepted = [consumer for consumer, status, _ in claims if status == 204]
    refused = [consumer for consumer, status, _ in claims if status == 409]
    for consumer in existing + accepted:
        view = client.get(f"/allocations/{consumer}").json["allocations"]
        assert view == {child: {"generation": view[child]["generation"],
                                "resources": {"VCPU": 1}}}, (consumer, view)
    for consumer in refused:
        assert client.get(f"/allocations/{consumer}").json["allocations"] == {}
    assert seed.usage(database, child, "VCPU") == EXISTING + len(accepted)
    assert seed.usage(database, compute, "VCPU") == 0
