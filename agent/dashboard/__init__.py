"""``hermes dashboard``: the local web app the plugin guide names.

It shows what pm and the host already expose — the selection (member or sitting out, and why, per
home and profile), readiness, the generations, the latest refusal with its partners and proof, a
picture of the selected resolution, and each memory provider's settings panel drawn from its
``config_schema`` — and, with ``--allow-actions``, runs the same operations as the CLI.

- :mod:`.reads` — the data of every page, read through pm's and the host's public functions
- :mod:`.actions` — enable, disable, rollback, a refusal's checked next steps, provider settings
- :mod:`.markup` — escaping and the page layout (every value is escaped once, there)
- :mod:`.pages` — the pages
- :mod:`.graph` — the dependency picture (server-rendered SVG)
- :mod:`.server` — the HTTP server: 127.0.0.1 only, a token on every request, routes
"""
