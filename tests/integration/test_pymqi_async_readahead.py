"""pymqi programs' asynchronous puts (MQPMO_ASYNC_RESPONSE, DEFPRESP), MQSTAT, and read-ahead
gets (MQOO_READ_AHEAD, DEFREADA) over TCP on 127.0.0.1, by IBM's rules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQC

ASYNC = CMQC.MQPMO_ASYNC_RESPONSE | CMQC.MQPMO_NO_SYNCPOINT


@pytest.fixture
def queues(embedded: EmbeddedQueueManager) -> EmbeddedQueueManager:
    def define() -> None:
        assert embedded.qmgr is not None
        objects = embedded.qmgr.objects
        objects.define("QLOCAL", "INHIBITED", {"PUT": C.MQQA_PUT_INHIBITED})
        objects.define("QLOCAL", "ASYNC.INHIBITED", {"PUT": C.MQQA_PUT_INHIBITED,
                                                     "DEFPRESP": C.MQPRT_ASYNC_RESPONSE})
        objects.define("QLOCAL", "READA.YES", {"DEFREADA": C.MQREADA_YES})
        objects.define("QLOCAL", "READA.DISABLED", {"DEFREADA": C.MQREADA_DISABLED})
        for name, propctl in (("PROPS.COMPAT", C.MQPROP_COMPATIBILITY), ("PROPS.ALL", C.MQPROP_ALL),
                              ("PROPS.NONE", C.MQPROP_NONE)):
            objects.define("QLOCAL", name, {"PROPCTL": propctl})
    embedded.run(define)
    return embedded


@pytest.fixture
def qmgr(queues: EmbeddedQueueManager) -> Iterator[pymqi.QueueManager]:
    qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", f"127.0.0.1({queues.port})")
    yield qm
    if qm.is_connected:
        qm.disconnect()


def other(queues: EmbeddedQueueManager) -> pymqi.QueueManager:
    return pymqi.connect("QM1", "DEV.APP.SVRCONN", f"127.0.0.1({queues.port})")


def drain(qmgr: pymqi.QueueManager, name: str) -> list[bytes]:
    q = pymqi.Queue(qmgr, name, CMQC.MQOO_INPUT_SHARED)
    got = []
    while True:
        try:
            got.append(q.get(None, pymqi.MD()))
        except pymqi.MQMIError as exc:
            assert exc.reason == CMQC.MQRC_NO_MSG_AVAILABLE
            q.close()
            return got


# -- asynchronous puts -----------------------------------------------------------------------

def test_async_put_returns_the_msg_id_the_message_then_has(qmgr: pymqi.QueueManager) -> None:
    q = pymqi.Queue(qmgr, "Q1", CMQC.MQOO_OUTPUT)
    pmo = pymqi.PMO(Options=ASYNC | CMQC.MQPMO_NEW_MSG_ID)
    md = pymqi.MD()
    ids = []
    for i in range(5):
        q.put(b"m%d" % i, md, pmo)  # one MD for every put: MQPMO_NEW_MSG_ID gives each its own
        ids.append(md.MsgId)
    assert len(set(ids)) == 5 and all(len(i) == 24 and i != CMQC.MQMI_NONE for i in ids)
    sts = qmgr.stat()
    assert (sts.CompCode, sts.Reason, sts.PutSuccessCount, sts.PutFailureCount) == (CMQC.MQCC_OK, 0, 5, 0)
    r = pymqi.Queue(qmgr, "Q1", CMQC.MQOO_INPUT_SHARED)
    for i, msg_id in enumerate(ids):
        md = pymqi.MD()
        assert r.get(None, md) == b"m%d" % i
        assert md.MsgId == msg_id


def test_async_put_failure_is_reported_by_mqstat(qmgr: pymqi.QueueManager) -> None:
    q = pymqi.Queue(qmgr, "INHIBITED", CMQC.MQOO_OUTPUT)
    q.put(b"refused later", pymqi.MD(), pymqi.PMO(Options=ASYNC))  # returns at once: no error here
    q.put(b"refused too", pymqi.MD(), pymqi.PMO(Options=ASYNC))
    sts = qmgr.stat()
    assert (sts.CompCode, sts.Reason) == (CMQC.MQCC_FAILED, CMQC.MQRC_PUT_INHIBITED)
    assert (sts.PutSuccessCount, sts.PutFailureCount) == (0, 2)
    again = qmgr.stat()  # MQSTAT resets what it reported
    assert (again.CompCode, again.Reason, again.PutFailureCount) == (CMQC.MQCC_OK, CMQC.MQRC_NONE, 0)
    with pytest.raises(pymqi.MQMIError) as info:  # MQPMO_SYNC_RESPONSE waits and fails at once
        q.put(b"now", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_SYNC_RESPONSE))
    assert info.value.reason == CMQC.MQRC_PUT_INHIBITED


def test_response_as_q_def_follows_defpresp(qmgr: pymqi.QueueManager) -> None:
    asy = pymqi.Queue(qmgr, "ASYNC.INHIBITED", CMQC.MQOO_OUTPUT)
    asy.put(b"DEFPRESP(ASYNC): no wait")  # the default PMO: MQPMO_RESPONSE_AS_Q_DEF
    qmgr.put1(pymqi.OD(ObjectName=b"ASYNC.INHIBITED"), b"and put1 too")
    sts = qmgr.stat()
    assert (sts.Reason, sts.PutFailureCount) == (CMQC.MQRC_PUT_INHIBITED, 2)
    syn = pymqi.Queue(qmgr, "INHIBITED", CMQC.MQOO_OUTPUT)
    with pytest.raises(pymqi.MQMIError) as info:  # DEFPRESP(SYNC), the default
        syn.put(b"DEFPRESP(SYNC)")
    assert info.value.reason == CMQC.MQRC_PUT_INHIBITED


def test_async_put1_writes_the_msg_id(qmgr: pymqi.QueueManager) -> None:
    md = pymqi.MD()
    qmgr.put1("Q2", b"one", md, pymqi.PMO(Options=ASYNC))
    assert md.MsgId != CMQC.MQMI_NONE
    got = pymqi.MD()
    assert pymqi.Queue(qmgr, "Q2", CMQC.MQOO_INPUT_SHARED).get(None, got) == b"one"
    assert got.MsgId == md.MsgId


def test_buffered_puts_leave_before_commit_and_disconnect(qmgr: pymqi.QueueManager,
                                                          queues: EmbeddedQueueManager) -> None:
    q = pymqi.Queue(qmgr, "Q3", CMQC.MQOO_OUTPUT)
    uow = pymqi.PMO(Options=CMQC.MQPMO_ASYNC_RESPONSE | CMQC.MQPMO_SYNCPOINT)
    for i in range(3):
        q.put(b"uow%d" % i, pymqi.MD(), uow)
    qmgr.commit()
    watcher = other(queues)
    assert drain(watcher, "Q3") == [b"uow0", b"uow1", b"uow2"]
    for i in range(2):
        q.put(b"last%d" % i, pymqi.MD(), pymqi.PMO(Options=ASYNC))
    q.close()
    qmgr.disconnect()
    assert drain(watcher, "Q3") == [b"last0", b"last1"]
    watcher.disconnect()


# -- read-ahead ------------------------------------------------------------------------------

def put_n(qmgr: pymqi.QueueManager, name: str, n: int) -> None:
    q = pymqi.Queue(qmgr, name, CMQC.MQOO_OUTPUT)
    for i in range(n):
        q.put(b"%03d" % i, pymqi.MD(Persistence=CMQC.MQPER_NOT_PERSISTENT))
    q.close()


def test_read_ahead_delivers_in_order_and_quiesce_keeps_what_was_pushed(qmgr: pymqi.QueueManager) -> None:
    put_n(qmgr, "Q1", 20)
    q = pymqi.Queue(qmgr, "Q1", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_READ_AHEAD)
    got = [q.get(None, pymqi.MD()) for _ in range(5)]
    with pytest.raises(pymqi.MQMIError) as info:  # messages pushed ahead: the handle stays open
        q.close(CMQC.MQCO_QUIESCE)
    assert (info.value.comp, info.value.reason) == (CMQC.MQCC_WARNING, CMQC.MQRC_READ_AHEAD_MSGS)
    while True:
        try:
            got.append(q.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_WAIT)))
        except pymqi.MQMIError as exc:
            assert exc.reason == CMQC.MQRC_NO_MSG_AVAILABLE
            break
    q.close(CMQC.MQCO_QUIESCE)
    assert got == [b"%03d" % i for i in range(20)]


def test_persistent_messages_between_pushed_ones_keep_their_order(qmgr: pymqi.QueueManager) -> None:
    q = pymqi.Queue(qmgr, "Q2", CMQC.MQOO_OUTPUT)
    for i in range(6):
        q.put(b"%d" % i, pymqi.MD(Persistence=CMQC.MQPER_PERSISTENT if i % 3 == 1 else CMQC.MQPER_NOT_PERSISTENT))
    r = pymqi.Queue(qmgr, "Q2", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_READ_AHEAD)
    mds = [pymqi.MD() for _ in range(6)]
    assert [r.get(None, md) for md in mds] == [b"%d" % i for i in range(6)]
    assert [md.Persistence for md in mds] == [0, 1, 0, 0, 1, 0]


def test_defreada_decides_for_read_ahead_as_q_def(qmgr: pymqi.QueueManager) -> None:
    for name, reads_ahead in (("READA.YES", True), ("Q3", False)):
        put_n(qmgr, name, 3)
        q = pymqi.Queue(qmgr, name, CMQC.MQOO_INPUT_SHARED)  # MQOO_READ_AHEAD_AS_Q_DEF
        assert q.get(None, pymqi.MD()) == b"000"
        if reads_ahead:
            with pytest.raises(pymqi.MQMIError) as info:
                q.close(CMQC.MQCO_QUIESCE)
            assert info.value.reason == CMQC.MQRC_READ_AHEAD_MSGS
            assert [q.get(), q.get()] == [b"001", b"002"]
        q.close(CMQC.MQCO_QUIESCE)
        if not reads_ahead:
            assert drain(qmgr, name) == [b"001", b"002"]


def test_defreada_disabled_refuses_mqoo_read_ahead(qmgr: pymqi.QueueManager) -> None:
    put_n(qmgr, "READA.DISABLED", 3)
    q = pymqi.Queue(qmgr, "READA.DISABLED", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_READ_AHEAD)
    assert q.get() == b"000"
    q.close(CMQC.MQCO_QUIESCE)  # nothing was pushed ahead
    assert drain(qmgr, "READA.DISABLED") == [b"001", b"002"]


def test_options_read_ahead_cannot_serve(qmgr: pymqi.QueueManager) -> None:
    put_n(qmgr, "Q1", 4)
    q = pymqi.Queue(qmgr, "Q1", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_READ_AHEAD)
    assert q.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT)) == b"000"
    with pytest.raises(pymqi.MQMIError) as info:  # not permitted after the first get
        q.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_SYNCPOINT))
    assert info.value.reason == CMQC.MQRC_OPTIONS_ERROR
    with pytest.raises(pymqi.MQMIError) as info:  # fixed by the first get
        q.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT | CMQC.MQGMO_ACCEPT_TRUNCATED_MSG))
    assert info.value.reason == CMQC.MQRC_OPTIONS_CHANGED
    assert q.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT)) == b"001"
    q.close()


def test_a_first_get_under_syncpoint_turns_read_ahead_off(qmgr: pymqi.QueueManager) -> None:
    put_n(qmgr, "Q1", 3)
    q = pymqi.Queue(qmgr, "Q1", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_READ_AHEAD)
    assert q.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_SYNCPOINT)) == b"000"
    qmgr.backout()
    assert q.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT)) == b"000"
    q.close(CMQC.MQCO_QUIESCE)  # nothing pushed: every get went to the queue manager
    assert drain(qmgr, "Q1") == [b"001", b"002"]


def test_a_pushed_message_longer_than_the_buffer_stays_first(qmgr: pymqi.QueueManager) -> None:
    q = pymqi.Queue(qmgr, "Q2", CMQC.MQOO_OUTPUT)
    q.put(b"x" * 100, pymqi.MD(Persistence=CMQC.MQPER_NOT_PERSISTENT))
    q.put(b"short", pymqi.MD(Persistence=CMQC.MQPER_NOT_PERSISTENT))
    r = pymqi.Queue(qmgr, "Q2", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_READ_AHEAD)
    md = pymqi.MD()
    with pytest.raises(pymqi.MQMIError) as info:
        r.get(10, md)
    assert info.value.reason == CMQC.MQRC_TRUNCATED_MSG_FAILED
    assert info.value.original_length == 100  # type: ignore[attr-defined]
    assert info.value.message == b"x" * 10  # type: ignore[attr-defined]
    assert r.get(None, pymqi.MD()) == b"x" * 100
    assert r.get(None, pymqi.MD()) == b"short"


def test_a_get_by_correl_id_on_a_read_ahead_handle_asks_the_queue_manager(qmgr: pymqi.QueueManager) -> None:
    q = pymqi.Queue(qmgr, "Q3", CMQC.MQOO_OUTPUT)
    for i in range(3):
        q.put(b"%d" % i, pymqi.MD(CorrelId=b"C%d" % i, Persistence=CMQC.MQPER_NOT_PERSISTENT))
    r = pymqi.Queue(qmgr, "Q3", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_READ_AHEAD)
    gmo = pymqi.GMO(MatchOptions=CMQC.MQMO_MATCH_CORREL_ID)
    assert r.get(None, pymqi.MD(CorrelId=b"C2"), gmo) == b"2"
    r.close()
    assert drain(qmgr, "Q3") == [b"0", b"1"]


def test_a_reconnecting_connection_does_not_read_ahead(qmgr: pymqi.QueueManager,
                                                       queues: EmbeddedQueueManager) -> None:
    put_n(qmgr, "Q1", 3)
    rc = pymqi.QueueManager(None)
    rc.connect_with_options("QM1", cd=pymqi.CD(ConnectionName=f"127.0.0.1({queues.port})".encode()),
                            opts=CMQC.MQCNO_RECONNECT)
    q = pymqi.Queue(rc, "Q1", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_READ_AHEAD)
    assert q.get() == b"000"
    q.close(CMQC.MQCO_QUIESCE)  # nothing was pushed ahead
    rc.disconnect()
    assert drain(qmgr, "Q1") == [b"001", b"002"]


@pytest.mark.parametrize("queue", ["PROPS.COMPAT", "PROPS.ALL", "PROPS.NONE"])
@pytest.mark.parametrize("props", [{"colour": "red"}, {"other.x": 1}])
def test_a_pushed_message_brings_its_properties_as_its_queue_says(qmgr: pymqi.QueueManager,
                                                                  queues: EmbeddedQueueManager, queue: str,
                                                                  props: dict[str, object]) -> None:
    import ferrymq.client as fc

    with fc.connect("QM1", f"127.0.0.1({queues.port})") as c:
        q = c.open(queue)
        for _ in range(2):
            q.put(b"body", persistent=False, properties=props)
    got = []
    for options in (CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_NO_READ_AHEAD, CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_READ_AHEAD):
        r = pymqi.Queue(qmgr, queue, options)
        md = pymqi.MD()
        got.append((r.get(None, md), md.Format))
        r.close()
    assert got[0] == got[1]  # read ahead or not, a getter without a handle receives the same
    assert got[0][1] == (CMQC.MQFMT_RF_HEADER_2 if queue == "PROPS.ALL" or (
        queue == "PROPS.COMPAT" and "colour" in props) else CMQC.MQFMT_NONE)
