"""Not implemented yet: answers 501 until its issue lands."""

from placement_wsgi import errors


def get_inventories(request, **kwargs):
    raise errors.NotImplementedYet('inventory.get_inventories is not implemented yet')


def create_inventory(request, **kwargs):
    raise errors.NotImplementedYet('inventory.create_inventory is not implemented yet')


def set_inventories(request, **kwargs):
    raise errors.NotImplementedYet('inventory.set_inventories is not implemented yet')


def delete_inventories(request, **kwargs):
    raise errors.NotImplementedYet('inventory.delete_inventories is not implemented yet')


def get_inventory(request, **kwargs):
    raise errors.NotImplementedYet('inventory.get_inventory is not implemented yet')


def update_inventory(request, **kwargs):
    raise errors.NotImplementedYet('inventory.update_inventory is not implemented yet')


def delete_inventory(request, **kwargs):
    raise errors.NotImplementedYet('inventory.delete_inventory is not implemented yet')
