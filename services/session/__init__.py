"""The session service."""
