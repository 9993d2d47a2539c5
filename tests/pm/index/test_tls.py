"""pm's HTTP client trusts the certificate authorities ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` name,
as uv and pip do (issue 24, item 8): a real HTTPS index on 127.0.0.1 with a certificate signed by
a CA made here with the ``openssl`` CLI."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest

from pm.cli import main
from pm.index.base import IndexFailure
from pm.index.http import HttpClient
from pm.testing import add_plugin, index_from_spec, make_home

OPENSSL = shutil.which("openssl")
pytestmark = pytest.mark.skipif(OPENSSL is None, reason="no openssl CLI on PATH to make a certificate authority "
                                "(the cryptography package is not a dependency)")


def _openssl(folder: Path, *args: str) -> None:
    subprocess.run([str(OPENSSL), *args], cwd=folder, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def ca(tmp_path_factory) -> Path:
    """A folder with ``ca.pem`` (a CA), ``server.pem``/``server.key`` (127.0.0.1, signed by it)
    and ``certs/`` (the CA under its hash name, what SSL_CERT_DIR needs)."""
    folder = tmp_path_factory.mktemp("ca")
    _openssl(folder, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
             "-days", "2", "-subj", "/CN=pm test CA", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    _openssl(folder, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
             "-subj", "/CN=127.0.0.1")
    (folder / "server.ext").write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                                       "extendedKeyUsage=serverAuth\n")
    _openssl(folder, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.pem", "-days", "2", "-extfile", "server.ext")
    (folder / "certs").mkdir()
    shutil.copy(folder / "ca.pem", folder / "certs" / "ca.pem")
    _openssl(folder, "rehash", "certs")
    return folder


@pytest.fixture
def https_index(ca, tmp_path):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(ca / "server.pem", ca / "server.key")
    with index_from_spec(tmp_path / "dists", {"alpha": {"1.0": []}}, tls=context) as index:
        yield index


@pytest.fixture
def no_ca(monkeypatch, tmp_path):
    """Neither the machine's CA variables nor a proxy: each test says which CA it trusts."""
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
                 "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "empty" / "none.pem"))


def _get(url: str) -> int:
    client = HttpClient(retries=0, timeout=10)
    try:
        return client.get(url).status
    finally:
        client.close()


def test_the_index_is_refused_without_its_ca(https_index, no_ca):
    assert https_index.url.startswith("https://127.0.0.1:")
    with pytest.raises(IndexFailure) as failed:
        _get(https_index.url + "alpha/")
    assert failed.value.detail == ("TLS certificate verification failed (unable to get local issuer certificate); "
                                   "pm trusts the CAs of SSL_CERT_FILE and SSL_CERT_DIR, else the system's")


def test_ssl_cert_file_is_trusted(https_index, ca, no_ca, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(ca / "ca.pem"))
    assert _get(https_index.url + "alpha/") == 200


def test_ssl_cert_dir_is_trusted(https_index, ca, no_ca, monkeypatch):
    monkeypatch.setenv("SSL_CERT_DIR", str(ca / "certs"))
    assert _get(https_index.url + "alpha/") == 200


def test_a_resolution_over_https_with_ssl_cert_file(https_index, ca, no_ca, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SSL_CERT_FILE", str(ca / "ca.pem"))
    monkeypatch.setenv("HERMES_PM_INDEX_URL", https_index.url)
    monkeypatch.setenv("HERMES_PM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(tmp_path / "no-bundled"))
    home = make_home(tmp_path / "home", config={"plugins": {"enabled": ["work"]}})
    add_plugin(home / "plugins", "work", style="pyproject", dependencies=["alpha"])
    (tmp_path / "core.toml").write_text("[project]\nname = 'host'\ndependencies = []\n")
    (tmp_path / "lock.txt").write_text("")
    code = main(["resolve", "--json", "--home", str(home), "--core", str(tmp_path / "core.toml"),
                 "--core-lock", str(tmp_path / "lock.txt")])
    out = capsys.readouterr().out
    assert code == 0, out
    [alpha] = json.loads(out)["resolution"]["packages"]
    assert (alpha["name"], alpha["version"]) == ("alpha", "1.0")
    assert alpha["file"]["url"].startswith(https_index.root)
