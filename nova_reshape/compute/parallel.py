"""A migration run spread over several worker processes (``--workers``).

The run is CPU-bound in Python: through PlacementDirect the Placement
application itself runs in the migrating process, so threads would queue on
the interpreter lock. Each worker is a process of its own with its own
transport (its own PlacementDirect and database pool, or its own HTTP
session) and a fixed share of the hosts (every N-th one, so large and small
hosts spread evenly), fed to it through its pipe as the parent reads them
(:class:`Feeder`): the parent never holds the host descriptions, a worker
only the batch it is checking.

The two phases stay global:

1. every worker checks its nodes and reports whether any was refused;
2. only when no worker found anything does any worker write (a dry run
   with nothing refused keeps its would-be statuses). A node that fails or
   breaks an invariant sets a shared stop flag, and every worker stops
   before its next node (the rest are ``not-run``), as a single process run
   does. A worker whose parent died stops the same way.

SIGINT and SIGTERM (to the parent, or to the whole group as Ctrl-C and
``systemctl stop`` send them) set that stop flag too: every worker finishes
the node it is writing and stops; the parent waits for their last results,
then raises the ``KeyboardInterrupt`` so the command says how many nodes
were written. No worker outlives the run.

Each node's compact result (:class:`~nova_reshape.compute.node_result.NodeResult`,
no trees) goes to the parent as a :class:`Finished` message as soon as the
node is final, so neither side holds more than those summaries and one
batch of trees.

Each node is still one atomic ``POST /reshaper`` and the providers of two
nodes never overlap, so workers never write the same provider; a run killed
at any moment is completed by running it again.
"""

from __future__ import annotations

import contextlib
import enum
import multiprocessing
import multiprocessing.connection
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from nova_reshape import exception
from nova_reshape.compute import migrate
from nova_reshape.virt.host import Host
from placement_wsgi import gc_pause
from placement_wsgi.cmd import signals

#: Opens a transport in a worker; must pickle (a module-level function or a
#: ``functools.partial`` of one), since workers are spawned, not forked.
Opener = Callable[[], contextlib.AbstractContextManager[Any]]

#: Below this many nodes per worker, the start-up of a process costs more than it saves.
NODES_PER_WORKER = 100

#: Most workers ``auto`` picks: past the cores, the database is what waits.
MAX_AUTO_WORKERS = 4


