"""Publish/subscribe through the clients, at a queue manager listening on 127.0.0.1 port 0:
the blocking and asyncio Pythonic clients, pymqi's Topic and Subscription, a durable
subscription resumed after the client reconnects, a non-durable one ended by its lost
connection, and the queue manager's reason codes reaching each client as they are."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal
from ferrymq.store.memory import MemoryJournal

sys.path.insert(0, str(Path(__file__).parent))
from tcp_proxy import TcpProxy


@pytest.fixture
def embedded() -> Iterator[EmbeddedQueueManager]:
    emb = EmbeddedQueueManager("QM1", MemoryJournal(), listen=True, port=0)
    emb.start()
    yield emb
    emb.stop()


def addr(emb: EmbeddedQueueManager) -> str:
    return f"127.0.0.1({emb.port})"


def subscriptions(emb: EmbeddedQueueManager) -> dict[str, bool]:
    """The queue manager's subscriptions: name (or SUBID) -> durable."""
    assert emb.qmgr is not None
    registry = emb.qmgr.subscriptions
    return emb.run(lambda: {s.key: s.durable for s in registry})


def test_publish_and_subscribe_with_the_blocking_client(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded)) as sub_c, fc.connect("QM1", addr(embedded)) as pub_c:
        with sub_c.subscribe("sports/+/results") as sub:
            assert sub.topic == "sports/+/results" and not sub.durable
            pub_c.publish("sports/football/results", b"2-1", properties={"league": "one"})
            pub_c.publish("sports/football/fixtures", b"not for us")
            pub_c.publish("sports/tennis/results", "6-4 6-3")
            got = list(sub.messages(wait=0.5))
        assert [m.data for m in got] == [b"2-1", b"6-4 6-3"]
        assert got[0].properties["league"] == "one"
        assert subscriptions(embedded) == {}  # a non-durable subscription ends at close


def test_a_topic_opened_for_publishing_and_a_retained_publication(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded)) as c:
        topic = c.open_topic("prices/IBM")
        assert topic.name == "prices/IBM"
        topic.put(b"141.5", options=C.MQPMO_RETAIN)
        with c.subscribe("prices/#") as sub:  # a retained publication reaches a new subscriber
            assert sub.get(wait=5.0).data == b"141.5"
        with c.subscribe("prices/#", new_only=True) as sub, pytest.raises(fc.NoMessageAvailable):
            sub.get(wait=0.2)


def test_a_selector_chooses_publications(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded)) as c, c.subscribe("orders", selector="colour = 'red'") as sub:
        c.publish("orders", b"blue one", properties={"colour": "blue"})
        c.publish("orders", b"red one", properties={"colour": "red"})
        assert [m.data for m in sub.messages(wait=0.5)] == [b"red one"]


def test_publications_under_syncpoint_arrive_at_commit(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded)) as c, c.subscribe("uow/topic") as sub:
        with c.transaction():
            c.publish("uow/topic", b"in a unit", persistent=True)
            with pytest.raises(fc.NoMessageAvailable):
                sub.get(wait=0.1, syncpoint=False)
        assert sub.get(wait=5.0).data == b"in a unit"


def test_publish_and_subscribe_with_the_asyncio_client(embedded: EmbeddedQueueManager) -> None:
    async def main() -> list[bytes]:
        async with await fc.connect_async("QM1", addr(embedded)) as c:
            sub = await c.subscribe("async/#", durable=True, name="ASYNC.SUB")
            for i in range(3):
                await c.publish(f"async/{i}", b"m%d" % i)
            got: list[bytes] = []
            async for m in sub:  # waits for each publication
                got.append(m.data)
                break
            got += [m.data async for m in sub.messages(wait=0.5)]
            await sub.close(remove=True)
            return got

    assert asyncio.run(main()) == [b"m0", b"m1", b"m2"]
    assert subscriptions(embedded) == {}


