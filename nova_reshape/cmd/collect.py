"""``nova-reshape-manage host collect``: what the hypervisor knows, for describe_hosts.

::

    nova-reshape-manage host collect --output FILE [--host NAME] \\
        [--sysfs-root DIR] [--libvirt-xml-dir DIR]

Run as root on a compute host. Writes the partial host file of
:mod:`nova_reshape.hostfacts.collected` (mediated devices, their GPUs and
which instance holds each) to FILE, or to ``FILE/<host>.yaml`` when FILE is
a directory; ``describe_hosts --collected DIR`` merges it. A domain
definition that cannot be parsed is reported on stderr and in the file's
``errors``; the rest is still collected (exit 0). Exit 2: bad input (sysfs
root missing, output not writable).
"""

from __future__ import annotations

import argparse
import os
import socket
from typing import Any, TextIO

from nova_reshape.cmd.refusal import EXIT_OK, PROGRAM, ExitClass, Refusal
from nova_reshape.hostfacts import collect, collected, output


def add_parser(categories: Any) -> None:
    """Register the ``host`` category and its ``collect`` action."""
    category = categories.add_parser("host", help="commands run on a compute host")
    actions = category.add_subparsers(dest="action", metavar="ACTION", required=True)
    parser = actions.add_parser(
        "collect", help="record mediated devices and the guests holding them")
    parser.add_argument("--output", metavar="FILE", required=True,
                        help="file to write, or a directory to write <host>.yaml into")
    parser.add_argument("--host", metavar="NAME", default=None,
                        help="the nova-compute service host name (default: this machine's "
                        "hostname)")
    parser.add_argument("--sysfs-root", metavar="DIR", default=collect.DEFAULT_SYSFS,
                        help=f"sysfs to read (default {collect.DEFAULT_SYSFS})")
    parser.add_argument("--libvirt-xml-dir", metavar="DIR",
                        help="read domain definitions from these XML files instead of asking "
                        f"libvirt (default: virsh, else {collect.DEFAULT_LIBVIRT_XML_DIR})")
    parser.set_defaults(run=host_collect, verbose=False)


def host_collect(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The command; a :class:`Refusal` for a missing directory or an unwritable output."""
    if not os.path.isdir(args.sysfs_root):
        raise Refusal(ExitClass.BAD_INPUT, f"--sysfs-root {args.sysfs_root}: not a directory")
    if args.libvirt_xml_dir and not os.path.isdir(args.libvirt_xml_dir):
        raise Refusal(ExitClass.BAD_INPUT,
                      f"--libvirt-xml-dir {args.libvirt_xml_dir}: not a directory")
    host = args.host or socket.gethostname()
    result = collect.collect(host, args.sysfs_root, args.libvirt_xml_dir)
    path = args.output
    if os.path.isdir(path):
        path = os.path.join(path, output.file_name(host))
    domains = args.libvirt_xml_dir or f"virsh, else {collect.DEFAULT_LIBVIRT_XML_DIR}"
    comment = output.header(
        f"Collected on {host} by {PROGRAM} host collect, for describe_hosts --collected",
        [f"sysfs {args.sysfs_root}", f"libvirt domains {domains}"], [])
    try:
        output.write_atomically(path, comment + collected.dump(result))
    except OSError as error:
        raise Refusal(ExitClass.BAD_INPUT, f"{path}: {error.strerror or error}") from error
    for problem in result.errors:
        err.write(f"{PROGRAM}: warning: {problem}\n")
    out.write(f"{path}: {len(result.gpus)} GPU(s), {len(result.mdevs)} mediated device(s), "
              f"{sum(1 for mdev in result.mdevs if mdev.instance)} held by guests\n")
    return EXIT_OK
