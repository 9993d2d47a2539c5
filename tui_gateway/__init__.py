"""The Desktop/TUI gateway side the plugin guide names (``tui_gateway/session_workdir.py``)."""
