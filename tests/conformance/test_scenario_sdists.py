"""The scenario sdists: offline-buildable, carrying what the scenario says, allowed as uv would.

Every sdist a scenario publishes is built by :func:`pm.testing.sdists.backend_sdist` (spec key
``"sdist_backend": "in-tree"``): its PKG-INFO gives Name, Version and Requires-Python (what the
index publishes as ``data-requires-python``) and nothing else, so the dependencies are only known
by building it, offline, with the real uv.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from pm.base.uv import Uv
from pm.index.builds import SdistBuilder
from pm.index.findlinks import FindLinksSource
from pm.inputs.target import current_target
from pm.testing import build_packages, metadata_bytes
from pm.testing.index import ServedFile

from .conftest import applicable_scenarios
from .scenarios import SCENARIOS_DIR

SPEC = {"My.Dyn": {"2.0-RC1": {"sdist_only": True, "sdist_backend": "in-tree",
                               "requires": ["base>=1"], "requires_python": ">=3.10",
                               "extras": {"fast": ["speedup<2"]}}}}


@pytest.mark.skipif(not SCENARIOS_DIR.is_dir(), reason=f"no scenarios at {SCENARIOS_DIR}")
def test_allow_builds_names_the_packages_usable_only_as_sdists_here() -> None:
    """uv builds any sdist not in no_build; pm.allow_builds names just the ones needed."""
    allowed = {s.id: s.allow_builds() for s in applicable_scenarios() if s.allow_builds()}
    override = "requires_python/incompatible-python-compatible-override"
    assert allowed == {
        "local/local-not-used-with-sdist": ["local-not-used-with-sdist-a"],  # 1.2.3: ppc64 wheel
        f"{override}-available-no-wheels":
            ["incompatible-python-compatible-override-available-no-wheels-a"],
        f"{override}-no-compatible-wheels":
            ["incompatible-python-compatible-override-no-compatible-wheels-a"],
        f"{override}-other-wheel": ["incompatible-python-compatible-override-other-wheel-a"],
        f"{override}-unavailable-no-wheels":
            ["incompatible-python-compatible-override-unavailable-no-wheels-a"],
        "wheels/no-binary": ["no-binary-a"],  # no_binary: the wheel is not published
        "wheels/no-wheels": ["no-wheels-a"],
        "wheels/no-wheels-with-matching-platform": ["no-wheels-with-matching-platform-a"],
    }  # wheels/no-wheels-no-build is absent: its no_build keeps pm's default, wheels only


def test_an_in_tree_sdist_publishes_only_name_version_and_requires_python(tmp_path: Path) -> None:
    (record,) = build_packages(tmp_path / "one", SPEC)
    (again,) = build_packages(tmp_path / "two", SPEC)
    assert record.filename == "my_dyn-2.0rc1.tar.gz"
    assert record.path.read_bytes() == again.path.read_bytes()  # same spec, same bytes
    assert metadata_bytes(record.path) == (
        b"Metadata-Version: 2.1\nName: My.Dyn\nVersion: 2.0rc1\nRequires-Python: >=3.10\n")
    served = ServedFile.read(record)
    assert served is not None and served.requires_python == ">=3.10" and served.metadata is None


def test_an_in_tree_sdist_builds_offline_into_a_wheel_with_its_whole_metadata(
    tmp_path: Path,
) -> None:
    build_packages(tmp_path / "dists", SPEC)
    with FindLinksSource(tmp_path / "dists") as source:
        (link,) = source.links(canonicalize_name("my-dyn"))
    uv, python = Uv(tmp_path / "cache" / "uv"), current_target().python
    with SdistBuilder(uv, tmp_path / "cache", python=python, offline=True) as build:
        wheel = build.build(link)
    assert wheel.name == "my_dyn-2.0rc1-py3-none-any.whl"
    assert metadata_bytes(wheel) == (
        b"Metadata-Version: 2.1\nName: My.Dyn\nVersion: 2.0rc1\nRequires-Python: >=3.10\n"
        b"Provides-Extra: fast\nRequires-Dist: base>=1\n"
        b'Requires-Dist: speedup<2; extra == "fast"\n')


def test_an_unknown_sdist_backend_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as caught:
        build_packages(tmp_path, {"x": {"1.0": {"sdist": True, "sdist_backend": "flit"}}})
    assert str(caught.value) == "x 1.0: sdist_backend must be 'setuptools' or 'in-tree', got 'flit'"
