"""Floor 1, the base: what every other floor stands on, and which stands on nothing of pm.

- :mod:`~pm.base.errors` — exceptions that carry data; :mod:`~pm.base.names` — plugin names, safe text
- :mod:`~pm.base.files`, :mod:`~pm.base.yamlfile`, :mod:`~pm.base.tomlwriter` — bounded reading of
  the text files pm parses, YAML with line and column, the TOML pm writes
- :mod:`~pm.base.store`, :mod:`~pm.base.lock`, :mod:`~pm.base.cachedir` — atomic writes under
  ``<home>/pm/``, the home's lock, where the cache is
- :mod:`~pm.base.watch`, :mod:`~pm.base.codekey` — what was read (the shortcut's evidence), pm's own
  code as a cache key
- :mod:`~pm.base.uv` — the one place pm runs uv; :mod:`~pm.base.urls`, :mod:`~pm.base.commands` —
  URLs and command lines as pm shows them
"""
