"""The CI files hermes-pm ships for catalog repositories (issue 35, "Ships its CI"): the reusable
action (``action.yml``), the sharded workflow (``docs/ci/catalog-gate.yml``) and the pre-commit
hook (``.pre-commit-hooks.yaml``), run as a runner would: their YAML parsed, their ``run:`` and
``entry:`` commands run in order with the placeholders filled, in fresh clones of a real git
catalog repository, pm installed from this checkout by the action's own install step. And the
docs never tell anyone to ``pip install hermes-pm`` (on PyPI that name is someone else's)."""

from __future__ import annotations

import glob
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from pm.testing import index_from_spec, without_tool_settings
from pm.testing.catalogs import GIT, make_catalog

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
WORKFLOW = yaml.safe_load((ROOT / "docs" / "ci" / "catalog-gate.yml").read_text())
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
_EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def test_no_doc_tells_anyone_to_pip_install_the_bare_name() -> None:
    bare = re.compile(r"pip install(?:\s+-\S+)*\s+[\"']?hermes-pm(?![\w@/-])")
    for doc in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md")),
                ROOT / "action.yml", ROOT / ".pre-commit-hooks.yaml", *sorted((ROOT / "docs").rglob("*.yml"))]:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            assert not bare.search(line), f"{doc.relative_to(ROOT)}:{number}: {line.strip()}"


class Runner:
    """The part of a GitHub runner these files use: jobs in ``needs`` order, a matrix, bash steps
    with ``env``, ``$GITHUB_ENV``/``$GITHUB_OUTPUT``, a composite action, checkout, setup-python and
    artifacts (copied folders)."""

    def __init__(self, work: Path, origin: Path, env: dict[str, str], extra_args: str) -> None:
        self.work, self.origin, self.env, self.extra_args = work, origin, env, extra_args
        self.artifacts = work / "artifacts"
        self.artifacts.mkdir(parents=True)
        self.outcomes: dict[str, list[int]] = {}
        self.artifacts_uploaded: list[str] = []

    def workflow(self, workflow: dict[str, Any]) -> None:
        done: set[str] = set()
        while len(done) < len(workflow["jobs"]):
            for name, job in workflow["jobs"].items():
                needs = job.get("needs", [])
                if name not in done and set([needs] if isinstance(needs, str) else needs) <= done:
                    for cell in self._matrix(job):
                        self._job(name, job, cell)
                    done.add(name)

    @staticmethod
    def _matrix(job: dict[str, Any]) -> list[dict[str, Any]]:
        matrix = job.get("strategy", {}).get("matrix", {})
        return [dict(zip(matrix, values, strict=True)) for values in itertools.product(*matrix.values())] or [{}]

    def _job(self, name: str, job: dict[str, Any], matrix: dict[str, Any]) -> None:
        where = self.work / f"{name}-{'-'.join(map(str, matrix.values())) or 'only'}"
        temp = where / "runner-temp"
        temp.mkdir(parents=True)
        state = {"env": {**self.env, "RUNNER_TEMP": str(temp), "GITHUB_ENV": str(temp / "env")},
                 "workspace": where / "workspace"}
        context = {f"matrix.{k}": str(v) for k, v in matrix.items()}
        for step in job["steps"]:
            uses = step.get("uses", "")
            given = {k: _fill(_text(v), context) for k, v in step.get("with", {}).items()}
            if uses.startswith("actions/checkout@"):
                subprocess.run([*GIT, "clone", "--quiet", str(self.origin), str(state["workspace"])], check=True)
            elif uses.startswith("actions/setup-python@"):
                venv = temp / "python"  # the runner's interpreter: a fresh venv that sees the test's packages
                subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
                site = subprocess.run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                      check=True, capture_output=True, text=True).stdout.strip()
                Path(site, "test-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
                state["env"]["PATH"] = f"{venv / 'bin'}{os.pathsep}{state['env']['PATH']}"
            elif uses.startswith("actions/upload-artifact@"):
                assert (state["workspace"] / given["path"]).is_file(), state.get("logs")
                folder = self.artifacts / given["name"]
                folder.mkdir()
                shutil.copy(state["workspace"] / given["path"], folder)
                self.artifacts_uploaded.append(given["name"])
            elif uses.startswith("actions/download-artifact@"):
                assert given["merge-multiple"] == "true"
                into = state["workspace"] / given["path"]
                into.mkdir(parents=True)
                for folder in sorted(self.artifacts.glob(given["pattern"])):
                    for file in folder.iterdir():
                        shutil.copy(file, into)
            elif uses == "HERMES_PM_REPO@COMMIT":  # the placeholder the maintainer fills: this checkout
                given["args"] = f"{given.get('args', '')} {self.extra_args}"
                code, gate = self.action(given, state)
                self.outcomes.setdefault(name, []).append(gate)
                if code != 0:
                    return  # a failed step ends the job, as on a runner
            else:
                pytest.fail(f"docs/ci/catalog-gate.yml: step {step} is not one this runner knows")

    def action(self, given: dict[str, str], state: dict[str, Any]) -> tuple[int, int]:
        """The composite action's steps: (the last step's exit code, the gate's)."""
        inputs = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()} | given
        missing = [k for k, v in ACTION["inputs"].items() if v.get("required") and k not in given]
        assert not missing, f"required inputs not given: {missing}"
        context = {f"inputs.{k}": v for k, v in inputs.items()}
        code = gate = 0
        for step in ACTION["runs"]["steps"]:
            output = Path(state["env"]["RUNNER_TEMP"]) / "output"
            output.write_text("")
            env = {**state["env"], **_read(Path(state["env"]["GITHUB_ENV"])), "GITHUB_ACTION_PATH": str(ROOT),
                   "GITHUB_OUTPUT": str(output)}
            env |= {k: _fill(str(v), context) for k, v in step.get("env", {}).items()}
            if step["name"].startswith("Install"):  # the runner's own index settings reach pip, not pm
                env |= {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
                env.pop("PIP_CONFIG_FILE", None)
            done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                                  cwd=state["workspace"], env=env, capture_output=True, text=True)
            state.setdefault("logs", []).append(done.stdout + done.stderr)
            code = done.returncode
            if step.get("id") == "check":
                gate = int(_read(output)["exit-code"])
            if code != 0:
                break
        self.logs = state["logs"]
        return code, gate


