"""Host description files from what a fast-forward upgrade really has.

:mod:`.collected` is the partial host file ``host collect`` writes on a
compute host (mediated devices and which guest holds them);
:mod:`.collect` reads them from sysfs and libvirt; :mod:`.describe` builds
host description documents (docs/host-description.md) from a nova cell
database snapshot, collected files and Cyborg's records; :mod:`.output`
writes them. docs/describe-hosts.md is the user's guide.
"""
