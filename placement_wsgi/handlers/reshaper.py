"""Not implemented yet: answers 501 until its issue lands."""

from placement_wsgi import errors


def reshape(request, **kwargs):
    raise errors.NotImplementedYet('reshaper.reshape is not implemented yet')
