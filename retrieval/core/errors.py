"""The one exception the library raises for bad input, so callers can show it without a traceback."""


class InputError(ValueError):
    """Bad input from a user: the message names the file and line, or the parameter."""
