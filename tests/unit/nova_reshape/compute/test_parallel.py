"""The parent's side of a parallel migration, with in-process pipes for workers."""

from __future__ import annotations

import multiprocessing
import threading

import pytest

from nova_reshape import exception
from nova_reshape.compute import migrate, parallel
from nova_reshape.virt.host import Host, Node
from tests.fixtures.held import CountingHosts, young_heap


@pytest.mark.parametrize("nodes,cpus,expected", [
    (1000, 2, 2), (1000, 16, 4), (150, 8, 1), (20, 8, 1), (0, 2, 1), (400, 1, 1)])
def test_auto_workers(nodes, cpus, expected):
    assert parallel.auto_workers(nodes, cpus) == expected


def _conductor(workers, dry_run=False, to_check=4):
    pipes = [multiprocessing.Pipe() for _ in range(workers)]
    progress = []
    flag = threading.Event()
    conductor = parallel._Conductor(
        [ours for ours, _ in pipes], flag,
        lambda phase, done, total: progress.append((phase, done, total)), dry_run, to_check)
    return conductor, [theirs for _, theirs in pipes], progress, flag


def _follow_expecting_an_error(conductor):
    """Run ``conductor.follow`` in a thread; returns (thread, errors it raised)."""
    errors = []

    def follow():
        try:
            conductor.follow()
        except exception.NovaException as error:
            errors.append(error)

    thread = threading.Thread(target=follow)
    thread.start()
    return thread, errors


def _finish(pipe, *results):
    for result in results:
        pipe.send(parallel.Finished(result))
    pipe.send(parallel.Done(calls=3))
    pipe.close()


def test_write_only_when_every_worker_checked_clean():
    conductor, workers, progress, flag = _conductor(2)
    first, second = workers
    first.send(parallel.Progress("check"))
    first.send(parallel.Checked(False, 1))
    second.send(parallel.Progress("check"))
    second.send(parallel.Checked(False, 2))
    conductor_thread = threading.Thread(target=conductor.follow)
    conductor_thread.start()
    assert first.recv() == "write" and second.recv() == "write"
    for pipe in workers:
        pipe.send(parallel.Progress("migrate"))
    _finish(first, migrate.NodeResult("a", migrate.MIGRATED))
    _finish(second, migrate.NodeResult("b", migrate.MIGRATED))
    conductor_thread.join(5)
    assert sorted(result.nodename for result in conductor.results) == ["a", "b"]
    assert conductor.calls == 6
    assert progress[:2] == [("check", 1, 4), ("check", 2, 4)]
    assert progress[2:] == [("migrate", 1, 3), ("migrate", 2, 3)]
    assert not flag.is_set()


@pytest.mark.parametrize("dry_run,refused,verdict", [
    (True, False, "keep"), (False, True, "abandon"), (True, True, "abandon")])
def test_a_refusal_abandons_every_share_a_clean_dry_run_keeps_them(dry_run, refused,
                                                                    verdict):
    conductor, (first, second), _, _ = _conductor(2, dry_run=dry_run)
    first.send(parallel.Checked(refused, 1))
    second.send(parallel.Checked(False, 1))
    conductor_thread = threading.Thread(target=conductor.follow)
    conductor_thread.start()
    assert first.recv() == verdict and second.recv() == verdict
    _finish(first)
    _finish(second)
    conductor_thread.join(5)
    assert not conductor_thread.is_alive()


def test_a_worker_error_before_its_check_abandons_the_others_and_is_raised():
    conductor, (first, second), _, flag = _conductor(2)
    first.send(parallel.WorkerError(
        exception.ResourceProviderRetrievalFailed(message="listing: 500")))
    first.close()
    second.send(parallel.Checked(False, 1))
    conductor_thread, errors = _follow_expecting_an_error(conductor)
    assert second.recv() == "abandon"
    _finish(second)
    conductor_thread.join(5)
    assert flag.is_set()
    assert [str(error) for error in errors] == ["listing: 500"]


def test_a_worker_gone_without_a_word_is_an_error():
    conductor, (first, second), _, flag = _conductor(2)
    first.close()
    second.send(parallel.Checked(False, 1))
    conductor_thread, errors = _follow_expecting_an_error(conductor)
    assert second.recv() == "abandon"
    _finish(second)
    conductor_thread.join(5)
    assert flag.is_set() and "exited without reporting" in str(errors[0])


def _hosts(count, nodes=2):
    return [Host(f"h{index}.yaml", f"h{index}",
                 tuple(Node(f"h{index}-n{n}") for n in range(nodes))) for index in range(count)]


def _received(pipe):
    fed = []
    while True:
        message = pipe.recv()
        if isinstance(message, parallel.FeedEnd):
            return fed
        fed.append((message.first, message.host.host))


def test_the_feeder_hands_every_nth_host_to_each_worker_and_holds_none():
    pipes = [multiprocessing.Pipe() for _ in range(2)]
    conductor, _, _, flag = _conductor(2)
    with young_heap():
        hosts = CountingHosts(_hosts(5))
        feeder = parallel.Feeder(hosts, [ours for ours, _ in pipes], flag, conductor)
        conductor.exact = False
        feeder.start()
        first, second = (_received(theirs) for _, theirs in pipes)
        feeder.join(5)
    assert first == [(0, "h0"), (4, "h2"), (8, "h4")]
    assert second == [(2, "h1"), (6, "h3")]
    # Each host was sent on and dropped before the next one was read.
    assert hosts.alive_when_asked == [0] * 5
    assert conductor.totals["check"] == 10 and conductor.exact
    assert feeder.error is None and not flag.is_set()


def test_a_bad_host_ends_the_feed_sets_the_stop_flag_and_is_kept():
    def hosts():
        yield Host("h0.yaml", "h0", (Node("h0-n0"),))
        raise ValueError("h1.yaml: nodes[0]: bad")

    pipes = [multiprocessing.Pipe() for _ in range(2)]
    conductor, _, _, flag = _conductor(2)
    feeder = parallel.Feeder(hosts(), [ours for ours, _ in pipes], flag, conductor)
    feeder.start()
    fed = [_received(theirs) for _, theirs in pipes]
    feeder.join(5)
    assert fed == [[(0, "h0")], []]
    assert str(feeder.error) == "h1.yaml: nodes[0]: bad" and flag.is_set()


def test_each_result_is_handed_to_finished_as_it_arrives():
    pipes = [multiprocessing.Pipe()]
    seen = []
    conductor = parallel._Conductor([pipes[0][0]], threading.Event(), lambda *args: None,
                                    True, 2, finished=seen.append)
    worker = pipes[0][1]
    worker.send(parallel.Checked(False, 0))
    first, second = (migrate.NodeResult(name, migrate.UNCHANGED) for name in ("a", "b"))
    _finish(worker, first, second)
    assert conductor.follow() == [first, second]
    assert [result.nodename for result in seen] == ["a", "b"]
