"""Sequence-range access and prepared units of work over TCP against a real queue-manager
process (sync and async clients), including in-doubt units surviving a SIGKILL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client import MQError, connect
from ferrymq.client.aio import connect_async
from ferrymq.mq import constants as C

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def qmp(tmp_path: Path) -> Iterator[QueueManagerProcess]:
    p = QueueManagerProcess(tmp_path / "home").start()
    p.mqsc("DEFINE QLOCAL(IN) MSGDLVSQ(FIFO)\nDEFINE QLOCAL(OUT) MSGDLVSQ(FIFO)\n")
    yield p
    p.stop()


def test_range_browse_remove_and_reader_lag(qmp: QueueManagerProcess) -> None:
    with connect("QM1", qmp.conn_name, timeout=10) as c:
        with c.open("IN") as q:
            for i in range(20):
                q.put(b"m%02d" % i, persistent=True, properties={"n": i} if i == 3 else None)
        r = c.queue_range("IN")
        assert (r.first_seq, r.last_seq - r.first_seq + 1, r.depth) == (r.first_seq, 20, 20)
        first = r.first_seq
        got = c.browse_range("IN", first, first + 5)
        assert [m.data for m in got] == [b"m00", b"m01", b"m02", b"m03", b"m04"]
        assert [m.seq for m in got] == list(range(first, first + 5))
        assert got[3].properties == {"n": 3} and got[0].put_at > 1.7e9 and got[0].queue == "IN"
        assert len(c.browse_range("IN", first, first + 20, max_msgs=7)) == 7
        assert c.remove_upto("IN", first + 9, "spark-q1") == 10
        assert c.remove_upto("IN", first + 9, "spark-q1") == 0
        assert c.queue_range("IN").depth == 10
        (pos,) = c.reader_positions("IN")
        assert (pos.reader, pos.acked_seq, pos.lag) == ("spark-q1", first + 9, 10)
        with pytest.raises(MQError) as e:
            c.queue_range("NOT.THERE")
        assert e.value.reason == C.MQRC_UNKNOWN_OBJECT_NAME


async def test_async_client_has_the_same_calls(qmp: QueueManagerProcess) -> None:
    async with await connect_async("QM1", qmp.conn_name, timeout=10) as c:
        q = await c.open("IN")
        await q.put(b"a", persistent=True)
        r = await c.queue_range("IN")
        assert [m.data for m in await c.browse_range("IN", r.first_seq, r.last_seq + 1)] == [b"a"]
        await q.put(b"staged", persistent=True, syncpoint=True)
        assert await c.prepare(b"async-x") == 1
        assert await c.in_doubt() == [b"async-x"]
        assert await c.resolve(b"async-x", commit=True)
        assert (await c.queue_range("IN")).depth == 2
        assert await c.remove_upto("IN", 1 << 40, "r") == 2


def test_prepared_units_survive_sigkill_and_resolve_from_another_connection(qmp: QueueManagerProcess) -> None:
    with connect("QM1", qmp.conn_name, timeout=10) as c, c.open("IN") as q:
        q.put(b"in-1", persistent=True)
        q.put(b"in-2", persistent=True)
    with connect("QM1", qmp.conn_name, timeout=10) as worker, worker.open("IN") as qin, worker.open("OUT") as qout:
        msg = qin.get(syncpoint=True)
        qout.put(b"out-" + msg.data, persistent=True, syncpoint=True)
        assert worker.prepare(b"query-1/batch-7/part-0") == 2
        qout.put(b"doomed", persistent=True, syncpoint=True)
        worker.prepare(b"query-1/batch-7/part-1")
    qmp.kill()
    qmp.start()
    with connect("QM1", qmp.conn_name, timeout=10) as driver:
        assert driver.in_doubt() == [b"query-1/batch-7/part-0", b"query-1/batch-7/part-1"]
        assert driver.queue_range("OUT").last_seq < driver.queue_range("OUT").first_seq  # nothing visible
        assert driver.resolve(b"query-1/batch-7/part-0", commit=True)
        assert driver.resolve(b"query-1/batch-7/part-1", commit=False)
        assert not driver.resolve(b"query-1/batch-7/part-0", commit=True)  # a retry is harmless
    qmp.kill()
    qmp.start()
    with connect("QM1", qmp.conn_name, timeout=10) as c, c.open("OUT") as qout, c.open("IN") as qin:
        assert c.in_doubt() == []
        assert [m.data for m in qout.browse()] == [b"out-in-1"]
        assert [m.data for m in qin.browse()] == [b"in-2"]
