"""Floor order: each package of nova_reshape imports only from the floors below it.

The floors, lowest first, are those of docs/architecture.md. A module may
import from its own package, from any package on a lower floor and from
placement_wsgi; never from another package on its own floor or from a
higher one. placement_wsgi never imports nova_reshape. Every module of
nova_reshape must belong to a declared package, so a new package is given
its floor here when it is created. The graph is the one the no-cycles test
reads (:mod:`tests.unit.module_graph`).
"""

from __future__ import annotations

from tests.unit.module_graph import import_graph, module_files

FLOORS: tuple[tuple[str, ...], ...] = (
    ("nova_reshape", "nova_reshape.nova", "nova_reshape.exception"),
    ("nova_reshape.transport", "nova_reshape.provider_tree", "nova_reshape.accelerator",
     "nova_reshape.progress"),
    ("nova_reshape.report", "nova_reshape.virt", "nova_reshape.novadb"),
    ("nova_reshape.hostfacts", "nova_reshape.scheduler", "nova_reshape.journal"),
    ("nova_reshape.compute", "nova_reshape.consistency"),
    ("nova_reshape.runreport",),
    ("nova_reshape.cmd",),
)

SERVICE = "placement_wsgi"
CLIENT = "nova_reshape"


def floor_of(floors: tuple[tuple[str, ...], ...]) -> dict[str, int]:
    return {package: level for level, packages in enumerate(floors) for package in packages}


def package_of(module: str, floors: dict[str, int]) -> str | None:
    """The declared package ``module`` belongs to (the root module is its own), or None."""
    if module == CLIENT:
        return CLIENT
    top = ".".join(module.split(".")[:2])
    return top if top in floors else None


def violations(graph: dict[str, set[str]], floors: tuple[tuple[str, ...], ...]) -> list[str]:
    """One line per import that breaks the floor order (empty when none does)."""
    level = floor_of(floors)
    found = []
    for module in sorted(graph):
        if module.split(".")[0] == SERVICE:
            found += [f"{module} imports {target}: placement_wsgi never imports nova_reshape"
                      for target in sorted(graph[module]) if target.split(".")[0] == CLIENT]
            continue
        home = package_of(module, level)
        if home is None:
            found.append(f"{module} belongs to no package declared in FLOORS")
            continue
        for target in sorted(graph[module]):
            there = package_of(target, level)
            if target.split(".")[0] != CLIENT or there is None or there == home:
                continue
            if level[there] >= level[home]:
                found.append(f"{module} (floor {level[home]}, {home}) imports {target} "
                             f"(floor {level[there]}, {there}): import only from lower floors")
    return found


def test_nova_reshape_keeps_to_its_floors():
    graph = import_graph({**module_files(SERVICE), **module_files(CLIENT)})
    assert violations(graph, FLOORS) == []


def test_the_checker_names_an_upward_and_a_sideways_import():
    floors = (("nova_reshape.nova",), ("nova_reshape.novadb", "nova_reshape.virt"),
              ("nova_reshape.scheduler",))
    graph = {
        "nova_reshape.novadb.api": {"nova_reshape.scheduler.host_state",
                                    "nova_reshape.nova.aggregate", "nova_reshape.novadb.tables",
                                    "placement_wsgi.db"},
        "nova_reshape.virt.root": {"nova_reshape.novadb.api"},
        "nova_reshape.nova.aggregate": set(),
        "nova_reshape.novadb.tables": set(),
        "nova_reshape.scheduler.host_state": {"nova_reshape.nova.aggregate"},
    }
    assert violations(graph, floors) == [
        "nova_reshape.novadb.api (floor 1, nova_reshape.novadb) imports "
        "nova_reshape.scheduler.host_state (floor 2, nova_reshape.scheduler): "
        "import only from lower floors",
        "nova_reshape.virt.root (floor 1, nova_reshape.virt) imports nova_reshape.novadb.api "
        "(floor 1, nova_reshape.novadb): import only from lower floors",
    ]


def test_the_checker_guards_the_service_and_undeclared_packages():
    graph = {"placement_wsgi.app": {"nova_reshape.nova.cell"},
             "nova_reshape.consistency.audit": {"nova_reshape.nova.cell"},
             "nova_reshape.nova.cell": set()}
    assert violations(graph, (("nova_reshape.nova",),)) == [
        "nova_reshape.consistency.audit belongs to no package declared in FLOORS",
        "placement_wsgi.app imports nova_reshape.nova.cell: "
        "placement_wsgi never imports nova_reshape",
    ]