def _text(value: Any) -> str:
    """A ``with:`` value as the runner hands it to the action (YAML's booleans as ``true``/``false``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _fill(text: str, context: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        assert match[1] in context, f"unknown expression {match[0]!r}"
        return context[match[1]]

    return _EXPRESSION.sub(value, text)


def _read(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


@pytest.fixture(scope="module")
def catalog_repo(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A catalog repository as a maintainer has it: entry files under ``catalog/``, the host's core
    and lock under ``host/``, one commit; each entry a real git repository of its own."""
    root = tmp_path_factory.mktemp("ci")
    made = make_catalog(root, entries=10)
    origin = root / "catalog-repo"
    shutil.copytree(made.folder, origin / "catalog")
    (origin / "host").mkdir()
    (origin / "host" / "pyproject.toml").write_text("[project]\nname = 'host'\ndependencies = ['base']\n")
    (origin / "host" / "pylock.toml").write_text('lock-version = "1.0"\ncreated-by = "test"\n'
                                                 '[[packages]]\nname = "base"\nversion = "1.0"\n')
    for argv in (["init", "--quiet"], ["add", "."], ["commit", "--quiet", "-m", "catalog"]):
        subprocess.run([*GIT, *argv], cwd=origin, check=True)
    with index_from_spec(root / "dists", made.spec) as index:
        env = without_tool_settings(os.environ) | {"HERMES_PM_CACHE_DIR": str(root / "cache"),
                                                   "HERMES_BUNDLED_PLUGINS": str(root / "none")}
        env.pop("HERMES_HOME", None)
        yield made, origin, index, env, root


