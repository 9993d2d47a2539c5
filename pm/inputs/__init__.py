"""Floor 3, the inputs: everything a resolution is asked for, read from the home and its files.

- :mod:`~pm.inputs.config`, :mod:`~pm.inputs.config_edit` — ``config.yaml`` read and edited in place
- :mod:`~pm.inputs.settings`, :mod:`~pm.inputs.index_settings`, :mod:`~pm.inputs.tool_files` —
  flag > environment > config > default; index settings from uv's and pip's files too
- :mod:`~pm.inputs.manifest`, :mod:`~pm.inputs.declaration` — what a plugin root says it needs
- :mod:`~pm.inputs.discover`, :mod:`~pm.inputs.plugin`, :mod:`~pm.inputs.selection` — plugin roots,
  precedence, which are members and why the others are not
- :mod:`~pm.inputs.core`, :mod:`~pm.inputs.target`, :mod:`~pm.inputs.foreign` — the host's
  requirements and lock; the interpreter built for, or another system's
- :mod:`~pm.inputs.union` — core + members with origins, and the input fingerprint
- :mod:`~pm.inputs.catalog`, :mod:`~pm.inputs.catalog_live` — reviewed, pinned plugins
- :mod:`~pm.inputs.collect` — one gathering step: settings, target, core, selection, union
"""