def test_pymqi_topic_and_subscription(embedded: EmbeddedQueueManager) -> None:
    qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", addr(embedded))
    try:
        sd = pymqi.SD(Options=C.MQSO_CREATE | C.MQSO_DURABLE | C.MQSO_MANAGED)
        sd.set_vs("SubName", b"PYMQI.SUB")
        sd.set_vs("ObjectString", b"pymqi/topic")
        sub = pymqi.Subscription(qm)
        sub.sub(sub_desc=sd)
        assert sd.get_vs("ResObjectString") == b"pymqi/topic"
        topic = pymqi.Topic(qm, topic_string=b"pymqi/topic")
        topic.open(open_opts=C.MQOO_OUTPUT)
        md = pymqi.MD()
        topic.pub(b"through pymqi", md)
        assert md.MsgId != bytes(24)  # the MD comes back completed
        topic.close()
        gmo = pymqi.GMO(Options=C.MQGMO_WAIT, WaitInterval=5000)
        assert sub.get(None, pymqi.MD(), gmo) == b"through pymqi"
        again = pymqi.Subscription(qm)
        dup = pymqi.SD(Options=C.MQSO_CREATE | C.MQSO_DURABLE | C.MQSO_MANAGED)
        dup.set_vs("SubName", b"PYMQI.SUB")
        dup.set_vs("ObjectString", b"pymqi/topic")
        with pytest.raises(pymqi.MQMIError) as info:
            again.sub(sub_desc=dup)
        assert (info.value.comp, info.value.reason) == (C.MQCC_FAILED, C.MQRC_SUB_ALREADY_EXISTS)
        sub.close(sub_close_options=C.MQCO_REMOVE_SUB, close_sub_queue=True)
        assert subscriptions(embedded) == {}
        with pytest.raises(pymqi.MQMIError) as info:
            pymqi.Subscription(qm).sub(sub_desc=pymqi.SD(Options=C.MQSO_RESUME, ObjectName=b""))
        assert info.value.reason == C.MQRC_SUB_NAME_ERROR
    finally:
        qm.disconnect()


def test_pymqi_subscription_to_a_queue_it_gives(embedded: EmbeddedQueueManager) -> None:
    embedded.mqsc("DEFINE QLOCAL(SUB.DEST)")
    qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", addr(embedded))
    try:
        dest = pymqi.Queue(qm, "SUB.DEST", C.MQOO_INPUT_AS_Q_DEF)
        sub = pymqi.Subscription(qm)
        sd = pymqi.SD(Options=C.MQSO_CREATE)
        sd.set_vs("ObjectString", b"given/queue")
        sub.sub(sub_desc=sd, sub_queue=dest)
        qm.put1(_topic_od(b"given/queue"), b"by MQPUT1")
        assert sub.get(None, pymqi.MD(), pymqi.GMO(Options=C.MQGMO_WAIT, WaitInterval=5000)) == b"by MQPUT1"
        sub.close()
        dest.close()
        by_name = pymqi.Subscription(qm)  # a queue named, opened for input by the subscription
        sd = pymqi.SD(Options=C.MQSO_CREATE)
        sd.set_vs("ObjectString", b"given/by/name")
        by_name.sub(sub_desc=sd, sub_queue=b"SUB.DEST")
        qm.put1(_topic_od(b"given/by/name"), b"to the named queue")
        gmo = pymqi.GMO(Options=C.MQGMO_WAIT, WaitInterval=5000)
        assert by_name.get(None, pymqi.MD(), gmo) == b"to the named queue"
        by_name.close(close_sub_queue=True)
    finally:
        qm.disconnect()


def test_a_resume_writes_the_subscription_back_into_the_sd(embedded: EmbeddedQueueManager) -> None:
    embedded.mqsc("DEFINE SUB('ADMIN.MADE') TOPICSTR('admin/made') DESTCLAS(MANAGED) USERDATA('kept data')")
    qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", addr(embedded))
    try:
        sd = pymqi.SD(Options=C.MQSO_RESUME)
        sd.set_vs("SubName", b"ADMIN.MADE")
        sub = pymqi.Subscription(qm)
        sub.sub(sub_desc=sd)
        # As IBM fills it: the MQSD can go to MQSO_ALTER as it is.
        assert sd.Options & (C.MQSO_DURABLE | C.MQSO_MANAGED) == C.MQSO_DURABLE | C.MQSO_MANAGED
        assert sd.get_vs("ResObjectString") == b"admin/made" and sd.get_vs("SubUserData") == b"kept data"
        sub.close()
        sd.Options = sd.Options & ~C.MQSO_RESUME | C.MQSO_ALTER
        sub.sub(sub_desc=sd)
        sub.close(sub_close_options=C.MQCO_REMOVE_SUB, close_sub_queue=True)
    finally:
        qm.disconnect()


def _topic_od(topic: bytes) -> pymqi.OD:
    od = pymqi.OD(ObjectType=C.MQOT_TOPIC, Version=C.MQOD_VERSION_4)
    od.set_vs("ObjectString", topic)
    return od


def test_reason_codes_reach_the_pythonic_clients(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded)) as a, fc.connect("QM1", addr(embedded)) as b:
        with pytest.raises(fc.MQError) as info:
            a.subscribe("t", durable=True)  # a durable subscription needs a name
        assert (info.value.comp, info.value.reason) == (C.MQCC_FAILED, C.MQRC_SUB_NAME_ERROR)
        with a.subscribe("t", durable=True, name="HELD"):
            with pytest.raises(fc.MQError) as info:
                b.subscribe("t", durable=True, name="HELD")
            assert info.value.reason == C.MQRC_SUBSCRIPTION_IN_USE
        with pytest.raises(fc.InvalidSelector) as sel:
            a.subscribe("t", selector="x = = 1")
        assert sel.value.reason == C.MQRC_SELECTOR_SYNTAX_ERROR
        with pytest.raises(fc.MQError) as info:
            a.subscribe("x" * (C.MQ_TOPIC_STR_LENGTH + 1))
        assert info.value.reason == C.MQRC_TOPIC_STRING_ERROR  # refused before sending; still connected
        a.publish("t", b"still connected")
        assert set(subscriptions(embedded)) == {"HELD"}  # kept at close: it is durable


