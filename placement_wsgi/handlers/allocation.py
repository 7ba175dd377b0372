"""Not implemented yet: answers 501 until its issue lands."""

from placement_wsgi import errors


def list_for_resource_provider(request, **kwargs):
    raise errors.NotImplementedYet('allocation.list_for_resource_provider is not implemented yet')


def set_allocations(request, **kwargs):
    raise errors.NotImplementedYet('allocation.set_allocations is not implemented yet')


def list_for_consumer(request, **kwargs):
    raise errors.NotImplementedYet('allocation.list_for_consumer is not implemented yet')


def set_allocations_for_consumer(request, **kwargs):
    raise errors.NotImplementedYet('allocation.set_allocations_for_consumer is not implemented yet')


def delete_allocations(request, **kwargs):
    raise errors.NotImplementedYet('allocation.delete_allocations is not implemented yet')
