"""nova's vocabulary: the ground floor every other package of nova_reshape builds on.

Records and parsers of what nova itself defines (CPU-set syntax, PCI
addresses, flavors, host aggregates, cells, instances, hypervisor names,
its errors) and the one nova.conf model (:mod:`nova_reshape.nova.conf`).
Nothing here does I/O except reading nova.conf files, and nothing here
imports another package of nova_reshape (tests/unit/test_floors.py).
"""
