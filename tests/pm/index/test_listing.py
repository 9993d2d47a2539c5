"""An index's project list is read for a "did you mean" only when it is small."""

from __future__ import annotations

import pytest

from pm.index.http import HttpClient
from pm.index.listing import small_project_list
from pm.testing import index_from_spec

SPEC = {"sharedlib": {"1.0": []}, "Tiny_HTTP": {"1.0": []}}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as served:
        yield served


@pytest.fixture
def client():
    made = HttpClient()
    yield made
    made.close()


@pytest.mark.parametrize("json", [True, False], ids=["pep691-json", "html"])
def test_a_small_list_is_read_in_either_format(index, client, json):
    index.json = json
    try:
        assert small_project_list(client, index.url) == ["sharedlib", "tiny-http"]
    finally:
        index.json = True


def test_a_list_over_the_limit_is_not_read(index, client):
    assert small_project_list(client, index.url, limit=10) == []
    assert small_project_list(client, index.url) == ["sharedlib", "tiny-http"]  # the connection is still fine


def test_no_list_where_there_is_none(index, client):
    assert small_project_list(client, index.url + "nothing-here/") == []
