"""InstalledSource over a real virtual environment made by uv."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from pm.index import IndexFailure, InstalledSource
from pm.index.installed import site_packages_of
from pm.testing import build_wheel


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A uv venv with ``app`` 1.0 (requires ``lib>=2``) and ``lib`` 2.1 installed offline."""
    from uv import find_uv_bin

    root = tmp_path_factory.mktemp("installed")
    dists = root / "dists"
    build_wheel(dists, "App", "1.0", requires_dist=["lib>=2", 'extra-thing; extra == "x"'],
                requires_python=">=3.8", provides_extra=["x"])
    build_wheel(dists, "lib", "2.1")
    env = {"PATH": "/usr/bin:/bin", "UV_NO_CONFIG": "1", "UV_PYTHON_DOWNLOADS": "never",
           "UV_CACHE_DIR": str(root / "uv-cache"), "NO_COLOR": "1", "HOME": str(root)}
    uv = str(find_uv_bin())
    venv = root / "venv"
    subprocess.run([uv, "venv", "--python", sys.executable, str(venv)], env=env, check=True,
                   capture_output=True)
    subprocess.run([uv, "pip", "install", "--python", str(venv / "bin" / "python"), "--no-index",
                    "--find-links", str(dists), "app"], env=env, check=True, capture_output=True)
    return venv


def test_installed_distributions_from_the_interpreter(venv: Path) -> None:
    with InstalledSource(venv / "bin" / "python") as source:
        (app,) = source.links(canonicalize_name("app"))
        metadata = source.metadata(app)
        assert set(source.distributions()) == {"app", "lib"}
        assert source.links(canonicalize_name("absent")) == ()
    assert app.filename == "app-1.0-py3-none-any.whl" and app.version == Version("1.0")
    assert app.url.startswith("installed://") and app.url.endswith("/app-1.0.dist-info")
    assert app.sha256 is None and app.requires_python == ">=3.8"
    assert metadata.requires_dist == (
        Requirement("lib>=2"), Requirement('extra-thing; extra == "x"'))
    assert metadata.provides_extra == {"x"}


def test_a_site_packages_folder_gives_the_same_view(venv: Path) -> None:
    (folder,) = site_packages_of(str(venv / "bin" / "python"))
    assert folder.name == "site-packages" and folder.is_relative_to(venv)
    with InstalledSource(folder) as source:
        assert [link.filename for link in source.links(canonicalize_name("lib"))] == [
            "lib-2.1-py3-none-any.whl"]


def test_a_missing_environment_is_an_index_failure(tmp_path: Path) -> None:
    with pytest.raises(IndexFailure) as caught:
        InstalledSource(tmp_path / "nope").links(canonicalize_name("app"))
    assert str(caught.value) == (
        f"{tmp_path / 'nope'}: no such site-packages folder or Python executable")
