"""BROWSE_COLUMNS over TCP against a real queue-manager process: the Spark reader's pages
(browse_columns + pages.page_batch) hold exactly what the per-message path
(browse_range + columns.record_batch) gives, column for column, for messages with every
MQMD field set, properties of every type, odd and missing put times, Latin-1 and NULs in
character fields, empty payloads and expired messages, on a priority and a FIFO queue."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from qm_process import QueueManagerProcess

from ferrymq.client import Client, connect
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.spark.columns import record_batch
from ferrymq.spark.pages import page_batch
from ferrymq.spark.reading import bytes_prefix
from ferrymq.spark.schema import SCHEMA, read_schema
from ferrymq.wire.mqmd import MQMD

pytestmark = pytest.mark.timeout(120)

# (PutDate, PutTime): readable, to the hundredth, invalid dates, a time past 23:59 (read as
# it stands), blanks, Latin-1 superscript digits, nothing at all.
PUT_TIMES = [("20261123", "13450722"), ("20240229", "23595999"), ("20261301", "12000000"), ("20250229", "12000000"),
             ("00000101", "00000000"), ("20261123", "99999999"), ("2026 123", "12000000"), ("2026112\xb2", "12000000"),
             ("20261123", "1200000\xb3"), ("", "")]


def every_field(i: int, put_date: str, put_time: str) -> MQMD:
    return MQMD(version=2, report=C.MQRO_COA | C.MQRO_PASS_MSG_ID, msg_type=C.MQMT_REQUEST, expiry=360000 + i,
                feedback=C.MQFB_APPL_FIRST + i, encoding=546, coded_char_set_id=819, format="MQSTR",
                priority=i % 10, persistence=C.MQPER_PERSISTENT if i % 2 else C.MQPER_NOT_PERSISTENT,
                msg_id=bytes([i + 1]) * 24, correl_id=bytes(range(i, i + 24)), reply_to_q=f"REPLY.Q{i}",
                reply_to_q_mgr="QM\xe9", user_identifier="user1", accounting_token=bytes([7]) * 32,
                appl_identity_data="caf\xe9 au lait", put_appl_type=C.MQAT_JAVA, put_appl_name="ingest\0hidden",
                put_date=put_date, put_time=put_time, appl_origin_data="AB C", group_id=b"G" * 24,
                msg_seq_number=i + 1, offset=4 * i, msg_flags=C.MQMF_SEGMENTATION_ALLOWED, original_length=99)


def typed_properties() -> PropertySet:
    p = PropertySet()
    for name, value, kind in [("b", True, C.MQTYPE_BOOLEAN), ("raw", b"\x00\xfe", C.MQTYPE_BYTE_STRING),
                              ("i8", -8, C.MQTYPE_INT8), ("i16", 1600, C.MQTYPE_INT16), ("i32", -32, C.MQTYPE_INT32),
                              ("i64", 1 << 40, C.MQTYPE_INT64), ("f32", 0.5, C.MQTYPE_FLOAT32),
                              ("f64", 2.25, C.MQTYPE_FLOAT64), ("s", "caf\xe9", C.MQTYPE_STRING),
                              ("none", None, C.MQTYPE_NULL)]:
        p.set(name, value, kind)
    return p


@pytest.fixture(scope="module")
def qmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueueManagerProcess]:
    p = QueueManagerProcess(Path(tmp_path_factory.mktemp("pages")) / "home").start()
    p.mqsc("DEFINE QLOCAL(PRIO)\nDEFINE QLOCAL(FIFO) MSGDLVSQ(FIFO)\n")
    with connect("QM1", p.conn_name, timeout=10) as c:
        for queue in ("PRIO", "FIFO"):
            fill(c, queue)
        time.sleep(0.3)  # the messages put with an expiry of a tenth of a second are past it
    yield p
    p.stop()


def fill(c: Client, queue: str) -> None:
    with c.open(queue, options=C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT) as q:
        for i, (put_date, put_time) in enumerate(PUT_TIMES):
            q.put(b"" if i == 3 else b"m%d" % i, md=every_field(i, put_date, put_time), options=C.MQPMO_SET_ALL_CONTEXT,
                  properties=typed_properties() if i % 3 == 0 else None)
        q.put(b"expires", expiry=0.1)
        for i in range(300):  # plain ones, so that a page size of 64 splits the queue into several pages
            q.put(b"p" * (i % 50), properties={"n": i, "text": "x" * i} if i % 37 == 0 else None, expiry=0.1 if i == 5 else None)


@pytest.mark.parametrize("queue", ["PRIO", "FIFO"])
@pytest.mark.parametrize("page", [64, 4096])
def test_column_pages_hold_what_the_per_message_path_gives(qmp: QueueManagerProcess, queue: str, page: int) -> None:
    schema = read_schema(SCHEMA)
    with connect("QM1", qmp.conn_name, timeout=10) as c:
        r = c.queue_range(queue)
        old, new = [], []
        pos = r.first_seq
        while pos <= r.last_seq:
            msgs = c.browse_range(queue, pos, r.last_seq + 1, max_msgs=page)
            cols = c.browse_columns(queue, pos, r.last_seq + 1, max_msgs=page)
            assert [m.seq for m in msgs][-1] == cols.last_seq and len(cols) == len(msgs)
            old.append(record_batch(msgs, schema))
            new.append(page_batch(cols, schema))
            pos = cols.last_seq + 1
    want, got = pa.Table.from_batches(old), pa.Table.from_batches(new)
    assert got.num_rows == want.num_rows == len(PUT_TIMES) + 299  # the two expired ones are skipped
    for f in schema:
        assert got.column(f.name).equals(want.column(f.name)), f.name
    ts = got.column("put_timestamp").to_pylist()
    assert sum(t is None for t in ts[: len(PUT_TIMES)]) >= 6 and got.column("payload").to_pylist().count(b"") >= 2
    assert got.column("properties").to_pylist()[0] == [("b", "true"), ("raw", "00fe"), ("i8", "-8"), ("i16", "1600"),
                                                       ("i32", "-32"), ("i64", str(1 << 40)), ("f32", "0.5"),
                                                       ("f64", "2.25"), ("s", "caf\xe9"), ("none", None)]


def test_columns_of_an_empty_range_and_a_narrow_schema(qmp: QueueManagerProcess) -> None:
    narrow = read_schema(SCHEMA)
    narrow = pa.schema([narrow.field("seq"), narrow.field("payload"), narrow.field("put_timestamp")])
    with connect("QM1", qmp.conn_name, timeout=10) as c:
        r = c.queue_range("FIFO")
        assert len(c.browse_columns("FIFO", r.last_seq + 1, r.last_seq + 10)) == 0
        cols = c.browse_columns("FIFO", r.first_seq, r.first_seq + 5)
        assert page_batch(cols, narrow).equals(record_batch(c.browse_range("FIFO", r.first_seq, r.first_seq + 5), narrow))


@pytest.mark.parametrize("budget", [0, 1, 40, 1000, 3000, 3023, 1 << 30])
def test_a_byte_budget_cuts_a_batch_across_pages(qmp: QueueManagerProcess, budget: int) -> None:
    # maxBytesPerTrigger: the batch ends after the last message whose payload still fits
    # (at least one), wherever the pages of pageMessages cut the range.
    with connect("QM1", qmp.conn_name, timeout=10) as c:
        r = c.queue_range("FIFO")
        msgs = c.browse_range("FIFO", r.first_seq, r.last_seq + 1)
        want_end, used = r.last_seq + 1, 0
        for i, m in enumerate(msgs):
            if i and used + len(m.data) > budget:
                want_end = msgs[i - 1].seq + 1  # the next offset: where the next batch starts
                break
            used += len(m.data)
        assert bytes_prefix(c, "FIFO", r.first_seq, r.last_seq + 1, budget, page_messages=7) == (want_end, used)


def test_large_pages_read_into_their_own_buffers_stay_intact(qmp: QueueManagerProcess) -> None:
    # Pages of megabytes are read into a buffer of their own once their header is in
    # (client.sync, GPacketReader.packet_room); the pages' arrays are views of it, so a
    # page must hold what it was read as after every later page (and reply) was read too.
    qmp.mqsc("DEFINE QLOCAL(LARGE)\n")
    payloads = [bytes([i % 251]) * (3000 + i % 1000) for i in range(3000)]
    schema = read_schema(SCHEMA)
    with connect("QM1", qmp.conn_name, timeout=10) as c:
        with c.open("LARGE", options=C.MQOO_OUTPUT) as q:
            for p in payloads:
                q.put(p)
        r = c.queue_range("LARGE")
        pages, pos = [], r.first_seq
        while pos <= r.last_seq:
            cols = c.browse_columns("LARGE", pos, r.last_seq + 1, max_msgs=4096)
            if len(cols.columns.data) > 1 << 18:  # read into a buffer of its own
                assert type(cols.columns.data.obj) is bytearray
            assert c.queue_range("LARGE").depth == len(payloads)  # a small reply between large ones
            pages.append(page_batch(cols, schema))
            pos = cols.last_seq + 1
        assert len(pages) >= 3 and all(p.nbytes > 1 << 20 for p in pages[:-1])
        got = pa.Table.from_batches(pages)
        assert got.column("payload").to_pylist() == payloads
        want = pa.Table.from_batches([record_batch(c.browse_range("LARGE", s, s + 500), schema)
                                      for s in range(r.first_seq, r.last_seq + 1, 500)])
        for f in schema:
            assert got.column(f.name).equals(want.column(f.name)), f.name
