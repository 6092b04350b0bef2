"""The failure of something a service cannot work without, told in plain words."""


class DependencyUnavailable(RuntimeError):
    """A server the process depends on cannot be used (unreachable, refusing, mismatched). The
    message names it and says what to check; a service that meets one at start prints that
    message and exits, without a traceback."""
