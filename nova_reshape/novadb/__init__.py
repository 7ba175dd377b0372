"""Read-only access to nova's cell and API databases (and Cyborg's) for offline tools.

:mod:`.objects` parses the versioned-object JSON nova stores in text
columns; :mod:`.tables` declares just the columns read; :mod:`.records`
holds the typed records; :mod:`.reader` reads a whole cell in a few
set-based queries inside a read-only transaction. :mod:`.api` reads flavors
and host aggregates from nova's API database (columns in :mod:`.api_tables`),
through the same read-only helper (:mod:`.readonly`).
"""
