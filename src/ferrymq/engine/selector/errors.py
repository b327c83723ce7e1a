"""The one error a selection string can raise: IBM's reason code, the position and the rule."""

from __future__ import annotations

from ferrymq.mq import constants as C


class SelectorError(Exception):
    """A refused selection string. ``reason`` is the MQRC to return; ``position`` is 0-based."""

    def __init__(self, message: str, position: int, reason: int = C.MQRC_SELECTOR_SYNTAX_ERROR) -> None:
        super().__init__(f"{message} at position {position}")
        self.reason = reason
        self.position = position
        self.detail = message
