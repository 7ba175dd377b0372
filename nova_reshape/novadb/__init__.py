"""Read-only access to nova's cell database (and Cyborg's) for offline tools.

:mod:`.objects` parses the versioned-object JSON nova stores in text
columns; :mod:`.tables` declares just the columns read; :mod:`.records`
holds the typed records; :mod:`.reader` reads a whole cell in a few
set-based queries inside a read-only transaction.
"""
