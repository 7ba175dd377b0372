"""WSGI entry point: ``placement_wsgi.wsgi:application`` (see docs/architecture.md).

For gunicorn, uwsgi or mod_wsgi::

    OS_PLACEMENT_DATABASE__CONNECTION=sqlite:////var/lib/placement/placement.sqlite \\
        gunicorn -w 4 -b 127.0.0.1:8778 placement_wsgi.wsgi:application

The application is built when this module is imported, from the config file
named by ``OS_PLACEMENT_CONFIG_FILE``, else ``$OS_PLACEMENT_CONFIG_DIR/
placement.conf``, else ``/etc/placement/placement.conf`` (when present), and
from ``OS_PLACEMENT_<GROUP>__<OPTION>`` / ``OS_<GROUP>__<OPTION>``
environment variables. A configuration that cannot work (no
``[placement_database] connection``, unreachable database) stops the
process with one line on standard error and exit status 3. With gunicorn
``--preload`` the import, and so ``sync_on_startup``, happens once in the
master before the workers fork.
"""

from placement_wsgi import service

application = service.application_from_environment("placement-wsgi")
