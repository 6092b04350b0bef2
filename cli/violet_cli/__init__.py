"""The `violet` command."""
