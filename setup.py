"""Ship the host's bundled memory providers (``plugins/memory/``) inside the wheel.

They live at the top of the repository, beside the packages, so a checkout finds them there; an
installed wheel has no such folder, so the build copies them to ``pm/data/plugins/memory/``, where
:mod:`pm.inputs.discover` looks when the checkout's folder is absent. Everything else is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

_BUNDLED = Path("plugins") / "memory"
_PACKAGED = Path("pm") / "data" / "plugins" / "memory"


class _BuildWithBundledPlugins(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode or not _BUNDLED.is_dir():
            return  # an editable install reads the checkout's folder itself
        target = Path(self.build_lib) / _PACKAGED
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(_BUNDLED, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": _BuildWithBundledPlugins})
