"""The allocation-candidate engine (GET /allocation_candidates).

request.py parses the query; resolved.py maps names to ids; loader.py reads
the snapshot (snapshot.py); options.py lists each slot's providers per
anchor; constraints.py holds what ties slots together; plan.py enumerates
candidates (product.py for small anchors, search.py's depth-first search
otherwise); format.py shapes the response; engine.py ties them together.
See docs/candidates.md.
"""
