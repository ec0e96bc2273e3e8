"""HarnessError: the one kind of failure the harness reports to a user.

Every message is one line that says what went wrong and names the fix, so the
CLI can print it without a traceback and CI logs stay greppable.
"""

from __future__ import annotations


class HarnessError(RuntimeError):
    """A failure with a one-line, actionable message (what happened; how to fix it)."""

    def __init__(self, message: str, *, detail: str = "") -> None:
        super().__init__(message)
        #: Extra context (a log tail, a command's stderr) printed under the message.
        self.detail = detail
