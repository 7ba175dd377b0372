"""The keys this service reads and writes in a WSGI request's environ.

One module so that the middleware that sets a key and the code that reads
it agree on its name without importing each other.
"""

from __future__ import annotations

from typing import Final

#: The :class:`~placement_wsgi.context.RequestContext` of the request.
CONTEXT: Final = "placement.context"
#: The negotiated :class:`~placement_wsgi.microversion.Version`.
VERSION: Final = "placement.microversion"
#: The error code a handler chose, for the error body (1.23+).
ERROR_CODE: Final = "placement.error_code"
#: Extra members an error body carries (e.g. the 406 version range).
ERROR_EXTRA: Final = "placement.error_extra"
#: Set by oslo.middleware's RequestId.
REQUEST_ID: Final = "openstack.request_id"
