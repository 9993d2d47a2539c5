"""Floor 6, the environments: what pm builds and installs on disk.

- :mod:`~pm.env.build` — one generation from a resolution, with uv; :mod:`~pm.env.generations` —
  immutable environments, one selected; :mod:`~pm.env.leases` — held by running hosts
- :mod:`~pm.env.readiness` — does the selected generation satisfy every declaration right now
- :mod:`~pm.env.managed` — someone else owns the environment: refuse and say how to change it
- :mod:`~pm.env.plugin_install` — ``hermes plugins install``/``remove``: the only writer under
  ``<home>/plugins/``; :mod:`~pm.env.plugin_fetch` — a plugin's source fetched into staging (git at
  a commit, an archive with its sha256, a folder), bounded and checked
"""