@pytest.mark.timeout(600)
def test_the_workflow_shards_the_gate_and_its_merge_annotates_every_refused_entry(catalog_repo) -> None:
    made, origin, index, env, root = catalog_repo
    runner = Runner(root / "run", origin, env, f"--index-url {index.url}")
    runner.workflow(WORKFLOW)
    shards = len(WORKFLOW["jobs"]["shard"]["strategy"]["matrix"]["shard"])
    assert len(runner.outcomes["shard"]) == shards and 3 in runner.outcomes["shard"], runner.logs
    assert len(runner.artifacts_uploaded) == shards  # allow-refused: a refused shard still hands its report on
    assert runner.outcomes["merge"] == [3], runner.logs
    merged = runner.logs[-1]
    # what one unsharded run says, in the same words
    whole = subprocess.run([shutil.which("hermes", path=str(Path(sys.executable).parent)) or "hermes", "pm", "catalog",
                            "check", str(origin / "catalog"), "--home", str(_home(root)), "--core",
                            str(origin / "host" / "pyproject.toml"), "--core-lock", str(origin / "host" / "pylock.toml"),
                            "--platform", "linux", "--platform", "macos", "--python-version", "3.13",
                            "--index-url", index.url, "--github"], env=env, capture_output=True, text=True)
    assert whole.returncode == 3, whole.stderr
    assert _annotations(merged) == _annotations(whole.stdout)
    for a, b in made.pairs:
        assert any(a in line and b in line for line in merged.splitlines()), merged
    for name in ("native", *made.trio):
        assert f"title={name} on" in merged or name in merged, merged


def _home(root: Path) -> Path:
    home = root / "bare-home"
    home.mkdir(exist_ok=True)
    return home


def _annotations(text: str) -> list[str]:
    """Where each ::error annotation lands and its title (the file with the checkout's place taken
    out: each job has its own; the sentences are the gate's to word)."""
    lines = [line.split("::")[1] for line in text.splitlines() if line.startswith("::error")]
    return sorted(re.sub(r"file=[^,]*/catalog\b", "file=catalog", line) for line in lines)


@pytest.mark.timeout(300)
def test_the_pre_commit_hook_rechecks_only_the_changed_entry(catalog_repo) -> None:
    made, origin, index, env, root = catalog_repo
    [hook] = [h for h in HOOKS if h["id"] == "hermes-pm-catalog-check"]
    clone = root / "hook-clone"
    subprocess.run([*GIT, "clone", "--quiet", str(origin), str(clone)], check=True)
    home = _home(root)
    env = env | {"HERMES_HOME": str(home)}
    core = ["--core", "host/pyproject.toml", "--core-lock", "host/pylock.toml", "--index-url", index.url]
    bin_dir = Path(sys.executable).parent
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    first = subprocess.run(["hermes", "pm", "catalog", "check", "catalog", *core, "--json"], cwd=clone, env=env,
                           capture_output=True, text=True)
    assert first.returncode == 3, first.stderr
    (clone / "catalog-report.json").write_text(first.stdout)
    # a maintainer moves one entry to a new pin, and commits: pre-commit runs the hook
    from pm.testing.catalogs import recommit

    name = "fine-0"
    commit = recommit(made.repos[name], name, ["base>=1"])
    entry = json.loads((clone / "catalog" / f"{name}.yaml").read_text())
    (clone / "catalog" / f"{name}.yaml").write_text(json.dumps({**entry, "sha": commit}))
    assert re.search(hook["files"], f"catalog/{name}.yaml")
    assert hook["pass_filenames"] is False
    args = ["catalog", *core, "--changed-since", "catalog-report.json", "--json"]
    done = subprocess.run([*hook["entry"].split(), *args], cwd=clone, env=env, capture_output=True, text=True)
    assert done.returncode == 3, done.stderr  # the pairs still collide together
    report = json.loads(done.stdout)
    assert sorted(set(made.repos) - set(report["reused"])) == [name]  # only the changed entry judged alone again
    assert commit in report["pins"][name]
    assert glob.glob(str(clone / "catalog" / "*.yaml"))
