"""The Requires-Python pseudo-package (``<python>``) obeys the resolver like any project.

Found on the public index (issue 20): core pinning pydantic 2 and a plugin pinning langchain
0.0.200 (which needs pydantic<2) ended in "too complex: gave up after 20000 rounds" after 14 s.
Backjumping had ruled out the target's Python as ``<python>``'s candidate; find_matches offered it
again, and resolvelib looped — pin <python>, pin pydantic, reject langchain — to its round limit.
The same shape on real wheels on the local index: now a conflict naming the plugin, in rounds."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest
from packaging.requirements import Requirement

from pm.index import SimpleIndexSource
from pm.inputs.core import Core
from pm.inputs.target import current_target
from pm.inputs.union import Origin, Tagged, Union
from pm.resolver import Conflict, Policy, resolve_union
from pm.testing import LocalIndex, index_from_spec

SPEC: Mapping[str, Mapping[str, object]] = {
    "anyio": {"4.7.0": {"requires": ["idna>=2.8", "sniffio>=1.1"], "requires_python": ">=3.9"}},
    "idna": {"3.10": {"requires_python": ">=3.6"}},
    "sniffio": {"1.3.1": {"requires_python": ">=3.7"}},
    "httpx": {"0.27.2": {"requires": ["anyio", "idna"], "requires_python": ">=3.8"}},
    "jinja2": {"3.1.4": {"requires": ["markupsafe>=2.0"], "requires_python": ">=3.7"}},
    "markupsafe": {"3.0.2": {"requires_python": ">=3.9"}},
    "pydantic": {**{f"1.10.{i}": {"requires_python": ">=3.7"} for i in range(5)},
                 "2.10.3": {"requires": ["annotated-types>=0.6"], "requires_python": ">=3.8"}},
    "annotated-types": {"0.7.0": {"requires_python": ">=3.8"}},
    "langchain": {"0.0.200": {"requires": ["pydantic>=1,<2", "sqlalchemy>=1.4,<3"], "requires_python": ">=3.8.1,<4.0"},
                  "0.3.0": {"requires": ["pydantic>=2.7.4,<3"], "requires_python": ">=3.9"}},
    "sqlalchemy": {"2.0.36": {"requires_python": ">=3.7"}},
}
CORE = ["anyio==4.7.0", "httpx==0.27.2", "jinja2==3.1.4", "pydantic==2.10.3"]
PLUGIN = Origin("lc", "plugins/lc/plugin.yaml")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIndex]:
    with index_from_spec(tmp_path_factory.mktemp("dists"), SPEC) as served:
        yield served


def test_a_pinned_plugin_against_a_core_pin_is_a_conflict_not_too_complex(index: LocalIndex) -> None:
    tagged = tuple([Tagged(Requirement(t), Origin.core()) for t in CORE]
                   + [Tagged(Requirement("langchain==0.0.200"), PLUGIN)])
    with SimpleIndexSource(index.url) as source, pytest.raises(Conflict) as caught:
        resolve_union(Union(Core((), (), "test", None), (), tagged), current_target(), source, Policy(),
                      max_rounds=200)  # the old loop used every round it was given
    assert list(caught.value.plugins) == ["lc"]
    assert str(caught.value) == (
        "plugin 'lc' (plugins/lc/plugin.yaml) requires langchain==0.0.200; langchain 0.0.200 requires "
        "pydantic<2,>=1; but core requires pydantic==2.10.3. Plugins involved: 'lc'.")
