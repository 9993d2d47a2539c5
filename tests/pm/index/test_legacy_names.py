"""Every file name an index serves is read as uv reads it (its ``SourceDistFilename``): legacy
sdist endings, a ``-`` inside the version where only one split reads, and a release whose only
file is such an sdist is told as one pm does not build, never as a release the index lacks."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from pm.cli import main
from pm.env import generations
from pm.index.base import FileLink, split_sdist
from pm.testing import LocalIndex, build_packages
from pm.testing.receipts import assert_valid_receipt
from pm.testing.sdists import backend_sdist


@pytest.mark.parametrize(("filename", "expected"), [
    ("pybbox-0.0.5-alpha.zip", ("pybbox", "0.0.5-alpha")),
    ("foo_lib-1.2.3.tar.gz", ("foo_lib", "1.2.3")),
    ("foo_lib-1.2.3a3.zip", ("foo_lib", "1.2.3a3")),
    ("foo_lib-1.2.3.tar.bz2", ("foo_lib", "1.2.3")),
    ("foo_lib-1.2.3.tar.xz", ("foo_lib", "1.2.3")),
    ("foo_lib-1.2.3.tar.zst", ("foo_lib", "1.2.3")),
    ("foo_lib-1.2.3.tar.lz", ("foo_lib", "1.2.3")),
    ("foo_lib-1.2.3.tar.lzma", ("foo_lib", "1.2.3")),
    ("foo_lib-1.2.3.tar", ("foo_lib", "1.2.3")),
    ("foo_lib-1.2.3.tgz", ("foo_lib", "1.2.3")),
    ("foo_lib-1.2.3.tbz", ("foo_lib", "1.2.3")),
    ("foo_lib-1.2.3.tlz", ("foo_lib", "1.2.3")),
    ("foo_lib-1.2.3.txz", ("foo_lib", "1.2.3")),
    ("Foo.Bar-1.0.tar.gz", ("Foo.Bar", "1.0")),
    ("foo-bar-1.0-beta.2.zip", ("foo-bar", "1.0-beta.2")),
    ("a-1-1.zip", ("a-1", "1")),  # two splits read: the normalized one (the version holds no "-")
    ("foo-1.0-py2.7.egg", None),  # an egg: no distribution uv or pm installs
    ("foo-1.0.exe", None),
    ("foo.zip", None),
    ("-1.0.zip", None),
    ("foo-dev-x.zip", None),
])
def test_sdist_names_split_as_uv_splits_them(filename: str, expected: tuple[str, str] | None) -> None:
    assert split_sdist(filename) == expected


def test_a_legacy_name_becomes_a_link_of_its_project_and_version() -> None:
    link = FileLink("pybbox-0.0.5-alpha.zip", "https://example.invalid/pybbox-0.0.5-alpha.zip")
    assert (link.name, str(link.version), link.is_wheel) == ("pybbox", "0.0.5a0", False)
    assert FileLink.parse("pybbox-0.0.5-py2.7.egg", "https://example.invalid/x.egg") is None


def _repacked(sdist: Path, filename: str) -> Path:
    """``sdist`` (a .tar.gz) as ``filename``: a zip, or a tar compressed as its ending says."""
    target = sdist.with_name(filename)
    with tarfile.open(sdist, "r:gz") as source:
        members = [(m, source.extractfile(m).read() if m.isfile() else b"") for m in source.getmembers()]  # type: ignore[union-attr]
    if filename.endswith(".zip"):
        with zipfile.ZipFile(target, "w") as archive:
            for member, data in members:
                if member.isfile():
                    archive.writestr(member.name, data)
    else:
        mode = {"bz2": "w:bz2", "tgz": "w:gz", "xz": "w:xz"}[filename.rsplit(".", 1)[1]]
        with tarfile.open(target, mode) as archive:
            for member, data in members:
                archive.addfile(member, io.BytesIO(data) if member.isfile() else None)
    sdist.unlink()
    return target


@pytest.fixture
def legacy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """pybbox 0.0.4 (a wheel) and 0.0.5-alpha (only ``pybbox-0.0.5-alpha.zip``, and an egg);
    oldsrc 0.2, only ``oldsrc-0.2.tgz``, which needs helper; bzsrc 1.0, only ``bzsrc-1.0.tar.bz2``."""
    dists = tmp_path / "dists"
    build_packages(dists, {"helper": {"1.0": []}, "pybbox": {"0.0.4": []}})
    _repacked(backend_sdist(dists, "pybbox", "0.0.5a0"), "pybbox-0.0.5-alpha.zip")
    (dists / "pybbox-0.0.5-py2.7.egg").write_bytes(b"not read")
    _repacked(backend_sdist(dists, "oldsrc", "0.2", requires=("helper>=1",)), "oldsrc-0.2.tgz")
    _repacked(backend_sdist(dists, "bzsrc", "1.0"), "bzsrc-1.0.tar.bz2")
    home = tmp_path / "home"
    (home / "plugins/p").mkdir(parents=True)
    (home / "config.yaml").write_text("plugins: {enabled: [p]}\n")
    (tmp_path / "core.toml").write_text("[project]\nname='h'\ndependencies=[]\n")
    (tmp_path / "lock.txt").write_text("")
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "none"))
    with LocalIndex([dists]) as index:
        yield home, ["--home", str(home), "--index-url", index.url, "--core", str(tmp_path / "core.toml"),
                     "--core-lock", str(tmp_path / "lock.txt")]


def test_a_release_whose_only_file_is_a_legacy_zip_is_told_as_needing_a_build(legacy, capsys) -> None:
    home, argv = legacy
    (home / "plugins/p/plugin.yaml").write_text("pip_dependencies: ['pybbox==0.0.5-alpha']\n")
    assert main(["resolve", "--json", *argv]) == 3
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    (finding,) = receipt["conflict"]["findings"]
    assert (finding["kind"], finding["package"]) == ("sdist-only", "pybbox")
    assert receipt["conflict"]["message"] == (
        f"plugin 'p' ({home / 'plugins/p/plugin.yaml'}) requires pybbox==0.0.5-alpha; but pybbox 0.0.5a0 has "
        "only a source distribution for this interpreter, which pm builds only when allowed (add 'pybbox' to "
        "pm.allow_builds in config.yaml, or pass --allow-build pybbox). Plugins involved: 'p'.")


def test_a_release_whose_only_file_is_a_tar_bz2_is_offered_as_an_sdist(legacy, capsys) -> None:
    """uv reads the name too (its own ``uv build`` of a .tar.bz2 fails, 0.13.9: so a build of it
    would end as a build failure naming the file, never as a missing release)."""
    home, argv = legacy
    (home / "plugins/p/plugin.yaml").write_text("pip_dependencies: ['bzsrc>=1']\n")
    assert main(["resolve", "--json", *argv]) == 3
    receipt = json.loads(capsys.readouterr().out)
    assert [(f["kind"], f["package"]) for f in receipt["conflict"]["findings"]] == [("sdist-only", "bzsrc")]


def test_a_legacy_tgz_sdist_is_built_when_allowed(legacy, capsys) -> None:
    home, argv = legacy
    (home / "plugins/p/plugin.yaml").write_text("pip_dependencies: [oldsrc, pybbox]\n")
    assert main(["sync", "--json", *argv, "--allow-build", "oldsrc"]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert_valid_receipt(receipt)
    files = {p["name"]: p["file"]["filename"] for p in receipt["resolution"]["packages"]}
    assert files == {"helper": "helper-1.0-py3-none-any.whl", "oldsrc": "oldsrc-0.2.tgz",
                     "pybbox": "pybbox-0.0.4-py3-none-any.whl"}
    installed = generations.installed_versions(generations.selected(home).site_packages)
    assert {str(n): str(v) for n, v in installed.items()} == {"helper": "1.0", "oldsrc": "0.2", "pybbox": "0.0.4"}