def test_a_lost_connection_ends_its_non_durable_subscriptions(embedded: EmbeddedQueueManager) -> None:
    proxy = TcpProxy(embedded.port)
    try:
        c = fc.connect("QM1", f"127.0.0.1({proxy.port})")
        c.subscribe("lost/topic")
        c.subscribe("lost/topic", durable=True, name="KEPT")
        assert len(subscriptions(embedded)) == 2
        proxy.cut()
        deadline = time.monotonic() + 10
        while len(subscriptions(embedded)) == 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert subscriptions(embedded) == {"KEPT": True}
        with fc.connect("QM1", addr(embedded)) as other:
            other.publish("lost/topic", b"for the durable one")
            with other.subscribe("lost/topic", durable=True, name="KEPT") as kept:  # resumed
                assert kept.get(wait=5.0).data == b"for the durable one"
                kept.close(remove=True)
    finally:
        proxy.close()


def test_subscriptions_resume_after_the_client_reconnects(tmp_path: Path) -> None:
    emb = EmbeddedQueueManager("QM1", FileJournal(str(tmp_path)), listen=True, port=0, heartbeat=1.0)
    emb.start()
    proxy = TcpProxy(emb.port)
    events: list[int] = []
    try:
        c = fc.connect("QM1", f"127.0.0.1({proxy.port})", reconnect=True, heartbeat=1.0,
                       on_reconnect=lambda reason, detail: events.append(reason))
        durable = c.subscribe("news/#", durable=True, name="NEWS")
        plain = c.subscribe("news/#")
        c.publish("news/own", b"own")  # opens the topic, which the client keeps for publish
        assert durable.get(wait=5.0).data == b"own" and plain.get(wait=5.0).data == b"own"
        with fc.connect("QM1", addr(emb)) as pub:
            pub.publish("news/a", b"before", persistent=True)
            assert durable.get(wait=5.0).data == b"before" and plain.get(wait=5.0).data == b"before"
            proxy.cut()
            deadline = time.monotonic() + 10  # the server sees the end: the non-durable one goes
            while len(subscriptions(emb)) == 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            pub.publish("news/b", b"while away", persistent=True)
        assert durable.get(wait=10.0).data == b"while away"  # the reconnect resumed it by name
        assert events[:2] == [C.MQRC_RECONNECTING, C.MQRC_RECONNECTED]
        with pytest.raises(fc.NoMessageAvailable):
            plain.get(wait=0.2)  # made again: what was published meanwhile was not its
        with fc.connect("QM1", addr(emb)) as pub:
            pub.publish("news/c", b"after")
        assert durable.get(wait=5.0).data == b"after" and plain.get(wait=5.0).data == b"after"
        c.publish("news/own", b"on a re-opened topic")  # the topic publish kept open, opened again
        assert durable.get(wait=5.0).data == b"on a re-opened topic"
        durable.close(remove=True)
        plain.close()
        assert subscriptions(emb) == {}
        c.disconnect()
    finally:
        proxy.close()
        emb.stop()


def test_the_asyncio_client_resumes_its_durable_subscription(tmp_path: Path) -> None:
    emb = EmbeddedQueueManager("QM1", FileJournal(str(tmp_path)), listen=True, port=0, heartbeat=1.0)
    emb.start()
    proxy = TcpProxy(emb.port)

    async def main() -> list[bytes]:
        c = await fc.connect_async("QM1", f"127.0.0.1({proxy.port})", reconnect=True, heartbeat=1.0)
        sub = await c.subscribe("async/news", durable=True, name="ASYNC.NEWS")
        with fc.connect("QM1", addr(emb)) as pub:
            pub.publish("async/news", b"before", persistent=True)
            got = [(await sub.get(wait=5.0)).data]
            proxy.cut()
            pub.publish("async/news", b"while away", persistent=True)
        got.append((await sub.get(wait=10.0)).data)  # resumed by name on the new conversation
        assert c.reconnects == 1
        await sub.close(remove=True)
        await c.disconnect()
        return got

    try:
        assert asyncio.run(main()) == [b"before", b"while away"]
        assert subscriptions(emb) == {}
    finally:
        proxy.close()
        emb.stop()
