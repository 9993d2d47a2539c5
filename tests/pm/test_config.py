"""pm.inputs.config: a home's config.yaml read into a HomeConfig, every problem named with file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm.base.errors import ConfigError
from pm.inputs.config import CONFIG_NAME, read_config


def test_a_missing_config_is_an_empty_selection(tmp_path: Path) -> None:
    config = read_config(tmp_path)
    assert (config.enabled, config.disabled, config.memory_provider) == ((), (), None)
    assert config.file == tmp_path / CONFIG_NAME


def test_selection_lists_and_provider(tmp_path: Path) -> None:
    (tmp_path / CONFIG_NAME).write_text("plugins:\n  enabled: [a, tools/b]\n  disabled: [c]\n"
                                        "memory:\n  provider: honcho\nsecurity:\n  allow_lazy_installs: true\n")
    config = read_config(tmp_path)
    assert (config.enabled, config.disabled, config.memory_provider) == (("a", "tools/b"), ("c",), "honcho")
    assert config.allow_lazy_installs is True


def test_a_broken_config_names_file_and_key(tmp_path: Path) -> None:
    (tmp_path / CONFIG_NAME).write_text("plugins:\n  enabled: 7\n")
    with pytest.raises(ConfigError) as caught:
        read_config(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / CONFIG_NAME}: plugins.enabled: ")
