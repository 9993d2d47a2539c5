"""The install scan: every fetched plugin tree is read by a static analyzer before it is placed
(issue 36). Nothing is imported or run: bandit parses each ``.py`` file's syntax tree.

The analyzer is **bandit** (PyCQA; pure Python, its wheel a few hundred kB, one run over every
bundled and example plugin in under 2 s) rather than GuardDog, whose source rules run on semgrep
(a 75 MB wheel holding a 273 MB binary). Bandit knows nothing of credential stores, so pm adds one
rule of its own, ``PM001``: a string naming one (``~/.ssh``, ``.aws/credentials`` …).

Each finding's **verdict** comes from its severity and confidence, by this table; a few rules are
taken at HIGH severity whatever bandit says, because in a plugin — code the agent runs at start —
they are what malware does: ``B102`` exec, ``B307`` eval, ``B602`` and ``B605`` a shell command.

======== ========= ========= =========
severity HIGH conf MEDIUM    LOW
======== ========= ========= =========
HIGH     dangerous dangerous caution
MEDIUM   caution   caution   clean
LOW      clean     clean     clean
======== ========= ========= =========

The tree's verdict is its worst finding's. ``dangerous`` blocks the install (:class:`Dangerous`,
naming file, line and rule); ``caution`` asks, as consent does; ``clean`` passes. bandit missing
(it is the ``scan`` extra) is a ``caution`` that says so: an unscanned tree is never passed silently.
"""

from __future__ import annotations

import ast
import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pm.base.errors import PmError

VERDICTS = ("clean", "caution", "dangerous")
_TABLE = {("HIGH", "HIGH"): "dangerous", ("HIGH", "MEDIUM"): "dangerous", ("HIGH", "LOW"): "caution",
          ("MEDIUM", "HIGH"): "caution", ("MEDIUM", "MEDIUM"): "caution"}
#: Rules taken at HIGH severity in a plugin (module docstring).
RAISED = frozenset({"B102", "B307", "B602", "B605"})
_CREDENTIALS = (".ssh/", "/.ssh", "~/.ssh", ".aws/credentials", ".gnupg", ".netrc", ".docker/config.json",
                ".kube/config", ".git-credentials")


@dataclass(frozen=True)
class Finding:
    file: str  # relative to the scanned tree
    line: int
    rule: str
    severity: str
    confidence: str
    text: str

    @property
    def verdict(self) -> str:
        severity = "HIGH" if self.rule in RAISED else self.severity
        return _TABLE.get((severity, self.confidence), "clean")

    def said(self) -> str:
        return f"{self.file}:{self.line}: {self.rule} ({self.severity}/{self.confidence}): {self.text}"

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "rule": self.rule, "severity": self.severity,
                "confidence": self.confidence, "text": self.text, "verdict": self.verdict}


@dataclass(frozen=True)
class Scan:
    """A tree's scan: its verdict, the findings that made it (clean ones left out) and the analyzer."""

    verdict: str
    findings: tuple[Finding, ...]
    analyzer: str

    def of(self, verdict: str) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.verdict == verdict)

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "analyzer": self.analyzer, "findings": [f.to_json() for f in self.findings]}


class Dangerous(PmError):
    """The install scan found what a plugin must not do (``scan``); nothing was placed."""

    kind = "dangerous-plugin"
    outcome = "refused"

    def __init__(self, name: str, scan: Scan) -> None:
        self.name = name
        self.scan = scan
        told = "; ".join(f.said() for f in scan.of("dangerous"))
        super().__init__(f"plugin {name!r} was not installed: the install scan ({scan.analyzer}) found it dangerous: "
                         f"{told}")


def scan_tree(root: Path) -> Scan:
    """Scan every ``.py`` file under ``root`` (module docstring)."""
    for name in ("bandit", "stevedore"):  # its formatter plugins it cannot load are none of ours
        logging.getLogger(name).setLevel(logging.CRITICAL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stevedore's deprecations, raised inside bandit's loading
        try:
            from bandit import __version__ as bandit_version  # type: ignore[import-untyped]
            from bandit.core import config as bandit_config  # type: ignore[import-untyped]
            from bandit.core import manager as bandit_manager  # type: ignore[import-untyped]
        except ImportError:
            missing = Finding(".", 0, "PM000", "MEDIUM", "HIGH", "not scanned: bandit is not installed "
                              "(pip install bandit into the host's environment, pm's scan extra; or set "
                              "plugins.scan_on_install: false)")
            return Scan("caution", (missing,), "none")
        manager = bandit_manager.BanditManager(bandit_config.BanditConfig(), "file", quiet=True)
        manager.discover_files([str(root)], recursive=True)
        manager.run_tests()
    found = [Finding(_relative(issue.fname, root), issue.lineno, issue.test_id, issue.severity, issue.confidence,
                     issue.text) for issue in manager.get_issue_list()]
    found += _credential_stores(root)
    kept = tuple(sorted((f for f in found if f.verdict != "clean"), key=lambda f: (f.file, f.line, f.rule)))
    verdict = max((f.verdict for f in kept), key=VERDICTS.index, default="clean")
    return Scan(verdict, kept, f"bandit {bandit_version}")


def _relative(name: str, root: Path) -> str:
    try:
        return Path(name).relative_to(root).as_posix()
    except ValueError:
        return name


def _credential_stores(root: Path) -> list[Finding]:
    """``PM001``: string constants naming a credential store (bandit has no such rule)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue  # bandit reports what it cannot parse
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and any(
                    c in node.value for c in _CREDENTIALS):
                found.append(Finding(path.relative_to(root).as_posix(), node.lineno, "PM001", "HIGH", "MEDIUM",
                                     f"names a credential store: {node.value[:60]!r}"))
    return found
