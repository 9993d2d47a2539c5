"""Targets other than this machine: ``--python-version X.Y`` and ``--platform P`` (uv's
``--python-platform`` names), for resolving and exporting what another system would install — a
catalog maintainer on Linux asking about macOS arm64, a Nix build for another system.

Pure: a :class:`~pm.inputs.target.Target` is computed, never probed. Its PEP 508 markers are those of
CPython on that system (``sys_platform``, ``platform_system``, ``platform_machine``, ``os_name``,
the Python versions; ``platform_release`` and ``platform_version`` empty, as uv leaves them), and
its wheel tags are packaging's ``cpython_tags`` + ``compatible_tags`` for the platform tags uv
assumes: manylinux_2_28 down to manylinux_2_5 (and the legacy manylinux2014/2010/1 aliases) on
Linux, macOS 13.0 and older on macOS, ``win_amd64``/``win_arm64`` on Windows. A foreign target
can be resolved and exported; building for it is refused (``Target.foreign``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from pm.base.errors import UsageError
from pm.inputs.target import Target


@dataclass(frozen=True)
class System:
    """One platform as the markers and the wheel tags see it."""

    sys_platform: str
    platform_system: str
    machine: str  # platform_machine
    os_name: str
    family: str  # "manylinux", "macos" or "windows"
    arch: str  # the wheel tags' architecture


_LINUX_X86 = System("linux", "Linux", "x86_64", "posix", "manylinux", "x86_64")
_LINUX_ARM = System("linux", "Linux", "aarch64", "posix", "manylinux", "aarch64")
_MAC_ARM = System("darwin", "Darwin", "arm64", "posix", "macos", "arm64")
_MAC_X86 = System("darwin", "Darwin", "x86_64", "posix", "macos", "x86_64")
_WIN_X86 = System("win32", "Windows", "AMD64", "nt", "windows", "amd64")
_WIN_ARM = System("win32", "Windows", "ARM64", "nt", "windows", "arm64")

#: uv's ``--python-platform`` names (the aliases first).
PLATFORMS: dict[str, System] = {
    "linux": _LINUX_X86, "macos": _MAC_ARM, "windows": _WIN_X86,
    "x86_64-unknown-linux-gnu": _LINUX_X86, "aarch64-unknown-linux-gnu": _LINUX_ARM,
    "x86_64-manylinux_2_28": _LINUX_X86, "aarch64-manylinux_2_28": _LINUX_ARM,
    "aarch64-apple-darwin": _MAC_ARM, "x86_64-apple-darwin": _MAC_X86,
    "x86_64-pc-windows-msvc": _WIN_X86, "aarch64-pc-windows-msvc": _WIN_ARM,
}
_GLIBC_NEWEST = 28  # manylinux_2_28: uv's default for its linux targets
_MACOS = (13, 0)  # the oldest non-EOL macOS, which uv assumes
_LEGACY = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
_VERSION = re.compile(r"3\.(\d+)")


def foreign_target(base: Target, python_version: str | None, platform: str | None) -> Target:
    """``base`` (the running interpreter) moved to ``python_version`` (``3.X``) and/or
    ``platform``; the markers and tags follow. Raises UsageError for a name uv does not have."""
    system = _system(platform) if platform is not None else _system_of(base)
    version = _version(python_version) if python_version is not None else _version(base.python_version)
    markers = dict(base.markers)
    markers.update(sys_platform=system.sys_platform, platform_system=system.platform_system,
                   platform_machine=system.machine, os_name=system.os_name, python_version=f"3.{version}",
                   python_full_version=f"3.{version}.0", implementation_name="cpython",
                   platform_python_implementation="CPython", implementation_version=f"3.{version}.0",
                   platform_release="", platform_version="")
    label = platform or f"{system.sys_platform}-{system.machine}"
    return replace(base, python=f"<python 3.{version} for {label}>", markers=tuple(sorted(markers.items())),
                   platform=label, tags=tags_for(system, version), foreign=True)


def tags_for(system: System, minor: int) -> tuple[str, ...]:
    """CPython 3.``minor``'s wheel tags on ``system``, most preferred first."""
    from packaging.tags import compatible_tags, cpython_tags

    platforms = _platform_tags(system)
    found = [*cpython_tags((3, minor), platforms=platforms), *compatible_tags((3, minor), f"cp3{minor}", platforms)]
    return tuple(dict.fromkeys(str(t) for t in found))


def _platform_tags(system: System) -> list[str]:
    if system.family == "manylinux":
        found = []
        for minor in range(_GLIBC_NEWEST, 4, -1):
            found.append(f"manylinux_2_{minor}_{system.arch}")
            if minor in _LEGACY and not (minor == 5 and system.arch == "aarch64"):
                found.append(f"{_LEGACY[minor]}_{system.arch}")
        return found
    if system.family == "macos":
        from packaging.tags import mac_platforms

        return list(mac_platforms(_MACOS, system.arch))
    return [f"win_{system.arch}"]


def _system(name: str) -> System:
    found = PLATFORMS.get(name.lower())
    if found is None:
        raise UsageError(f"--platform {name!r}: not a platform pm knows; use one of uv's --python-platform names: "
                         f"{', '.join(PLATFORMS)}")
    return found


def _system_of(base: Target) -> System:
    """The running system, as one of :data:`PLATFORMS` (its manylinux policy, not its glibc)."""
    env = base.environment
    machine = env.get("platform_machine", "")
    for system in PLATFORMS.values():
        if system.sys_platform == env.get("sys_platform") and system.machine.lower() == machine.lower():
            return system
    raise UsageError(f"--python-version alone needs a known platform; this one is {env.get('sys_platform')} "
                     f"{machine}: add --platform")


def _version(text: str) -> int:
    match = _VERSION.fullmatch(text.strip())
    if match is None or not 8 <= int(match.group(1)) <= 99:
        raise UsageError(f"--python-version {text!r}: expected 3.X (for example 3.12)")
    return int(match.group(1))
