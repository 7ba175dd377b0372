"""Every benchmark in tools/ runs at its smallest size and prints its figures.

A benchmark is timed by hand, so nothing else notices when one stops
running (bench_scheduler.py once failed every request it generated). Each
case runs one ``tools/bench_*.py``, or one of the other timing tools
(:data:`TIMING_TOOLS`), in a subprocess, as an operator would,
and checks that it exits 0 and prints each of its figures. The figures'
values are never compared with anything: at these sizes a time says nothing.

SQLite cases always run; the PostgreSQL and MariaDB cases run when the
suite's variables name a server (tests/fixtures/databases.py). The shared
benchmark kit that ``bench_candidates_limit.py`` drives is not in this
repository: that case runs when ``NOVA_RESHAPE_BENCH_DIR`` names it (with
the kit's project venv set up as the tool's docstring says, or the kit's
``BENCH_PROJECT_VENV`` naming this checkout's venv).
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest

from tests.fixtures.databases import ENV_MYSQL, ENV_POSTGRESQL

ROOT = pathlib.Path(__file__).resolve().parents[3]
TOOLS = ROOT / "tools"
ENV_BENCH_DIR = "NOVA_RESHAPE_BENCH_DIR"
NUMBER = r"-?[0-9]+(?:\.[0-9]+)?"
#: Seconds one benchmark may take at its smallest size before the test gives up.
TIMEOUT = 120
#: What each gating variable names, for the skip reason.
NEEDED = {ENV_POSTGRESQL: "a PostgreSQL server URL", ENV_MYSQL: "a MariaDB server URL",
          ENV_BENCH_DIR: "the shared benchmark kit's folder (its --bench-dir)"}


@dataclass(frozen=True)
class Bench:
    """One benchmark run: its script, smallest-size arguments, what it must print."""

    script: str
    args: tuple[str, ...]
    #: Regular expressions (multi-line) that stdout must each match: the figures.
    figures: tuple[str, ...]
    #: Environment variable naming what the run needs (a server URL, the kit), if any.
    needs: str | None = None
    #: Where it runs, for the test id and the skip reason.
    on: str = "sqlite"

    @property
    def id(self) -> str:
        return f"{self.script.removesuffix('.py')}-{self.on}"


def _json_figures(*keys: str) -> tuple[str, ...]:
    return tuple(rf'"{key}": {NUMBER}' for key in keys)


#: Tools that time something without the bench_ prefix (the figures docs cite).
TIMING_TOOLS = {"profile_candidates.py"}

MIGRATE = ("--nodes", "2", "--gpus", "1", "--instances", "1")
MIGRATE_FIGURES = _json_figures("migrate_seconds", "cpu_ms_per_node",
                                "placement_calls_per_node", "peak_rss_mb") + (
    r'"outcome": \{\s*"migrated": 2\s*\}',)
#: Killed while it starts: at this size nothing is left to kill mid-write anyway.
KILLED = (*MIGRATE, "--kill-after", "0.3")
KILLED_FIGURES = (r'"every_tree_root_plus_one_per_gpu": true', r'"third_run": \{')
REVERT = (*MIGRATE, "--check-dump")
REVERT_FIGURES = _json_figures("migrate_seconds_without_journal", "migrate_seconds_with_journal",
                               "journal_cost_percent", "revert_seconds",
                               "journal_kib_per_node") + (
    r'"reverted": 2', r'"dump_after_revert_equals_before": true')
ALLOCATIONS = ("--workers", "1", "--clients", "2", "--providers", "2", "--seconds", "2",
               "--claims", "10", "--children", "2", "--consumers", "2", "--rounds", "1")
ALLOCATIONS_FIGURES = _json_figures("claims_per_s", "median_ms", "max_ms")
ONLINE = ("--providers", "3", "--consumers", "5")
ONLINE_FIGURES = _json_figures("check_before_seconds", "migrate_seconds",
                               "migrate_again_seconds") + (r'"migrate_again_exit": 0',)
HEAL = ("--nodes", "2", "--instances", "10")
HEAL_FIGURES = _json_figures("dry_run_seconds", "heal_seconds", "second_run_seconds") + (
    r'"heal_exit": 0', r'"healed": 1,', r'"second_run_exit": 4')
CONSISTENCY = ("--nodes", "4", "--instances", "2")
CONSISTENCY_FIGURES = _json_figures("preflight_seconds", "audit_seconds", "audit_delete_seconds",
                                    "audit_clean_seconds", "sync_aggregates_seconds",
                                    "sync_aggregates_clean_seconds")

REBUILD = ("--nodes", "2", "--instances", "10", "--revert")
REBUILD_FIGURES = _json_figures("rebuild_seconds", "heal_after_seconds", "revert_seconds") + (
    r'"rebuild_exit": 0', r'2 compute node tree\(s\) built for nova [0-9.]+ \(2 reshaped by '
    r'the migration\), 10 instance\(s\) given allocations', r'"heal_after_exit": 4',
    r'"revert_exit": 0', r'"left_after_revert": \{\}')
#: profile_candidates.py: the answer, the timing line, the statements and the profile
CANDIDATES = ("--trees", "2", "--runs", "2")
CANDIDATES_FIGURES = (
    r"^(sqlite|postgresql): status 200, [1-9][0-9]* requests, [1-9][0-9]* summaries",
    rf"^median {NUMBER} ms, best {NUMBER} ms over 2 runs; client CPU median {NUMBER} ms$")
CANDIDATES_TRACED = (*CANDIDATES, "--statements", "--profile", "--top", "3")
CANDIDATES_TRACED_FIGURES = (*CANDIDATES_FIGURES, rf"^\d+ statements, {NUMBER} ms of {NUMBER} ms$",
                             r"function calls .* in [0-9.]+ seconds")
CAPACITY = ("--hosts", "8", "--flavors", "4")
CAPACITY_FIGURES = _json_figures("check_seconds", "check_cpu_seconds", "total_fits") + (
    r'"check_exit": 0',)


def _on(variable: str) -> tuple[str, ...]:
    """``--server`` arguments naming the server of ``variable`` (empty when unset)."""
    return ("--server", os.environ.get(variable, ""))


BENCHES = [
    # Two runs: the second is where reused hosts once broke every request.
    Bench("bench_scheduler.py", ("--sizes", "50", "--repeat", "2"),
          (rf"^\s+50\s+{NUMBER} ms\s+{NUMBER} ms\s+{NUMBER}\s+\d+/\d+$",)),
    Bench("bench_scheduler_placement.py", ("--hosts", "10", "--repeat", "1"),
          (rf"candidates query: best\s+{NUMBER} ms",
           rf"select_destinations: best\s+{NUMBER} ms")),
    Bench("bench_explain_live.py", ("--hosts", "10", "--repeat", "1", "--nova-database"),
          (rf"reasons pass: best\s+{NUMBER} ms", rf"whole explain: best\s+{NUMBER} ms",
           rf"with nova DB: best\s+{NUMBER} ms")),
    Bench("bench_transport.py", ("--rounds", "2"),
          _json_figures("intercept_cpu_ms_per_call", "wsgi_cpu_ms_per_call")),
    Bench("bench_migrate.py", MIGRATE, MIGRATE_FIGURES),
    Bench("bench_migrate_killed.py", KILLED, KILLED_FIGURES),
    # Exits 1 unless gunicorn's access log and the run count the same requests.
    Bench("bench_migrate.py", (*MIGRATE, "--over-http"),
          _json_figures("served_requests", "placement_calls", "http_to_in_process_wall"),
          on="sqlite-over-http"),
    Bench("bench_revert.py", REVERT, REVERT_FIGURES),
    Bench("bench_allocations.py", ("--engine", "sqlite", *ALLOCATIONS), ALLOCATIONS_FIGURES),
    # Its browser figures are printed only where chromium is (else the reason why not).
    Bench("bench_report.py", ("--nodes", "1", "--gpus", "1", "--instances", "1", "--repeat", "1"),
          _json_figures("report_mb", "seconds", "peak_mb")),
    Bench("bench_online_migrations.py", ONLINE, ONLINE_FIGURES),
    Bench("bench_online_migrations.py", (*ONLINE, *_on(ENV_POSTGRESQL)), ONLINE_FIGURES,
          ENV_POSTGRESQL, "postgresql"),
    Bench("bench_consistency.py", CONSISTENCY, CONSISTENCY_FIGURES),
    Bench("bench_consistency.py", (*CONSISTENCY, "--engine", "postgresql", *_on(ENV_POSTGRESQL)),
          CONSISTENCY_FIGURES, ENV_POSTGRESQL, "postgresql"),
    Bench("bench_migrate.py", (*MIGRATE, "--engine", "postgresql", *_on(ENV_POSTGRESQL)),
          MIGRATE_FIGURES, ENV_POSTGRESQL, "postgresql"),
    Bench("bench_migrate_killed.py", (*KILLED, "--engine", "postgresql", *_on(ENV_POSTGRESQL)),
          KILLED_FIGURES, ENV_POSTGRESQL, "postgresql"),
    Bench("bench_allocations.py", ("--engine", "postgresql", "--server-url",
                                   os.environ.get(ENV_POSTGRESQL, ""), *ALLOCATIONS),
          ALLOCATIONS_FIGURES, ENV_POSTGRESQL, "postgresql"),
    Bench("bench_migrate.py", (*MIGRATE, "--engine", "mysql", *_on(ENV_MYSQL)),
          MIGRATE_FIGURES, ENV_MYSQL, "mysql"),
    Bench("bench_heal.py", HEAL, HEAL_FIGURES),
    Bench("bench_heal.py", (*HEAL, "--engine", "postgresql", *_on(ENV_POSTGRESQL)),
          HEAL_FIGURES, ENV_POSTGRESQL, "postgresql"),
    Bench("bench_heal.py", (*HEAL, "--engine", "mysql", *_on(ENV_MYSQL)),
          HEAL_FIGURES, ENV_MYSQL, "mysql"),
    Bench("bench_rebuild.py", REBUILD, REBUILD_FIGURES),
    Bench("bench_rebuild.py", (*REBUILD, "--engine", "postgresql", *_on(ENV_POSTGRESQL)),
          REBUILD_FIGURES, ENV_POSTGRESQL, "postgresql"),
    Bench("bench_rebuild.py", (*REBUILD, "--engine", "mysql", *_on(ENV_MYSQL)),
          REBUILD_FIGURES, ENV_MYSQL, "mysql"),
    Bench("bench_revert.py", (*REVERT, "--engine", "postgresql", *_on(ENV_POSTGRESQL)),
          REVERT_FIGURES, ENV_POSTGRESQL, "postgresql"),
    Bench("bench_capacity.py", CAPACITY, CAPACITY_FIGURES),
    Bench("bench_capacity.py", (*CAPACITY, "--engine", "postgresql", *_on(ENV_POSTGRESQL)),
          CAPACITY_FIGURES, ENV_POSTGRESQL, "postgresql"),
    Bench("profile_candidates.py", CANDIDATES_TRACED, CANDIDATES_TRACED_FIGURES),
    Bench("profile_candidates.py", (*CANDIDATES, "--flat", "--limit", "1"), CANDIDATES_FIGURES,
          on="sqlite-flat"),
    Bench("profile_candidates.py", (*CANDIDATES, "--database",
                                    os.environ.get(ENV_POSTGRESQL, "")),
          CANDIDATES_FIGURES, ENV_POSTGRESQL, "postgresql"),
    Bench("bench_candidates_limit.py", ("--bench-dir", os.environ.get(ENV_BENCH_DIR, ""),
                                        "--count", "10", "--limits", "5", "--samples", "1",
                                        "--warmup", "0"),
          (r'"bench_load_and_checks_ok": true', rf'"median_s": {NUMBER}'), ENV_BENCH_DIR,
          "benchmark-kit"),
]


def test_every_benchmark_script_has_a_case() -> None:
    scripts = {path.name for path in TOOLS.glob("bench_*.py")} | TIMING_TOOLS
    assert scripts == {bench.script for bench in BENCHES}


@pytest.mark.parametrize("bench", BENCHES, ids=lambda bench: bench.id)
def test_benchmark_runs_at_its_smallest_size(bench: Bench) -> None:
    if bench.needs and not os.environ.get(bench.needs):
        pytest.skip(f"{bench.script} on {bench.on} runs only when {bench.needs} names "
                    f"{NEEDED[bench.needs]}")
    done = subprocess.run([sys.executable, str(TOOLS / bench.script), *bench.args],
                          cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT,
                          check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    for figure in bench.figures:
        assert re.search(figure, done.stdout, re.MULTILINE), (figure, done.stdout[-2000:])
