"""Issue 15: the catalog's two supply-chain paths. A git entry installs the pinned commit even
when the repository has moved on; an archive entry is refused, with a receipt, when its sha256
is wrong, a member would land outside the plugin folder (``../``, absolute, a symlink out), or it
unpacks to far more than a plugin."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from agent.cli import main
from pm.base.errors import quote
from pm.testing.receipts import assert_valid_receipt

from .conftest import git, plugin


def home_with(env: Path, entry: dict[str, object]) -> Path:
    catalog = env / "catalog.json"
    catalog.write_text(json.dumps({"entries": [{"name": "honcho", "kind": "memory", **entry}], "removed": []}))
    home = env / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "config.yaml").write_text(f"pm:\n  catalog: {catalog}\n")
    return home


def refused(home: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    receipt = json.loads((home / "pm/receipts/latest.json").read_text())
    assert_valid_receipt(receipt)
    assert (receipt["kind"], receipt["outcome"], receipt["exit_code"]) == ("install", "refused", 1)
    assert sorted(p.name for p in (home / "plugins").iterdir()) == []
    return str(receipt["failure"]["message"])


def test_the_pinned_older_commit_is_installed_not_head(env: Path) -> None:
    repo = env / "repo"
    repo.mkdir()
    git("init", "--quiet", cwd=repo)
    plugin(repo / "providers", "honcho", ["extra-lib>=1"], kind="memory")
    (repo / "providers/honcho/VERSION").write_text("pinned\n")
    git("add", ".", cwd=repo)
    git("commit", "--quiet", "-m", "pinned", cwd=repo)
    pinned = git("rev-parse", "HEAD", cwd=repo)
    for n in (2, 3):
        (repo / "providers/honcho/VERSION").write_text(f"later {n}\n")
        git("commit", "--quiet", "-am", f"later {n}", cwd=repo)
    home = home_with(env, {"subdir": "providers/honcho", "source": {"git": str(repo), "commit": pinned}})
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 0
    assert (home / "plugins/honcho/VERSION").read_text() == "pinned\n"
    provenance = json.loads((home / "plugins/.install-metadata.json").read_text())["honcho"]
    assert provenance["commit"] == pinned


def tar_with(path: Path, members: list[tuple[tarfile.TarInfo, bytes]], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tf:
        for info, data in members:
            info.size = len(data) if info.type == tarfile.REGTYPE else 0
            tf.addfile(info, io.BytesIO(data) if info.type == tarfile.REGTYPE else None)
    return path


def file_info(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def link_info(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


MANIFEST = (file_info("honcho/plugin.yaml"), b"name: honcho\nkind: memory\npip_dependencies: []\n")


def archive_entry(path: Path) -> dict[str, object]:
    return {"subdir": "honcho", "source": {"archive": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}}


def test_a_good_archive_installs(env: Path) -> None:
    home = home_with(env, archive_entry(tar_with(env / "good.tar.gz", [MANIFEST])))
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 0
    assert (home / "plugins/honcho/plugin.yaml").is_file()


def test_an_archive_with_the_wrong_sha256_is_refused(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tar_with(env / "good.tar.gz", [MANIFEST])
    home = home_with(env, {"subdir": "honcho", "source": {"archive": str(path), "sha256": "0" * 64}})
    assert "does not match the catalog's " + "0" * 64 in refused(home, capsys)


@pytest.mark.parametrize(("member", "detail"), [
    ((file_info("../evil.py"), b"x"), "archive member '../evil.py' would escape"),
    ((file_info("/tmp/evil.py"), b"x"), "archive member '/tmp/evil.py' would escape"),
    ((link_info("honcho/out", "/etc/passwd"), b""), "'honcho/out' would escape the plugin folder"),
    ((link_info("honcho/up", "../../../../outside"), b""), "'honcho/up' would escape the plugin folder"),
])
def test_a_tar_member_escaping_the_folder_is_refused(env: Path, capsys: pytest.CaptureFixture[str],
                                                     member: tuple[tarfile.TarInfo, bytes], detail: str) -> None:
    home = home_with(env, archive_entry(tar_with(env / "bad.tar.gz", [MANIFEST, member])))
    assert detail in refused(home, capsys)
    assert not (env / "evil.py").exists()


def test_a_zip_member_escaping_the_folder_is_refused(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = env / "bad.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("honcho/plugin.yaml", MANIFEST[1])
        zf.writestr("../evil.py", b"x")
    home = home_with(env, archive_entry(path))
    assert "archive member '../evil.py' would escape" in refused(home, capsys)


def test_a_decompression_bomb_is_refused_before_it_is_inflated(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = env / "bomb.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        info = file_info("honcho/plugin.yaml")
        info.size = len(MANIFEST[1])
        tf.addfile(info, io.BytesIO(MANIFEST[1]))
        big = file_info("honcho/zeros.bin")
        big.size = 1 << 30
        tf.addfile(big, _Zeros(big.size))
    assert path.stat().st_size < 5 << 20
    home = home_with(env, archive_entry(path))
    assert "unpacks to more than 20000 members or 268435456 bytes; refused" in refused(home, capsys)


class _Zeros(io.RawIOBase):
    """``size`` zero bytes, read without holding them."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


@pytest.mark.parametrize("url", ["--upload-pack=touch {marker}", "-cprotocol.file.allow=always"])
def test_a_git_url_that_starts_with_a_dash_is_refused(env: Path, url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34: git is given `--` before every URL, and a URL that starts with `-` is refused
    before git runs, in a catalog entry and in `plugins install git+URL@COMMIT`."""
    marker = env / "ran"
    url = url.format(marker=marker)
    home = home_with(env, {"source": {"git": url, "commit": "a" * 40}})
    assert main(["plugins", "install", "honcho", "--home", str(home)]) == 1
    assert (f"{env / 'catalog.json'}: entries[0].source.git: must be a repository URL (not starting with '-'), "
            f"got {quote(url)}") in capsys.readouterr().err
    (env / "catalog.json").write_text(json.dumps({"entries": [], "removed": []}))
    assert main(["plugins", "install", f"git+{url}@{'a' * 40}", "--home", str(home)]) == 1
    assert (f"{quote(url)}: a git URL cannot start with '-' (git would read it as an option); refused"
            in capsys.readouterr().err)
    assert json.loads((home / "pm/receipts/latest.json").read_text())["outcome"] == "refused"
    assert not marker.exists() and sorted(p.name for p in (home / "plugins").iterdir()) == []
