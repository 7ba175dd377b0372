"""The token's rights probed before a run over HTTP writes anything."""

from __future__ import annotations

import json

import pytest

from nova_reshape.cmd import placement_rights
from nova_reshape.cmd.refusal import ExitClass, Refusal


class _Answer:
    def __init__(self, status: int, body: object = None) -> None:
        self.status_code = status
        self.text = json.dumps(body) if body is not None else "<html>no</html>"

    def json(self) -> object:
        return json.loads(self.text)


class _Placement:
    """Answers each (method, path) with the status given, else 400 (schema) / 200."""

    def __init__(self, **denied: int) -> None:
        self.denied = denied
        self.asked: list[tuple[str, str, object]] = []

    def request(self, method, url, json=None, microversion=None, headers=None):
        self.asked.append((method, url.split("?")[0], json))
        status = self.denied.get(url.split("?")[0].strip("/"))
        if status:
            return _Answer(status, {"errors": [{"status": status, "detail": "Policy\n says no"}]})
        return _Answer(200 if method == "GET" else 400, {})


def test_allowed_probes_write_nothing_and_pass():
    placement = _Placement()
    placement_rights.check_rights(placement, "http://p")
    assert placement.asked == [("GET", "/resource_providers", None),
                               ("POST", "/resource_providers", {}), ("POST", "/reshaper", {})]


def test_a_dry_run_only_needs_to_read():
    placement = _Placement(reshaper=403)
    placement_rights.check_rights(placement, "http://p", dry_run=True)
    assert [method for method, _, _ in placement.asked] == ["GET"]


@pytest.mark.parametrize(("denied", "line"), [
    ({"reshaper": 403}, "answered POST /reshaper with 403 (Policy says no): the token given "
     "may not move inventories and allocations, which needs placement:reshaper:reshape "
     "(service)"),
    ({"resource_providers": 401}, "answered GET /resource_providers with 401 (Policy says "
     "no): the token given may not read the provider trees"),
])
def test_the_first_right_missing_is_one_line(denied, line):
    with pytest.raises(Refusal) as refused:
        placement_rights.check_rights(_Placement(**denied), "http://p")
    assert refused.value.exit_class is ExitClass.BAD_INPUT
    assert refused.value.message.startswith(f"Placement at http://p {line}")
    assert refused.value.message.endswith("; nothing was written")
    assert "\n" not in refused.value.message


def test_other_answers_are_left_to_the_run():
    placement = _Placement(reshaper=404)
    placement_rights.check_rights(placement, "http://p")
    assert len(placement.asked) == 3
