"""The CLI's failures: each names the rule that refused, and maps to an exit code.

Exit codes follow IBM MQ's control commands where one exists (strmqm 5 "running",
crtmqm 8 "exists", 16 "does not exist", endmqm 40 "not available", 72 "name error"),
so scripts written against crtmqm/strmqm/endmqm read them the same way.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any


class Exit(IntEnum):
    OK = 0
    USAGE = 2  # click's own code for a bad option or argument
    RUNNING = 5  # start or delete a queue manager that runs
    EXISTS = 8  # create one that exists
    PORT_IN_USE = 10  # the configured port is taken by another process
    UNKNOWN_QMGR = 16  # no such queue manager under FERRYMQ_HOME
    DAMAGED = 23  # the data directory cannot be read: config or journal (StoreError)
    NOT_RUNNING = 40  # stop one that does not run
    STILL_ENDING = 49  # stop --wait ran out before the server ended
    START_FAILED = 71  # the server process did not come up (see its log)
    NAME_ERROR = 72  # not a valid queue manager name


class CliError(Exception):
    """A refused command: ``rule`` is a stable identifier for scripts, ``code`` the exit code."""

    def __init__(self, code: Exit, rule: str, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.code = code
        self.rule = rule
        self.message = message
        self.fields = fields

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "exit_code": int(self.code), "message": self.message, **self.fields}
