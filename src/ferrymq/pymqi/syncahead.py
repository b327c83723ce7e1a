"""Gets read ahead under syncpoint: the bookkeeping of one pymqi handle.

IBM's client never reads ahead for a get under syncpoint; ferrymq's may, on a handle that
reads ahead (MQOO_READ_AHEAD, or DEFREADA(YES) with MQOO_READ_AHEAD_AS_Q_DEF), because a
message taken into an uncommitted unit of work is safe wherever it is: if the connection
drops, the queue manager backs the unit out and the message is on the queue again. An
MQGET with MQGMO_SYNCPOINT that selects whatever comes first is sent as a GET_AHEAD: the
queue manager takes the application's message and up to ``want() - 1`` more that are
there already into the unit of work, and the next MQGETs are served from them here.

The rules that keep what the application and other consumers see unchanged:

- Before MQCMIT, MQBACK, MQDISC and MQCLOSE, and before any get this handle's messages
  cannot serve (other options, a match by MsgId/CorrelId, a browse), the messages read
  ahead and not handed out go back (RETURN_AHEAD): out of the unit of work, where they
  were on the queue, BackoutCount unchanged. So a commit never commits a message the
  application did not get, and a backout counts a backout only for the ones it did.
- How many to read ahead follows the application's own units: as many as its last unit
  on this handle got (at first 1, then doubling while a unit grows), at most
  ``MAX_AHEAD`` messages and about ``MAX_BYTES``. A program that commits each message
  reads nothing ahead; one that commits every 100 takes 100 in a round trip. What is read
  ahead is what this unit would have got next anyway: other consumers see those messages
  as taken by an uncommitted get, a little earlier than they would have been.
- The queue manager reads ahead only messages it delivers as stored: none with an
  expiry, a confirmation-of-delivery report, properties it must re-form or a lock.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from ferrymq.mq import constants as C

if TYPE_CHECKING:
    from ferrymq.client.message import Message

MAX_AHEAD = 200
"""Most messages one GET_AHEAD takes (the application's included)."""
MAX_BYTES = 256 * 1024
"""About the most data one GET_AHEAD takes."""

NOT_SERVED = (C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT | C.MQGMO_BROWSE_MSG_UNDER_CURSOR
              | C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_LOCK | C.MQGMO_UNLOCK | C.MQGMO_MARK_SKIP_BACKOUT
              | C.MQGMO_LOGICAL_ORDER | C.MQGMO_COMPLETE_MSG | C.MQGMO_ALL_MSGS_AVAILABLE
              | C.MQGMO_ALL_SEGMENTS_AVAILABLE | C.MQGMO_SET_SIGNAL | C.MQGMO_CONVERT
              | C.MQGMO_SYNCPOINT_IF_PERSISTENT | C.MQGMO_NO_SYNCPOINT)
"""Get options messages read ahead cannot serve: each needs the queue manager's decision."""
_POSITIONAL = C.MQMO_MATCH_MSG_SEQ_NUMBER | C.MQMO_MATCH_OFFSET | C.MQMO_MATCH_MSG_TOKEN
_NO_ID = bytes(24)


def serves(options: int, match: int, msg_id: bytes, correl_id: bytes, group_id: bytes) -> bool:
    """Whether a get with these options and match fields takes whatever comes first under
    syncpoint: what messages read ahead can serve."""
    if not options & C.MQGMO_SYNCPOINT or options & NOT_SERVED or match & _POSITIONAL:
        return False
    return not ((match & C.MQMO_MATCH_MSG_ID and msg_id != _NO_ID)
                or (match & C.MQMO_MATCH_CORREL_ID and correl_id != _NO_ID)
                or (match & C.MQMO_MATCH_GROUP_ID and group_id != _NO_ID))


class SyncAhead:
    """One handle's messages read ahead and its count of gets per unit of work."""

    __slots__ = ("buffer", "delivered", "expected", "name", "propctl")

    def __init__(self, name: str = "", propctl: int = C.MQPROP_COMPATIBILITY) -> None:
        self.name = name  # the queue's name as opened, for GMO ResolvedQName
        self.propctl = propctl  # the queue's PROPCTL, for a getter without a message handle
        self.buffer: deque[Message] = deque()  # read ahead, in delivery order, not handed out
        self.expected = 1  # gets on this handle in the last unit of work that got any
        self.delivered = 0  # gets on this handle in the open unit

    def want(self) -> int:
        """How many messages the next GET_AHEAD asks for (the application's included): the
        rest of what the last unit got, or as many again once this one has got as many."""
        done, expected = self.delivered, self.expected
        n = expected - done if done < expected else done
        return max(1, min(MAX_AHEAD, n))

    def take(self) -> Message | None:
        """The next message read ahead (counted as got), or None."""
        if not self.buffer:
            return None
        self.delivered += 1
        return self.buffer.popleft()

    def keep(self, messages: list[Message]) -> None:
        """Messages a GET_AHEAD read ahead, after the application's own."""
        self.buffer.extend(messages)

    def put_back(self, msg: Message) -> None:
        """A message the get did not take (too long for its buffer) stays first."""
        self.buffer.appendleft(msg)
        self.delivered -= 1

    def counted(self) -> None:
        """A get on this handle, in the unit, that the queue manager answered itself."""
        self.delivered += 1

    def to_return(self) -> list[bytes]:
        """The MsgTokens of the messages to return (the buffer is emptied)."""
        tokens = [m.msg_token for m in self.buffer]
        self.buffer.clear()
        return tokens

    def unit_ended(self) -> None:
        """The unit of work ended (its messages returned first): the next one is expected
        to get as many as this one did."""
        if self.delivered:
            self.expected = self.delivered
        self.delivered = 0


__all__ = ["MAX_AHEAD", "MAX_BYTES", "NOT_SERVED", "SyncAhead", "serves"]
