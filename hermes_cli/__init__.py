"""Host helpers under the names the plugin guide uses (``hermes_cli.config``)."""
