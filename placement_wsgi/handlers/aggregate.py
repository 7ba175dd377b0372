"""Not implemented yet: answers 501 until its issue lands."""

from placement_wsgi import errors


def get_aggregates(request, **kwargs):
    raise errors.NotImplementedYet('aggregate.get_aggregates is not implemented yet')


def set_aggregates(request, **kwargs):
    raise errors.NotImplementedYet('aggregate.set_aggregates is not implemented yet')
