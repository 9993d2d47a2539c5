"""Big-pages workload: an index whose pages look like numpy's, grpcio's and pydantic-core's.

Three projects have 5,000-15,000 files each (``numcore`` ~ numpy, ``grpcish`` ~ grpcio with
release candidates and a yanked release, ``corevalid`` ~ pydantic-core exact-pinned by
``modelish`` ~ pydantic), a few more have hundreds to thousands (``jiterish``, ``cryptoish``
with abi3 wheels, ``tokenish``, ``protobufish``, ``yamlish``), and about twenty pure packages
fill an agent-shaped graph. Every binary release has wheels for a window of CPython versions
(cp38..cp313, moving with the release's age, so old releases have no wheel for a new
interpreter) on manylinux x86_64/aarch64/i686/ppc64le/s390x, musllinux, macOS and Windows, plus
PyPy for some, abi3 for others, and an sdist; files carry upload times.

What is real and what shares bytes: every file whose tags a Linux x86_64 CPython (glibc) can
install (the manylinux x86_64 wheel of each CPython, abi3 x86_64 wheels, py3-none-any) is a real
wheel of its own, built by :func:`pm.testing.build_wheel` with that release's metadata, so
whatever either tool pins, downloads or installs is right for any cp38..cp313 target. Every
other file of a release (other platforms, PyPy, the sdist's name aside) is a hard link to the
release's first real wheel: the same bytes and METADATA under another name, which no tool on this
machine downloads. The real wheels of each heavy project's recent releases (the ones resolvers
read here) are padded (stored, incompressible bytes) to sizes below the real projects' (numcore
4 MB, cryptoish 3 MB, grpcish and tokenish 2.5 MB, corevalid 1.5 MB, jiterish 0.3 MB; older
releases stay ~1 kB), so a client that downloads whole wheels for metadata pays for it.

The tree is written once under ``<cache>/big-pages-s<seed>-<spec digest>/`` (``--tree-cache``,
default ``$XDG_CACHE_HOME/hermes-pm-bench`` or ``~/.cache/hermes-pm-bench``) and reused while
the seed and the spec are unchanged (about 20 s and 1.1 GB the first time; a tree of the same
seed built from an older spec is removed then).

The plugin set (5 plugins, like vector, embedding, hosted, database memory providers and an LLM
client) and an exact-pinned core are built so that the answer is unique: every conflict is
between a release and a root requirement or core's lock (``numcore<2`` forces ``vecstore`` down
to 0.5.x; ``hostedmem`` caps ``grpcish<1.67`` and ``protobufish<6`` in every release), so two
correct resolvers that prefer newest versions pin the same set.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from packaging.version import Version
from workloads import Workload

from pm.testing import IndexFile, build_sdist, build_wheel, escape_name, normalize_version

PYTHONS = (8, 9, 10, 11, 12, 13)
X86 = "manylinux_2_17_x86_64.manylinux2014_x86_64"
#: Platforms of a CPython-specific binary release; only ``X86`` is installable here.
PLATFORMS = (
    X86,
    "manylinux_2_17_aarch64.manylinux2014_aarch64",
    "manylinux_2_5_i686.manylinux1_i686.manylinux_2_17_i686.manylinux2014_i686",
    "manylinux_2_17_ppc64le.manylinux2014_ppc64le",
    "manylinux_2_17_s390x.manylinux2014_s390x",
    "musllinux_1_1_x86_64",
    "musllinux_1_1_aarch64",
    "musllinux_1_2_armv7l",
    "macosx_10_9_x86_64",
    "macosx_11_0_arm64",
    "macosx_10_9_universal2",
    "win32",
    "win_amd64",
    "win_arm64",
)
PYPY = ("pp39-pypy39_pp73", "pp310-pypy310_pp73")
PYPY_PLATFORMS = (X86, "manylinux_2_17_aarch64.manylinux2014_aarch64", "macosx_10_9_x86_64",
                  "macosx_11_0_arm64", "win_amd64")
MB = 1024 * 1024
_EPOCH = datetime(2018, 1, 1, 9, 30, tzinfo=UTC)


@dataclass
class Release:
    version: str
    requires: list[str]
    requires_python: str | None
    real: list[str]  # tags built as real wheels (installable on Linux x86_64 CPython)
    linked: list[str]  # tags that share the first real wheel's bytes
    sdist: bool = True
    pad: int = 0  # bytes of padding in each real wheel
    yanked: bool | str = False


@dataclass
class Project:
    name: str
    releases: list[Release] = field(default_factory=list)


def _window(era: float) -> list[int]:
    """CPython minors with wheels for a release of age ``era`` (0 oldest, 1 newest)."""
    low, high = 8 + int(era * 2.99), min(13, 9 + int(era * 4.99))
    return [p for p in PYTHONS if low <= p <= high]


def _cpython(pythons: list[int], pypy: bool) -> tuple[list[str], list[str]]:
    real = [f"cp3{p}-cp3{p}-{X86}" for p in pythons]
    linked = [f"cp3{p}-cp3{p}-{plat}" for p in pythons for plat in PLATFORMS[1:]]
    if 13 in pythons:  # free-threaded builds
        linked += [f"cp313-cp313t-{plat}" for plat in PLATFORMS]
    if pypy:
        linked += [f"{impl}-{plat}" for impl in PYPY for plat in PYPY_PLATFORMS]
    return real, linked


def _abi3(floors: tuple[int, ...]) -> tuple[list[str], list[str]]:
    real = [f"cp3{p}-abi3-{X86}" for p in floors]
    linked = [f"cp3{p}-abi3-{plat}" for p in floors for plat in PLATFORMS[1:]]
    return real, linked


def binary(name: str, versions: list[str], requires: object = (), *, pypy: bool = False,
           abi3: tuple[int, ...] = (), pad: int = 0, padded_from: str = "0") -> Project:
    """A compiled project: per release, CPython (or abi3) wheels on every platform, an sdist;
    the real wheels of releases from ``padded_from`` on padded to ``pad`` bytes."""
    project = Project(name)
    for i, version in enumerate(versions):
        era = i / max(1, len(versions) - 1)
        pythons = _window(era)
        real, linked = _abi3(abi3) if abi3 else _cpython(pythons, pypy)
        reqs = requires(version) if callable(requires) else list(requires)  # type: ignore[arg-type]
        size = pad if Version(version) >= Version(padded_from) else 0
        requires_python = f">=3.{min(abi3) if abi3 else pythons[0]}"
        project.releases.append(Release(version, reqs, requires_python, real, linked, pad=size))
    return project


def pure(name: str, versions: list[str], requires: object = ()) -> Project:
    project = Project(name)
    for version in versions:
        reqs = requires(version) if callable(requires) else list(requires)  # type: ignore[arg-type]
        project.releases.append(Release(version, reqs, ">=3.8", ["py3-none-any"], []))
    return project


def _series(rng: random.Random, major_minors: list[tuple[int, int]], patches: tuple[int, int],
            rc: bool = False) -> list[str]:
    out = []
    for major, minor in major_minors:
        if rc:
            out.append(f"{major}.{minor}.0rc1")
        out += [f"{major}.{minor}.{p}" for p in range(rng.randint(*patches) + 1)]
    return out


def _v(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:3] if part.isdigit())


def projects(seed: int) -> list[Project]:
    """Every project of the workload, deterministic for ``seed``."""
    rng = random.Random(seed)
    numcore_versions = _series(rng, [(1, m) for m in range(13, 27)], (3, 6)) + _series(
        rng, [(2, 0), (2, 1), (2, 2)], (2, 4), rc=True)
    grpc_versions = _series(rng, [(1, m) for m in range(30, 69)], (2, 4), rc=True)
    core_versions = _series(rng, [(2, m) for m in range(28)], (4, 6))
    out = [
        binary("numcore", numcore_versions, pypy=True, pad=4 * MB, padded_from="1.26"),
        binary("grpcish", grpc_versions, pad=int(2.5 * MB), padded_from="1.62"),
        binary("corevalid", core_versions, ["typing-ext>=4.6.0,!=4.7.0"], pypy=True,
               pad=int(1.5 * MB), padded_from="2.21"),
        binary("jiterish", _series(rng, [(0, m) for m in range(1, 9)], (2, 3)), pypy=True,
               pad=MB // 3, padded_from="0.6"),
        binary("cryptoish", _series(rng, [(m, 0) for m in range(38, 45)], (2, 3)),
               ["cffish>=1.12; platform_python_implementation != 'PyPy'"], abi3=(7, 9),
               pad=3 * MB, padded_from="43"),
        binary("tokenish", _series(rng, [(0, m) for m in range(13, 22)], (2, 3)),
               ["hubish>=0.16.4,<1.0"], abi3=(9,), pad=int(2.5 * MB), padded_from="0.19"),
        binary("yamlish", ["5.4.1", "6.0", "6.0.1", "6.0.2"], pad=MB // 2),
        binary("cffish", ["1.15.1", "1.16.0", "1.17.0", "1.17.1"], ["pycparsish"], pad=MB // 2),
        _protobuf(rng),
    ]
    # the newest grpcish below hostedmem's cap is yanked, like a broken upload: both tools must
    # skip it and pin the release before
    below_cap = [r for r in out[1].releases if r.version.startswith("1.66.")]
    below_cap[-1].yanked = "broken aarch64 wheels"
    out += _pure_projects(rng, core_versions)
    return out


def _protobuf(rng: random.Random) -> Project:
    versions = (["3.20.0", "3.20.3"] + _series(rng, [(4, m) for m in range(21, 26)], (2, 3))
                + _series(rng, [(5, m) for m in range(26, 30)], (2, 3))
                + _series(rng, [(6, 30), (6, 31)], (1, 2), rc=True))
    project = Project("protobufish")
    for version in versions:
        real = [f"cp38-abi3-{X86}", "py3-none-any"]
        linked = [f"cp38-abi3-{plat}" for plat in PLATFORMS[1:] if "i686" not in plat]
        project.releases.append(Release(version, [], ">=3.8", real, linked))
    return project


def _pure_projects(rng: random.Random, core_versions: list[str]) -> list[Project]:
    def modelish(version: str) -> list[str]:
        major, minor, patch = _v(version)
        if major == 1:
            return ["typing-ext>=4.2.0"]
        candidates = [v for v in core_versions if _v(v)[1] == min(27, 5 + minor * 2)]
        core = candidates[min(patch, len(candidates) - 1)]
        typing = "typing-ext>=4.12.2" if minor >= 8 else "typing-ext>=4.6.1"
        return ["annotated>=0.4.0", f"corevalid=={core}", typing]

    def vecstore(version: str) -> list[str]:
        common = ["grpcish>=1.58.0", "modelish>=1.9", "tokenish>=0.13.2", "httpish>=0.27.0",
                  "typing-ext>=4.5.0", "protobufish>=4.25", "tqdmish>=4.65"]
        return [*common, "numcore>=2.0" if _v(version) >= (0, 6) else "numcore>=1.22.5,<2.0"]

    def llmsdk(version: str) -> list[str]:
        reqs = ["anyioish>=3.5.0,<5", "distroish>=1.7.0,<2", "httpish>=0.23.0,<1",
                "modelish>=1.9.0,<3", "sniffish", "tqdmish>4", "typing-ext>=4.11,<5"]
        return reqs + (["jiterish>=0.4.0,<1"] if _v(version) >= (1, 40) else [])

    return [
        pure("typing-ext", [f"4.{m}.{p}" for m in range(13) for p in range(3)]),
        pure("annotated", ["0.4.0", "0.5.0", "0.6.0", "0.7.0"]),
        pure("modelish", [f"1.10.{p}" for p in range(18)]
             + _series(rng, [(2, m) for m in range(11)], (2, 3)), modelish),
        pure("idnaish", [f"3.{m}" for m in range(11)]),
        pure("certish", ["2023.5.7", "2023.11.17", "2024.2.2", "2024.8.30", "2024.12.14"]),
        pure("sniffish", ["1.2.0", "1.3.0", "1.3.1"]),
        pure("h11ish", ["0.12.0", "0.13.0", "0.14.0"]),
        pure("httpcoreish", [f"1.0.{p}" for p in range(8)], ["certish", "h11ish>=0.13,<0.15"]),
        pure("anyioish", ["3.6.2", "3.7.1"] + [f"4.{m}.0" for m in range(9)],
             lambda v: ["idnaish>=2.8", "sniffish>=1.1"]
             + (["typing-ext>=4.1"] if v.startswith("4.") else [])),
        pure("httpish", [f"0.{m}.{p}" for m in range(23, 29) for p in range(3)],
             ["anyioish", "certish", "httpcoreish==1.*", "idnaish"]),
        pure("distroish", ["1.7.0", "1.8.0", "1.9.0"]),
        pure("coloramaish", ["0.4.5", "0.4.6"]),
        pure("tqdmish", [f"4.{m}.{p}" for m in range(60, 68) for p in range(3)],
             ["coloramaish; platform_system == 'Windows'"]),
        pure("llmsdk", [f"1.{m}.0" for m in range(60)], llmsdk),
        pure("filelockish", [f"3.{m}.{p}" for m in range(12, 17) for p in range(5)]),
        pure("fsspecish", [f"{y}.{m}.0" for y in (2023, 2024) for m in range(1, 13)]),
        pure("pycparsish", ["2.21", "2.22"]),
        pure("hubish", [f"0.{m}.{p}" for m in range(16, 28) for p in range(4)],
             ["filelockish", "fsspecish>=2023.5.0", "yamlish>=5.1", "tqdmish>=4.42.1",
              "typing-ext>=3.7.4.3"]),
        pure("embedder", [f"{M}.{m}.{p}" for M, m in [(2, 2), (2, 3), (2, 4), (2, 5), (2, 6),
                                                      (2, 7), (3, 0), (3, 1), (3, 2), (3, 3)]
                          for p in range(3)],
             ["numcore", "tokenish>=0.15", "hubish>=0.20.0", "tqdmish"]),
        pure("vecstore", [f"0.{m}.{p}" for m in (4, 5, 6) for p in range(24 if m < 6 else 4)],
             vecstore),
        pure("hostedmem", [f"0.1.{p}" for p in range(100, 141)],
             ["modelish>=2.5", "httpish>=0.27,<0.29", "grpcish>=1.60,<1.67",
              "protobufish>=4.25,<6", "llmsdk>=1.33"]),
        pure("portalockerish", ["2.7.0", "2.8.2", "2.10.1"]),
        pure("urllibish", ["1.26.18", "2.0.7", "2.2.3", "2.3.0"]),
        pure("dbclient", [f"1.{m}.{p}" for m in range(8, 14) for p in range(4)],
             ["grpcish>=1.41.0", "protobufish>=3.20.0", "numcore>=1.21; python_version<'3.12'",
              "numcore>=1.26; python_version>='3.12'", "portalockerish>=2.7.0,<3.0.0",
              "urllibish>=1.26.14,<3", "modelish>=1.10.8", "cryptoish>=42"]),
    ]


#: Core of the big-pages workload: an agent host with exact pins (held below newest releases).
CORE = (
    ["modelish>=2.7", "httpish>=0.27", "typing-ext>=4.12", "yamlish>=6", "tqdmish>=4.66"],
    {"modelish": "2.9.2", "typing-ext": "4.12.2", "annotated": "0.7.0", "httpish": "0.27.2",
     "anyioish": "4.6.0", "certish": "2024.8.30", "httpcoreish": "1.0.5", "h11ish": "0.14.0",
     "idnaish": "3.10", "sniffish": "1.3.1", "yamlish": "6.0.2", "tqdmish": "4.66.2"},
)

PLUGINS: dict[str, list[str]] = {
    "memory-vectors": ["vecstore>=0.4", "numcore>=1.24"],
    "memory-embed": ["embedder>=2.2", "numcore<2"],
    "memory-hosted": ["hostedmem>=0.1.100", "protobufish>=4.25"],
    "memory-db": ["dbclient>=1.8", "cryptoish>=41"],
    "assistant-llm": ["llmsdk>=1.40", "tokenish<0.21"],
}


def workload(seed: int) -> Workload:
    """The plugin set and core (``spec`` is empty: the files come from :func:`tree`)."""
    core_requires, lock = CORE
    lock = dict(lock)
    lock["corevalid"] = _pinned_core(seed, lock["modelish"])
    return Workload("big pages", {}, core_requires, lock, PLUGINS)


def _pinned_core(seed: int, modelish: str) -> str:
    for project in projects(seed):
        if project.name == "modelish":
            release = next(r for r in project.releases if r.version == modelish)
            return next(r.split("==")[1] for r in release.requires if r.startswith("corevalid"))
    raise LookupError("modelish")


def digest(seed: int) -> str:
    """What the tree depends on: the spec (and so the seed), the padding, the builder format."""
    text = repr([(p.name, p.releases) for p in projects(seed)])
    return hashlib.sha256(f"format 1\n{text}".encode()).hexdigest()[:12]


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hermes-pm-bench"


def tree(seed: int, cache: Path | None = None) -> list[IndexFile]:
    """The index files (records with upload times and yanked flags), built once per seed+spec."""
    folder = (cache or default_cache()) / f"big-pages-s{seed}-{digest(seed)}"
    manifest = folder / "manifest.json"
    if not manifest.exists():
        _build(seed, folder)
    return [IndexFile(name, folder / "files" / name, yanked, uploaded)
            for name, yanked, uploaded in json.loads(manifest.read_text())]


def _build(seed: int, folder: Path) -> None:
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
    files = staging / "files"
    files.mkdir()
    pad_bytes = random.Random(seed).randbytes(4 * MB)
    rows: list[tuple[str, bool | str, str]] = []
    for offset, project in enumerate(projects(seed)):
        for i, release in enumerate(project.releases):  # oldest 2018, newest late 2024
            days = offset + i * 2500 // max(1, len(project.releases))
            uploaded = (_EPOCH + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
            for name in _release_files(project.name, release, files, pad_bytes):
                rows.append((name, release.yanked, uploaded))
    (staging / "manifest.json").write_text(json.dumps(rows))
    try:
        staging.rename(folder)
    except OSError:  # another run built it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    for stale in folder.parent.glob(f"big-pages-s{seed}-*"):  # this seed under an older spec
        if stale.name != folder.name and "." not in stale.name:
            shutil.rmtree(stale, ignore_errors=True)


def _release_files(name: str, release: Release, files: Path, pad_bytes: bytes) -> list[str]:
    extra = None
    if release.pad:
        repeats = -(-release.pad // len(pad_bytes))
        extra = {f"{escape_name(name)}/_native.bin": (pad_bytes * repeats)[: release.pad]}
    built = [
        build_wheel(files, name, release.version, requires_dist=release.requires,
                    requires_python=release.requires_python, tag=tag, extra_files=extra)
        for tag in release.real
    ]
    stem = f"{escape_name(name)}-{normalize_version(release.version)}"
    for tag in release.linked:
        os.link(built[0], files / f"{stem}-{tag}.whl")
    names = [p.name for p in built] + [f"{stem}-{tag}.whl" for tag in release.linked]
    if release.sdist:
        names.append(build_sdist(files, name, release.version, requires_dist=release.requires,
                                 requires_python=release.requires_python).name)
    return names


def describe(records: list[IndexFile]) -> str:
    """"N files; the biggest projects: name files, …" for the bench's header line."""
    counts: dict[str, int] = {}
    for record in records:
        counts[record.filename.split("-", 1)[0]] = counts.get(record.filename.split("-", 1)[0],
                                                              0) + 1
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:4]
    return f"{len(records)} files; " + ", ".join(f"{n} {c}" for n, c in top)
