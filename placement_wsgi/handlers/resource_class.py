"""Not implemented yet: answers 501 until its issue lands."""

from placement_wsgi import errors


def list_resource_classes(request, **kwargs):
    raise errors.NotImplementedYet('resource_class.list_resource_classes is not implemented yet')


def create_resource_class(request, **kwargs):
    raise errors.NotImplementedYet('resource_class.create_resource_class is not implemented yet')


def get_resource_class(request, **kwargs):
    raise errors.NotImplementedYet('resource_class.get_resource_class is not implemented yet')


def update_resource_class(request, **kwargs):
    raise errors.NotImplementedYet('resource_class.update_resource_class is not implemented yet')


def delete_resource_class(request, **kwargs):
    raise errors.NotImplementedYet('resource_class.delete_resource_class is not implemented yet')
