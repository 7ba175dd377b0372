"""The allocation-candidate engine (GET /allocation_candidates).

request.py parses the query, search.py reads the database, combine.py builds
candidates, format.py shapes the response; engine.py ties them together.
See docs/candidates.md.
"""
