"""The bookkeeping of gets read ahead under syncpoint (ferrymq.pymqi.syncahead): how many to
ask for, what is handed out, what goes back, and which gets may be served."""

from __future__ import annotations

import pytest

from ferrymq.client.message import Message
from ferrymq.mq import constants as C
from ferrymq.pymqi.syncahead import MAX_AHEAD, SyncAhead, serves

NO_ID = bytes(24)
ANY = C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID


def msgs(*seqs: int) -> list[Message]:
    return [Message(b"", b"m%d" % i, msg_token=i.to_bytes(8, "big") + bytes(8)) for i in seqs]


def test_a_first_unit_asks_for_one_then_doubles() -> None:
    sa = SyncAhead()
    asked = []
    for _ in range(40):  # a unit of 40 gets, each asking when nothing is held
        if sa.take() is None:
            n = sa.want()
            asked.append(n)
            sa.counted()  # the application's own message
            sa.keep(msgs(*range(n - 1)))
    assert asked == [1, 1, 2, 4, 8, 16, 32] and sa.delivered == 40


def test_the_next_unit_asks_for_as_many_as_the_last_got() -> None:
    sa = SyncAhead()
    for _ in range(30):
        sa.counted()
    sa.unit_ended()
    assert (sa.expected, sa.delivered, sa.want()) == (30, 0, 30)
    sa.counted()
    sa.keep(msgs(*range(29)))
    for _ in range(29):
        assert sa.take() is not None
    assert sa.want() == 30  # the unit grew past the last: as many again
    sa.unit_ended()
    assert sa.expected == 30


def test_a_unit_without_gets_here_keeps_the_expectation() -> None:
    sa = SyncAhead()
    sa.expected = 12
    sa.unit_ended()
    assert sa.want() == 12


def test_the_window_is_bounded() -> None:
    sa = SyncAhead()
    sa.expected = 10_000
    assert sa.want() == MAX_AHEAD
    sa.expected, sa.delivered = 1, 5_000
    assert sa.want() == MAX_AHEAD


def test_to_return_gives_the_tokens_in_order_and_empties() -> None:
    sa = SyncAhead()
    sa.keep(msgs(4, 5, 6))
    first = sa.take()
    assert first is not None and first.data == b"m4" and sa.delivered == 1
    assert sa.to_return() == [i.to_bytes(8, "big") + bytes(8) for i in (5, 6)]
    assert sa.to_return() == [] and sa.take() is None


def test_a_message_put_back_comes_first_and_is_not_counted() -> None:
    sa = SyncAhead()
    sa.keep(msgs(1, 2))
    m = sa.take()
    assert m is not None
    sa.put_back(m)
    assert sa.delivered == 0
    again = sa.take()
    assert again is m


@pytest.mark.parametrize(("options", "match", "ids", "served"), [
    (C.MQGMO_SYNCPOINT, ANY, (NO_ID, NO_ID, NO_ID), True),
    (C.MQGMO_SYNCPOINT | C.MQGMO_WAIT | C.MQGMO_FAIL_IF_QUIESCING | C.MQGMO_ACCEPT_TRUNCATED_MSG, ANY,
     (NO_ID, NO_ID, NO_ID), True),
    (C.MQGMO_NO_SYNCPOINT, ANY, (NO_ID, NO_ID, NO_ID), False),
    (C.MQGMO_SYNCPOINT_IF_PERSISTENT, ANY, (NO_ID, NO_ID, NO_ID), False),
    (C.MQGMO_SYNCPOINT | C.MQGMO_BROWSE_FIRST, ANY, (NO_ID, NO_ID, NO_ID), False),
    (C.MQGMO_SYNCPOINT | C.MQGMO_MARK_SKIP_BACKOUT, ANY, (NO_ID, NO_ID, NO_ID), False),
    (C.MQGMO_SYNCPOINT | C.MQGMO_CONVERT, ANY, (NO_ID, NO_ID, NO_ID), False),
    (C.MQGMO_SYNCPOINT | C.MQGMO_LOGICAL_ORDER, ANY, (NO_ID, NO_ID, NO_ID), False),
    (C.MQGMO_SYNCPOINT, ANY, (b"x" * 24, NO_ID, NO_ID), False),
    (C.MQGMO_SYNCPOINT, ANY, (NO_ID, b"c" * 24, NO_ID), False),
    (C.MQGMO_SYNCPOINT, C.MQMO_NONE, (b"x" * 24, b"c" * 24, NO_ID), True),  # ids given but not matched
    (C.MQGMO_SYNCPOINT, C.MQMO_MATCH_GROUP_ID, (NO_ID, NO_ID, b"g" * 24), False),
    (C.MQGMO_SYNCPOINT, C.MQMO_MATCH_MSG_TOKEN, (NO_ID, NO_ID, NO_ID), False),
    (C.MQGMO_SYNCPOINT, C.MQMO_MATCH_MSG_SEQ_NUMBER, (NO_ID, NO_ID, NO_ID), False),
])
def test_which_gets_are_served(options: int, match: int, ids: tuple[bytes, bytes, bytes], served: bool) -> None:
    assert serves(options, match, *ids) is served


def test_a_queue_closed_while_a_unit_ends_is_skipped() -> None:
    """A dropped Queue collected while MQCMIT/MQBACK/MQDISC returns read-ahead messages is
    closed by its __del__, which takes its entry out of the connection's sync_ahead: ending
    the unit goes on with the others (it raised "dictionary changed size during iteration")."""
    from ferrymq.pymqi.core import QueueManager

    qm = QueueManager(None)
    ended: list[str] = []

    class Closing(SyncAhead):
        def unit_ended(self) -> None:  # as if a collected Queue's __del__ ran here
            ended.append("closing")
            qm.sync_ahead.pop(2, None)
            super().unit_ended()

    class Ended(SyncAhead):
        def unit_ended(self) -> None:
            ended.append("other")
            super().unit_ended()

    qm.sync_ahead = {1: Closing(), 2: Ended(), 3: Ended()}
    qm._end_unit(None)  # type: ignore[arg-type]  # nothing held: no call reaches the client
    assert ended == ["closing", "other"] and list(qm.sync_ahead) == [1, 3]
