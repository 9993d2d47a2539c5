"""Floor 5, the records: what an operation keeps and hands on, as values and files.

- :mod:`~pm.records.receipt`, :mod:`~pm.records.sections` — the receipt, and resolutions, conflicts
  and next steps as its sections
- :mod:`~pm.records.reuse` — resolutions and refusals kept for the same inputs over the same pages
- :mod:`~pm.records.frozen`, :mod:`~pm.records.pylock`, :mod:`~pm.records.recheck` — a receipt,
  generation or lock read back into the files to install; metadata checked against the wheel
- :mod:`~pm.records.export` — a resolution as ``pylock.toml``, hashed pins or Nix
"""
