"""Not implemented yet: answers 501 until its issue lands."""

from placement_wsgi import errors


def list_allocation_candidates(request, **kwargs):
    raise errors.NotImplementedYet('allocation_candidate.list_allocation_candidates is not implemented yet')