def auto_workers(nodes: int, cpus: int | None = None) -> int:
    """Workers for ``nodes`` nodes: one per core, one per 100 nodes, at most 4."""
    cpus = cpus or os.cpu_count() or 1
    return max(1, min(cpus, MAX_AUTO_WORKERS, nodes // NODES_PER_WORKER))


# -- messages on a worker's pipe: worker -> parent ----------------------------

class Progress(NamedTuple):
    """One more node of ``phase`` ("check" or "migrate") is done."""

    phase: str


class Checked(NamedTuple):
    """The worker checked its share: whether any node was refused, how many wait to be written."""

    refused: bool
    pending: int


class Finished(NamedTuple):
    """One node's final result (compact: sent as each node finishes, not all at the end)."""

    result: migrate.NodeResult


class Done(NamedTuple):
    """The worker finished; the Placement calls it made."""

    calls: int


class WorkerError(NamedTuple):
    """The worker stopped on an error (picklable; see :func:`_portable`)."""

    error: BaseException


WorkerMessage = Progress | Checked | Finished | Done | WorkerError


# -- messages on a worker's pipe: parent -> worker ----------------------------

class Feed(NamedTuple):
    """One described host of the worker's share, and its first node's position
    in the description order."""

    first: int
    host: Host


class FeedEnd(NamedTuple):
    """Every host of the share was fed: the worker's check can end."""


class Verdict(enum.StrEnum):
    """The parent's answer once every worker has checked: parent -> worker."""

    WRITE = "write"
    #: Some node was refused: no node is written, the checked ones are not run.
    ABANDON = "abandon"
    #: A dry run with nothing refused: the checked nodes' results stand.
    KEEP = "keep"


def _fed(connection: multiprocessing.connection.Connection) -> Iterator[migrate.Numbered]:
    """The hosts the parent feeds this worker, as they come, up to :class:`FeedEnd`."""
    while True:
        match connection.recv():
            case Feed(first, host):
                yield migrate.Numbered(first, host)
            case FeedEnd():
                return


def _worker(opener: Opener, settings: migrate.Settings,
            connection: multiprocessing.connection.Connection, stop_flag: Any,
            parent: int) -> None:
    """One worker's whole life: check what it is fed, wait for the verdict, write, report."""
    signals.defer_to(stop_flag.set)  # stop at the next node, never in one
    gc_pause.for_a_long_run()  # this process is the run
    def progress(phase: str, done: int, total: int) -> None:
        connection.send(Progress(phase))

    def stop() -> bool:
        return stop_flag.is_set() or os.getppid() != parent

    def finished(result: migrate.NodeResult) -> None:
        if result.status in migrate.STOPPING:
            stop_flag.set()
        connection.send(Finished(result))

    try:
        with opener() as placement:
            run = migrate.Migration(placement, (), settings, numbered=_fed(connection),
                                    progress=progress, finished=finished, keep_results=False)
            run.check()
            connection.send(Checked(run.refused, run.pending))
            match connection.recv():
                case Verdict.WRITE:
                    run.write(stop=stop)
                case Verdict.KEEP:
                    run.keep()
                case _:
                    run.abandon()
            connection.send(Done(run.calls))
    except BaseException as error:  # noqa: BLE001 - reported to the parent
        stop_flag.set()
        with contextlib.suppress(Exception):
            connection.send(WorkerError(_portable(error)))
    finally:
        connection.close()


def _portable(error: BaseException) -> BaseException:
    """The error itself if it survives pickling, else a NovaException saying what it was."""
    import pickle
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # noqa: BLE001 - any pickling failure
        return exception.NovaException(message=f"{type(error).__name__}: {error}")


class ParallelMigration:
    """A :class:`~nova_reshape.compute.migrate.Migration` over ``workers`` processes.

    ``opener`` opens one transport per worker (see :data:`Opener`);
    ``settings``, ``progress`` and ``finished`` are the Migration's
    (``settings`` goes to every worker; ``finished`` is called in this
    process as each worker's node result arrives). :meth:`run` returns the
    same results, in the same order, as a single-process run would (none
    with ``keep_results=False``: they only go to ``finished``).

    ``hosts`` is consumed once, lazily, by a feeder thread of this process
    that hands each host to a worker as it is read (every N-th host to the
    same worker, so large and small hosts spread evenly) and holds none
    after: a worker takes its next hosts only when its batch is checked, so
    what waits between them is what the pipe buffers. An error raised by
    ``hosts`` (a bad host file) stops the run before anything is written,
    and :meth:`run` raises it. ``expected`` is the number of nodes to
    check, as far as known before the feed ends (the progress total).
    """

    def __init__(self, opener: Opener, hosts: Iterable[Host], workers: int,
                 settings: migrate.Settings = migrate.Settings(), *,
                 progress: migrate.Progress | None = None,
                 finished: migrate.Finished | None = None, keep_results: bool = True,
                 expected: int = 0) -> None:
        self.settings = settings
        self.finished = finished or (lambda result: None)
        self.opener = opener
        self.hosts = hosts
        self.workers = max(1, workers)
        self.progress = progress or (lambda phase, done, total: None)
        self.keep_results = keep_results
        self.expected = expected
        self.calls = 0

    def run(self) -> list[migrate.NodeResult]:
        context = multiprocessing.get_context("spawn")
        stop_flag = context.Event()
        pipes: list[multiprocessing.connection.Connection] = []
        processes = []
        for _ in range(self.workers):
            ours, theirs = context.Pipe()
            process = context.Process(
                target=_worker, name="nova-reshape-migrate-worker", daemon=True,
                args=(self.opener, self.settings, theirs, stop_flag, os.getpid()))
            process.start()
            theirs.close()
            pipes.append(ours)
            processes.append(process)
        conductor = _Conductor(pipes, stop_flag, self.progress, self.settings.dry_run,
                               to_check=self.expected, finished=self.finished,
                               keep_results=self.keep_results)
        conductor.exact = False
        feeder = Feeder(self.hosts, pipes, stop_flag, conductor)
        feeder.start()
        try:
            results = self._conduct(conductor)
        except KeyboardInterrupt:
            # Every worker stops after its node; their last results still count.
            stop_flag.set()
            with contextlib.suppress(Exception):
                conductor.follow()
            raise
        finally:
            stop_flag.set()
            feeder.join()
            for pipe in pipes:
                pipe.close()
            for process in processes:
                process.join(timeout=30)
                if process.is_alive():
                    process.kill()
        if feeder.error is not None:
            raise feeder.error
        return results

    def _conduct(self, conductor: _Conductor) -> list[migrate.NodeResult]:
        results = conductor.follow()
        self.calls = conductor.calls
        return sorted(results, key=lambda result: result.order)


class Feeder(threading.Thread):
    """Hands the described hosts to the workers as they are read (see
    :class:`ParallelMigration`); tells the conductor how many nodes there are
    to check once the feed ends. An error from ``hosts`` sets the stop flag
    (no worker writes) and is kept in :attr:`error`."""

    def __init__(self, hosts: Iterable[Host],
                 pipes: Sequence[multiprocessing.connection.Connection], stop_flag: Any,
                 conductor: _Conductor) -> None:
        super().__init__(name="nova-reshape-migrate-feeder", daemon=True)
        self.hosts = hosts
        self.pipes = list(pipes)
        self.stop_flag = stop_flag
        self.conductor = conductor
        self.error: BaseException | None = None

    def run(self) -> None:
        live = dict(enumerate(self.pipes))
        index = first = to_check = 0
        try:
            # Not enumerate(): it keeps its last pair, and so the last host, alive.
            for host in self.hosts:
                if self.stop_flag.is_set() or not live:
                    break
                worker, index = index % len(self.pipes), index + 1
                if worker in live:
                    self._send(live, worker, Feed(first, host))
                first += len(host.nodes)
                to_check += sum(not node.is_ironic for node in host.nodes)
                del host  # held by no one here while the next is read
        except BaseException as error:  # noqa: BLE001 - raised by ParallelMigration.run
            self.error = error
            self.stop_flag.set()
        finally:
            for worker in list(live):
                self._send(live, worker, FeedEnd())
            self.conductor.fed(to_check)

    @staticmethod
    def _send(live: dict[int, multiprocessing.connection.Connection], worker: int,
              message: Feed | FeedEnd) -> None:
        """Send to a worker; one that is gone is fed no more (the conductor reports it)."""
        try:
            live[worker].send(message)
        except OSError:
            del live[worker]


class _Conductor:
    """The parent's side: relays progress, gives the verdict, collects the results."""

    def __init__(self, pipes: Sequence[multiprocessing.connection.Connection], stop_flag: Any,
                 progress: migrate.Progress, dry_run: bool, to_check: int,
                 finished: migrate.Finished | None = None, keep_results: bool = True) -> None:
        self.pipes = list(pipes)
        self.stop_flag = stop_flag
        self.progress = progress
        self.finished = finished or (lambda result: None)
        self.dry_run = dry_run
        self.totals = {"check": to_check, "migrate": 0}
        self.done = {"check": 0, "migrate": 0}
        #: worker -> (refused, nodes waiting to be written)
        self.checked: dict[int, tuple[bool, int]] = {}
        self.reported: set[int] = set()
        #: Every node's result, as the workers finish them (when ``keep_results``).
        self.results: list[migrate.NodeResult] = []
        self.keep_results = keep_results
        #: Whether the number of nodes to check is final (the feed ended).
        self.exact = True
        #: Placement calls of the workers that are done.
        self.calls = 0
        self.failure: BaseException | None = None
        self.open_pipes = {id(pipe): pipe for pipe in self.pipes}

    def follow(self) -> list[migrate.NodeResult]:
        """Serve the workers until every one has closed its pipe; raise a worker's error.

        Every node's result, in the order they finished. Called again after
        an interruption, it goes on where it stopped."""
        open_pipes = self.open_pipes
        while open_pipes:
            for pipe in multiprocessing.connection.wait(list(open_pipes.values())):
                try:
                    message = pipe.recv()
                except EOFError:
                    del open_pipes[id(pipe)]
                    if id(pipe) not in self.reported:
                        self._lost(id(pipe), exception.NovaException(
                            message="a migration worker exited without reporting"))
                    continue
                self._handle(id(pipe), message)
        if self.failure is not None:
            raise self.failure
        return self.results

    def _handle(self, worker: int, message: WorkerMessage) -> None:
        match message:
            case Progress(phase):
                self.done[phase] += 1
                total = self.totals[phase]
                if phase == "check" and not self.exact:
                    total = max(total, self.done[phase] + 1)
                self.progress(phase, self.done[phase], total)
            case Checked(refused, pending):
                self._checked(worker, refused=refused, pending=pending)
            case Finished(result):
                self.finished(result)
                if self.keep_results:
                    self.results.append(result)
            case Done(calls):
                self.reported.add(worker)
                self.calls += calls
            case WorkerError(error):
                self.reported.add(worker)
                self._lost(worker, error)

    def fed(self, to_check: int) -> None:
        """The feed ended: ``to_check`` nodes in all (called from the feeder's thread)."""
        self.totals["check"] = to_check
        self.exact = True

    def _lost(self, worker: int, error: BaseException) -> None:
        """A worker failed: stop the others; if they still await a verdict, it is no."""
        self.failure = self.failure or error
        self.stop_flag.set()
        if worker not in self.checked:
            self._checked(worker, refused=True, pending=0)

    def _checked(self, worker: int, refused: bool, pending: int) -> None:
        self.checked[worker] = (refused, pending)
        if len(self.checked) < len(self.pipes):
            return
        # An interrupted run (stop flag set) writes nothing more either.
        refused = self.stop_flag.is_set() or any(
            refused for refused, _ in self.checked.values())
        verdict = (Verdict.ABANDON if refused else Verdict.KEEP if self.dry_run
                   else Verdict.WRITE)
        self.totals["migrate"] = sum(pending for _, pending in self.checked.values())
        for pipe in self.pipes:
            with contextlib.suppress(OSError):
                pipe.send(verdict)
