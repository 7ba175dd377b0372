"""Parse nova.conf files into a fresh ``ConfigOpts`` with every option registered.

Later files win, as ``nova-compute --config-file a --config-file b``. oslo.config
converts a value when it is read, so reads that may meet a bad value are done
inside :func:`refusing_bad_values`, which turns any oslo.config error into a
one-line :class:`~nova_reshape.nova.errors.NovaConfError`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from oslo_config import cfg

from nova_reshape.nova.conf.options import register_opts
from nova_reshape.nova.errors import NovaConfError
from placement_wsgi.conf import check_text_files


@contextlib.contextmanager
def refusing_bad_values() -> Iterator[None]:
    """Raise NovaConfError (one line naming the file or option) for oslo.config errors."""
    try:
        yield
    except cfg.ConfigFilesNotFoundError as error:
        raise NovaConfError(f"nova.conf: cannot read {', '.join(error.config_files)}") from None
    except cfg.ConfigFileParseError as error:
        raise NovaConfError(f"nova.conf: {error.config_file}: {error.msg}") from None
    except (cfg.ConfigFileValueError, cfg.Error) as error:
        raise NovaConfError(f"nova.conf: {error}") from None


def load_conf(files: Sequence[str]) -> cfg.ConfigOpts:
    """A new ``ConfigOpts`` holding nova.conf ``files`` (later ones win).

    NovaConfError for a missing, unreadable or non-INI file; a bad value is
    refused when read (read it inside :func:`refusing_bad_values`).
    """
    conf = register_opts(cfg.ConfigOpts())
    with refusing_bad_values():
        check_text_files(files)
        conf(args=[], project="nova", default_config_files=list(files),
             default_config_dirs=[])
    return conf
