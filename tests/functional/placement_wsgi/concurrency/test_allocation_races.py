"""Many writers at once, then invariants: on every enabled engine, for real.

Issue 3: usage never exceeds capacity, every accepted claim is stored,
every refused claim got a capacity 409, no 500; two writers of one consumer
generation: exactly one wins.
"""

from __future__ import annotations

import collections
import random
import threading
import uuid

from tests.fixtures import seed

THREADS = 16
#: Twice the claims the providers can hold, so that half are refused, most
#: of them while other threads are claiming the last units of a provider.
CLAIMS_PER_THREAD = 25
PROVIDERS = 4
CAPACITY = 50



def _claim_body(provider: str, amount: int, generation=None) -> dict:
    return {"allocations": {provider: {"resources": {"VCPU": amount}}},
            "project_id": "project", "user_id": "user",
            "consumer_generation": generation, "consumer_type": "INSTANCE"}


def test_concurrent_claims_never_exceed_capacity(client_and_database):
    client, database = client_and_database
    providers = [seed.add_provider(database) for _ in range(PROVIDERS)]
    for provider in providers:
        seed.add_inventory(database, provider, "VCPU", CAPACITY)
    outcomes: list[tuple[str, str, int, bytes]] = []
    lock = threading.Lock()
    start = threading.Barrier(THREADS)

    def worker(seed_value: int) -> None:
        chooser = random.Random(seed_value)
        start.wait()
        for _ in range(CLAIMS_PER_THREAD):
            provider = chooser.choice(providers)
            consumer = str(uuid.uuid4())
            response = client.put(f"/allocations/{consumer}", _claim_body(provider, 1))
            with lock:
                outcomes.append((consumer, provider, response.status_int, response.body))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert len(outcomes) == THREADS * CLAIMS_PER_THREAD

    statuses = collections.Counter(status for _, _, status, _ in outcomes)
    assert set(statuses) <= {204, 409}, statuses
    for _, _, status, body in outcomes:
        if status == 409:
            assert b"would exceed the capacity" in body, body

    targeted = collections.Counter(provider for _, provider, _, _ in outcomes)
    accepted = collections.Counter(
        provider for _, provider, status, _ in outcomes if status == 204)
    for provider in providers:
        used = seed.usage(database, provider, "VCPU")
        assert used <= CAPACITY
        # Every accepted claim is stored, and a claim is refused only when
        # the provider really was full.
        assert used == accepted[provider] == min(CAPACITY, targeted[provider])
    for consumer, _, status, _ in outcomes[:50]:
        stored = client.get(f"/allocations/{consumer}").json["allocations"]
        assert bool(stored) == (status == 204)


def test_two_writers_one_consumer_generation_exactly_one_wins(client_and_database):
    client, database = client_and_database
    provider = seed.add_provider(database)
    seed.add_inventory(database, provider, "VCPU", 1000)
    for _round in range(10):
        consumer = str(uuid.uuid4())
        assert client.put(f"/allocations/{consumer}",
                          _claim_body(provider, 1)).status_int == 204
        results: list[tuple[int, bytes]] = []
        barrier = threading.Barrier(2)

        def writer(amount: int, consumer=consumer, barrier=barrier, results=results) -> None:
            barrier.wait()
            response = client.put(f"/allocations/{consumer}",
                                  _claim_body(provider, amount, generation=1))
            results.append((response.status_int, response.body))

        threads = [threading.Thread(target=writer, args=(amount,)) for amount in (2, 3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        statuses = sorted(status for status, _ in results)
        assert statuses == [204, 409], results
        loser = next(body for status, body in results if status == 409)
        assert b"placement.concurrent_update" in loser
        view = client.get(f"/allocations/{consumer}").json
        assert view["consumer_generation"] == 2
        amount = view["allocations"][provider]["resources"]["VCPU"]
        assert amount in (2, 3)
