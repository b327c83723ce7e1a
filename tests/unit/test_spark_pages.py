"""Columnar pages into Arrow (ferrymq.spark.pages): each vectorised column against the
per-message reading it replaces, over arbitrary bytes (decode_chars for character fields,
put_micros for put times), and a page built by the server's own reply builder against
columns.record_batch over the same messages. End to end over TCP:
tests/integration/test_browse_columns_tcp.py."""

from __future__ import annotations

import os
import platform

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrymq.client.sequence import ColumnPage, SequencedMessage
from ferrymq.engine import sequence_access as S
from ferrymq.engine.api import ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.protocol import codec
from ferrymq.protocol import seqframes as F
from ferrymq.server.seq_ops import columns_reply
from ferrymq.spark import memory, pages
from ferrymq.spark.columns import put_micros, record_batch
from ferrymq.spark.schema import SCHEMA, read_schema
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.layout import decode_chars
from ferrymq.wire.mqmd import MQMD

# Bytes that matter to the character rules: NUL, blank, ASCII, digits, Latin-1 beyond ASCII
# (a superscript two is a digit to str.isdigit).
TRICKY = st.sampled_from([0, 0x20, 0x41, 0x7A, 0x30, 0x31, 0x32, 0x39, 0xB2, 0xE9, 0xFF])


# The first example pays for pyarrow's lazy imports: no deadline.
NO_DEADLINE = settings(deadline=None)


def block_of(rows: list[bytes], width: int) -> np.ndarray:
    return np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), width)


@NO_DEADLINE
@given(st.lists(st.lists(TRICKY, min_size=6, max_size=6).map(bytes), min_size=1, max_size=30))
def test_character_columns_read_as_decode_chars(rows: list[bytes]) -> None:
    got = pages._chars(block_of(rows, 6), 0, 6)
    assert got.type == pa.string() and got.to_pylist() == [decode_chars(r) for r in rows]


@NO_DEADLINE
@given(st.lists(st.sampled_from([b"AB  ", b"AB\0 ", b"    ", b"\xe9t\xe9 "]), min_size=1, max_size=5))
def test_repeated_and_mixed_character_values(rows: list[bytes]) -> None:
    assert pages._chars(block_of(rows, 4), 0, 4).to_pylist() == [decode_chars(r) for r in rows]


@NO_DEADLINE
@given(st.lists(st.one_of(st.lists(TRICKY, min_size=16, max_size=16).map(bytes),
                          st.sampled_from([b"2026112312345678", b"2026022912000000", b"2024022923595999",
                                           b"0000010100000000", b"2026113299999999", b"20261123        "])),
                min_size=1, max_size=20))
def test_put_timestamps_read_as_put_micros(keys: list[bytes]) -> None:
    at = pages._DATE_AT
    rows = [bytes(at) + k + bytes(F.MD_SIZE - at - 16) for k in keys]
    got = pages._timestamps(block_of(rows, F.MD_SIZE))
    want = [put_micros(decode_chars(k[:8]), decode_chars(k[8:])) for k in keys]
    assert got.cast(pa.int64()).to_pylist() == want


def qmgr_with_messages() -> QueueManager:
    qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
    qm.objects.define("QLOCAL", "Q1", {"MAXDEPTH": 100_000})
    hconn = qm.connect(appl_name="test")
    h = qm.open(hconn, ObjectDescriptor("Q1"), C.MQOO_OUTPUT).hobj
    pmo = PutOptions(C.MQPMO_NO_SYNCPOINT)
    props = PropertySet()
    props.set("i8", -5, C.MQTYPE_INT8)
    props.set("f32", 1.5, C.MQTYPE_FLOAT32)
    props.set("raw", b"\x00\xff", C.MQTYPE_BYTE_STRING)
    props.set("nothing", None, C.MQTYPE_NULL)
    props.set("yes", True)
    for i in range(40):
        md = MQMD(version=2, priority=i % 10, format="MQSTR" if i % 3 else "", correl_id=bytes([i]) * 24,
                  reply_to_q=f"REPLY.{i % 4}", persistence=C.MQPER_NOT_PERSISTENT)
        qm.put(hconn, h, md, pmo, b"x" * i, properties=props if i % 7 == 0 else None)
    return qm


def over_the_wire(reply: F.BrowseColumnsReply) -> F.BrowseColumnsReply:
    ptype, flags, corr, parts = codec.encode(reply)
    ev = codec.decode(codec.SERVER_FRAMES, ptype, flags, corr, b"".join(parts), None)
    assert isinstance(ev, F.BrowseColumnsReply)
    return ev


def test_a_server_page_reads_as_record_batch_does() -> None:
    qm = qmgr_with_messages()
    msgs = S.browse_range(qm, "Q1", 0, 1000)
    schema = read_schema(SCHEMA)
    page = ColumnPage("Q1", over_the_wire(columns_reply(7, msgs, 1 << 20)))
    entries = [SequencedMessage("Q1", F.RangeEntry(m.seq, m.put_at, m.md.pack(), m.properties or PropertySet(), m.data))
               for m in msgs]
    want, got = record_batch(entries, schema), pages.page_batch(page, schema)
    for f in schema:
        assert got.column(f.name).equals(want.column(f.name)), f.name
    narrow = pa.schema([schema.field("payload"), schema.field("properties"), schema.field("seq")])
    assert pages.page_batch(page, narrow).equals(record_batch(entries, narrow))


def test_a_page_is_cut_where_properties_would_overflow_the_frame() -> None:
    qm = qmgr_with_messages()
    msgs = S.browse_range(qm, "Q1", 0, 1000)
    whole = columns_reply(7, msgs, 1 << 20)
    cut = columns_reply(7, msgs, 2000)  # messages 0 and 7 carry properties
    assert whole.count == 40 and 0 < cut.count < 40
    assert set(cut.properties) == {i for i in whole.properties if i < cut.count}
    assert columns_reply(7, msgs[:1], 10).count == 1  # a page always holds one message


def test_a_reading_process_keeps_freed_pages_once() -> None:
    # On glibc (this project's Linux machines) the thresholds are set; a second call is free.
    assert memory.keep_freed_pages() is (platform.libc_ver()[0] == "glibc" and not any(
        name in os.environ for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")))
    assert memory.keep_freed_pages() == memory.keep_freed_pages()
