"""The migration's run report: one self-contained HTML file, or JSON, written as nodes finish.

``migrate_compute_inventory --report FILE.html|FILE.json`` (see
docs/migrate-compute-inventory.md). :mod:`.records` turns each node's
trees and plan into a compact record while the node's trees still exist,
:mod:`.capacity` sums the cloud's capacity per resource class before and
after, :mod:`.layout` places a tree's providers for drawing as SVG,
:mod:`.writers` streams the file (Jinja2 templates shipped in
``templates/``) and :mod:`.run` ties them to the run's callbacks.
"""
