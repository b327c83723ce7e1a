"""The sequence and column frames need what the MQI call they stand for needs: a handle
this connection opened on the queue, for input to remove (2037 otherwise), for browse to
browse (2036), for inquire, browse or input to read the range and readers (2038). A
refused call changes nothing. Sent here as raw frames, as a hostile client would."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ferrymq.api import EmbeddedQueueManager
from ferrymq.client import Client, MQError, connect
from ferrymq.client import sequence as Q
from ferrymq.mq import constants as C

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def clients(embedded: EmbeddedQueueManager) -> Iterator[Callable[[], Client]]:
    made: list[Client] = []

    def make() -> Client:
        c = connect("QM1", f"127.0.0.1({embedded.port})", timeout=10)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def raw_calls(c: Client) -> dict[str, Callable[[], Any]]:
    """Each sequence frame on Q1, sent without the client's own opening of the queue."""
    return {
        "remove": lambda: Q.removed_result(c._call(Q.remove_request(c._s, "Q1", 1 << 40, "thief"))),
        "browse": lambda: Q.browse_result("Q1", c._call(Q.browse_request(c._s, "Q1", 0, 1 << 40, 0, 0))),
        "columns": lambda: Q.columns_result("Q1", c._call(Q.columns_request(c._s, "Q1", 0, 1 << 40, 0, 0))),
        "range": lambda: Q.range_result(c._call(Q.range_request(c._s, "Q1"))),
        "readers": lambda: Q.readers_result(c._call(Q.readers_request(c._s, "Q1"))),
    }


def reason(call: Callable[[], Any]) -> int:
    try:
        call()
    except MQError as exc:
        assert exc.comp == C.MQCC_FAILED
        return exc.reason
    return 0


NOT_OPEN = {"remove": C.MQRC_NOT_OPEN_FOR_INPUT, "browse": C.MQRC_NOT_OPEN_FOR_BROWSE,
            "columns": C.MQRC_NOT_OPEN_FOR_BROWSE, "range": C.MQRC_NOT_OPEN_FOR_INQUIRE,
            "readers": C.MQRC_NOT_OPEN_FOR_INQUIRE}


def filled(make: Callable[[], Client], n: int = 5) -> Client:
    producer = make()
    with producer.open("Q1", options=C.MQOO_OUTPUT) as q:
        for i in range(n):
            q.put(b"m%d" % i, persistent=True)
    return producer


def test_without_a_handle_every_frame_is_refused_and_nothing_changes(clients: Callable[[], Client]) -> None:
    owner = filled(clients)
    thief = clients()
    assert {name: reason(call) for name, call in raw_calls(thief).items()} == NOT_OPEN
    with owner.open("Q1", options=C.MQOO_INQUIRE | C.MQOO_BROWSE) as q:
        assert q.depth() == 5
        assert owner.reader_positions("Q1") == []  # no reader position was recorded either


def test_a_handle_of_another_connection_does_not_count(clients: Callable[[], Client]) -> None:
    owner = filled(clients)
    with owner.open("Q1", options=C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_INQUIRE) as q:
        thief = clients()
        assert {name: reason(call) for name, call in raw_calls(thief).items()} == NOT_OPEN
        assert q.depth() == 5


def test_each_frame_needs_its_own_open_option(clients: Callable[[], Client]) -> None:
    filled(clients)
    c = clients()
    calls = raw_calls(c)
    with c.open("Q1", options=C.MQOO_OUTPUT | C.MQOO_SET):
        assert {name: reason(call) for name, call in calls.items()} == NOT_OPEN
    with c.open("Q1", options=C.MQOO_INQUIRE):
        assert {name: reason(call) for name, call in calls.items()} == {**NOT_OPEN, "range": 0, "readers": 0}
    with c.open("Q1", options=C.MQOO_BROWSE):
        assert {name: reason(call) for name, call in calls.items()} == {
            "remove": C.MQRC_NOT_OPEN_FOR_INPUT, "browse": 0, "columns": 0, "range": 0, "readers": 0}
        assert reason(calls["remove"]) == C.MQRC_NOT_OPEN_FOR_INPUT
    with c.open("Q1", options=C.MQOO_INPUT_SHARED):
        assert calls["remove"]() == 5
    assert reason(calls["remove"]) == C.MQRC_NOT_OPEN_FOR_INPUT  # closed: refused again


def test_the_client_opens_the_queue_for_its_sequence_calls(clients: Callable[[], Client]) -> None:
    filled(clients)
    c = clients()
    r = c.queue_range("Q1")
    assert [m.data for m in c.browse_range("Q1", r.first_seq, r.last_seq + 1)] == [b"m%d" % i for i in range(5)]
    assert c.browse_columns("Q1", r.first_seq, r.last_seq + 1).columns.count == 5
    assert c.remove_upto("Q1", r.first_seq + 1, "reader") == 2
    assert [p.reader for p in c.reader_positions("Q1")] == ["reader"]
    assert c.queue_range("Q1").depth == 3


def test_a_handle_through_an_alias_counts_for_its_target(embedded: EmbeddedQueueManager,
                                                         clients: Callable[[], Client]) -> None:
    embedded.run(lambda: embedded.qmgr.objects.define("QALIAS", "A1", {"TARGET": "Q1"}))  # type: ignore[union-attr]
    filled(clients)
    c = clients()
    calls = raw_calls(c)
    with c.open("A1", options=C.MQOO_INPUT_SHARED):
        assert calls["remove"]() == 5
    with c.open("Q2", options=C.MQOO_INPUT_SHARED):  # a handle on another queue does not
        assert reason(calls["remove"]) == C.MQRC_NOT_OPEN_FOR_INPUT


def test_the_client_reopens_a_queue_deleted_and_defined_again(clients: Callable[[], Client]) -> None:
    creator, reader = clients(), clients()
    dyn = creator.open("SYSTEM.DEFAULT.MODEL.QUEUE", dynamic_q_name="DYN.SEQ")
    assert dyn.name.strip() == "DYN.SEQ"
    dyn.put(b"first")
    assert reader.queue_range("DYN.SEQ").depth == 1  # the reader's client opened it for inquire
    creator.close()  # a temporary dynamic queue goes with its creator: the reader's handle is stale
    again = clients().open("SYSTEM.DEFAULT.MODEL.QUEUE", dynamic_q_name="DYN.SEQ")
    again.put(b"second")
    again.put(b"third")
    assert reader.queue_range("DYN.SEQ").depth == 2  # refused on the stale handle, reopened once
