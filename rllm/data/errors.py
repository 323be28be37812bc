"""The one exception type for data problems a user can fix (missing file, bad JSON, bad flag)."""


class DataError(Exception):
    """A user-fixable data problem; its message is one line naming the thing and the fix.

    Command-line entry points print it as ``error: <message>`` and exit with status 1, without a
    traceback.
    """
