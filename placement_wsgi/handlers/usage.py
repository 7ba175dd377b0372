"""Not implemented yet: answers 501 until its issue lands."""

from placement_wsgi import errors


def list_usages(request, **kwargs):
    raise errors.NotImplementedYet('usage.list_usages is not implemented yet')


def get_total_usages(request, **kwargs):
    raise errors.NotImplementedYet('usage.get_total_usages is not implemented yet')
