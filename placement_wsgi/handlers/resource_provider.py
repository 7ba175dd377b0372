"""Not implemented yet: answers 501 until its issue lands."""

from placement_wsgi import errors


def list_resource_providers(request, **kwargs):
    raise errors.NotImplementedYet('resource_provider.list_resource_providers is not implemented yet')


def create_resource_provider(request, **kwargs):
    raise errors.NotImplementedYet('resource_provider.create_resource_provider is not implemented yet')


def get_resource_provider(request, **kwargs):
    raise errors.NotImplementedYet('resource_provider.get_resource_provider is not implemented yet')


def delete_resource_provider(request, **kwargs):
    raise errors.NotImplementedYet('resource_provider.delete_resource_provider is not implemented yet')


def update_resource_provider(request, **kwargs):
    raise errors.NotImplementedYet('resource_provider.update_resource_provider is not implemented yet')
