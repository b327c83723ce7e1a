"""A message as the queue manager holds it, and its journal record.

Record payload (kind MESSAGE), little-endian:

| Off | Len | Field                                           |
|----:|----:|-------------------------------------------------|
|   0 |   1 | record version (1)                              |
|   1 |   1 | flags: 1 = typed properties, 2 = V6COMPAT body  |
|   2 |   2 | queue-name length N (<= 48)                     |
|   4 |   8 | sequence number on its queue                    |
|  12 |   8 | put time, float seconds since the epoch (UTC)   |
|  20 |   4 | properties length P (0: none)                   |
|  24 |   N | queue name (ASCII)                              |
|     | 364 | MQMD version 2, little-endian, as stored        |
|     |   P | properties: ferrymq.properties.model binary form (flag 1; |
|     |     | records without flag 1 hold a GPacket properties section) |
|     |   … | application data                                |

Record version 2 (a persistent publication's copy, one of several; engine.publishing) is
the same but for its end: in place of the application data, the 8-byte little-endian
record id of the record (kind MESSAGE_DATA) that holds the data, journaled once for all
the copies. That record's payload is the data alone; the engine deletes it with the last
copy's record (engine.staging), in the same transaction.

The put time is kept so the remaining Expiry is computed from the clock, not from a
counter that restarts would reset.

A persistent message whose record is durable may be paged out (engine/paging.py): it then
keeps only what finding and ordering it needs (identifiers, priority, expiry, properties,
where its descriptor and data sit in its record) and reads the rest back from the journal
when asked, through its ``Source``, without taking it back into memory; ``restore`` takes it
back for good, which its owner does before the record is changed or deleted.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from itertools import compress, count, pairwise
from operator import is_not
from typing import Protocol

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.properties import model as props_model
from ferrymq.properties.model import PropertySet
from ferrymq.wire.gpacket import decode_properties
from ferrymq.wire.mqmd import MQMD, NONE_ID, QUEUE_FIELDS_END, V2_LE_HEAD, queue_fields

Properties = PropertySet
FLAG_TYPED_PROPERTIES = 1
FLAG_V6_BODY = 2  # put to a PROPCTL(V6COMPAT) queue: the data holds its MQRFH2 exactly as put

KIND_MESSAGE = 1
KIND_MESSAGE_DATA = 32  # the data several message records share (record version 2); clear of the definitions' 2..n
# A priority above MaxPriority is kept in the MQMD but queued at MaxPriority (IBM).
MAX_PRIORITY = 9

_HEAD = struct.Struct("<BBHQdI")
HEAD_SIZE = _HEAD.size
_RECORD_VERSION = 1
_SHARED_DATA_VERSION = 2  # the data in a record of its own, named by record id
_DATA_REF = struct.Struct("<Q")
_REPORT = struct.Struct("<i")  # an MQMD's Report, read from a record's descriptor in place
_REPORT_AT = 8  # after StrucId and Version, either MQMD version


class Source(Protocol):
    """Where a paged-out message's record is read back from (engine.paging.Pager)."""

    def payload(self, msg: Message) -> bytes:
        """The message's whole record payload (it may be kept a while, not for good)."""
        ...

    def take(self, msg: Message) -> bytes:
        """The same, for a message that is taken back into memory for good."""
        ...


class Message:
    """One message on one queue. ``key`` orders the queue (priority first unless FIFO).

    The descriptor is decoded lazily: recovery and the hot paths need only the fields kept
    as attributes here (priority, persistence, identifiers), and the full MQMD costs
    several microseconds to build, which a million-message restart cannot afford.

    Messages of one put run share a ``template`` (the stored MQMD, with the run's MsgId and
    CorrelId to be replaced by each message's own): a run makes no descriptor per message,
    and each one it did make would stay tracked by the cyclic collector for as long as the
    message waits on its queue.

    The descriptor is an MQMD in every case; where it comes from is one of: its own
    (``_md``), the run's template and the message's identifiers (``_tpl``), or its record
    (``_md_off`` into ``_buf``, or into the record read back through ``_source``).
    """

    __slots__ = ("_buf", "_md", "_md_off", "_off", "_rlen", "_source", "_tpl", "correl_id", "data_record",
                 "expires_at", "key", "locked_by", "msg_id", "persistence", "priority", "properties", "put_at", "queue",
                 "record_id", "report", "seq", "v6")

    def __init__(self, queue: str, seq: int, md: MQMD | None, data: bytes, put_at: float, fifo: bool,
                 md_offset: int = -1, fields: tuple[int, int, int, bytes, bytes] | None = None,
                 data_offset: int = 0, template: MQMD | None = None, report: int | None = None) -> None:
        self.queue = queue
        self.seq = seq
        self._md = md
        self._md_off = md_offset  # where the stored MQMD v2 sits in _buf (-1: not there)
        self._tpl = template
        if fields is None:  # else the maker knows them (a plan's put, a run's message, a record's)
            assert md is not None
            fields = md.queue_fields()
        expiry, self.priority, self.persistence, self.msg_id, self.correl_id = fields
        # The descriptor's Report options, read now (a plain attribute, not a property: the
        # arrival (COA) and the take (COD) of every message ask), unless the maker knows
        # them (a template's, the same for every message made from it).
        if report is None:
            if md is not None:
                report = md.report
            elif template is not None:
                report = template.report
            else:
                (report,) = _REPORT.unpack_from(data, md_offset + _REPORT_AT)
        self.report: int = report
        # A recovered message keeps its whole record and the offset of its data: slicing it out
        # would copy every body once more at restart (a gigabyte for a million 1 KiB messages).
        # Paged out, _buf is None and _rlen is its record's length (see page_out).
        self._buf: bytes | None = data
        self._off = data_offset
        self._rlen = 0
        self._source: Source | None = None
        self.put_at = put_at
        self.expires_at: float | None = None if expiry == C.MQEI_UNLIMITED else put_at + expiry / 10.0
        priority = self.priority
        self.key: tuple[int, int] = (0 if fifo else -priority if priority < MAX_PRIORITY else -MAX_PRIORITY, seq)
        self.record_id = 0  # non-zero while the message has a journal record
        # Non-zero: the record holding the data, shared with other messages (record version
        # 2); the data itself is then the same bytes object in each of them.
        self.data_record = 0
        self.locked_by = 0  # the object handle holding a browse lock, if any
        self.properties: Properties | None = None  # message properties, typed (None: none)
        self.v6 = False  # the data's MQRFH2 is kept exactly as the putter wrote it (PROPCTL V6COMPAT)

    @property
    def md(self) -> MQMD:
        md = self._md
        if md is None:
            if self._tpl is not None:  # made when first asked (a get), then kept
                md = self._md = self._tpl.with_ids(self.msg_id, self.correl_id)
                return md
            buf = self._buf if self._buf is not None else self._record()  # paged out: read, not kept
            md = MQMD.decode(buf[self._md_off : self._md_off + C.MQMD_LENGTH_2], big_endian=False)
            if self._buf is not None:
                self._md = md
        return md

    @md.setter
    def md(self, md: MQMD) -> None:
        self._md, self._md_off, self._tpl, self.report = md, -1, None, md.report

    def md_packed(self) -> tuple[MQMD, bytes]:
        """``md`` and ``md.pack()``, for a get: a run's message's made from its template and
        identifiers by one splice, and not kept (the message is leaving its queue)."""
        if self._md is None and self._md_off < 0 and self._tpl is not None:
            return self._tpl.with_ids_packed(self.msg_id, self.correl_id)
        md = self.md
        return md, md.pack()

    def md_bytes(self) -> bytes:
        """The stored MQMD as a little-endian version 2 structure: what a record holds and
        what most deliveries send."""
        if self._md is None:
            if self._md_off >= 0:  # its record's own bytes, without an MQMD made
                buf = self._buf if self._buf is not None else self._record()
                return buf[self._md_off : self._md_off + C.MQMD_LENGTH_2]
            if self._tpl is not None:  # a run's message: spliced, no MQMD made or kept (a browse
                return self._tpl.v2_with_ids(self.msg_id, self.correl_id)  # of every message)
        return self.md.pack(version=C.MQMD_VERSION_2)

    def run_template(self) -> MQMD | None:
        """The template whose bytes, with this message's identifiers, are its stored MQMD
        (``md_bytes``), or None when they come from elsewhere (its own MQMD, its record)."""
        return self._tpl if self._md is None and self._md_off < 0 else None

    @property
    def data(self) -> bytes:
        buf = self._buf if self._buf is not None else self._record()
        return buf[self._off :] if self._off else buf

    @property
    def data_length(self) -> int:
        buf = self._buf
        return (self._rlen if buf is None else len(buf)) - self._off

    def body(self, limit: int) -> bytes:
        """At most ``limit`` bytes of the data, copied once."""
        buf = self._buf if self._buf is not None else self._record()
        if not self._off and limit >= len(buf):
            return buf
        return buf[self._off : self._off + limit]

    # -- paging (engine/paging.py) ---------------------------------------------------------
    @property
    def paged_out(self) -> bool:
        return self._buf is None

    def held_bytes(self) -> int:
        """Bytes of data this message holds in memory (0 when paged out)."""
        buf = self._buf
        return 0 if buf is None else len(buf) - self._off

    def record_layout(self) -> tuple[int, int, int]:
        """Where the descriptor and the data start in this message's record, and its length
        (what ``encode`` makes, without making it). With its data in a record of its own
        (``data_record``): -1, and that record's data offset and length."""
        if self.data_record:
            return -1, 0, self._rlen if self._buf is None else len(self._buf)
        if self._md_off >= 0:
            assert self._buf is not None or self._rlen
            return self._md_off, self._off, self._rlen if self._buf is None else len(self._buf)
        md_off = _HEAD.size + len(self.queue)
        props = len(props_model.pack(self.properties)) if self.properties else 0
        data_off = md_off + C.MQMD_LENGTH_2 + props
        return md_off, data_off, data_off + self.data_length

    def page_out(self, source: Source) -> None:
        """Drop the descriptor and data from memory: ``source`` reads them back from the
        record (which must be durable and hold exactly what ``encode`` would make now)."""
        if self._buf is None:
            return
        if self.data_record:  # the descriptor stays (its template is shared); the data goes
            self._rlen, self._buf, self._source = len(self._buf), None, source
            return
        self._md_off, self._off, self._rlen = self.record_layout()
        self._buf = self._md = self._tpl = None
        self._source = source

    def page_out_recovered(self, source: Source, length: int) -> None:
        """A message recovered from a record cut short at load (its descriptor and
        properties read, not its data): ``length`` is the whole record's."""
        self._buf, self._rlen, self._source, self._md = None, length, source, None

    def fetch(self) -> bytes | None:
        """A paged-out message's record, read for ``restore`` (None when it is in memory).
        Read before the message leaves its queue, so that a failed read changes nothing."""
        source = self._source
        return None if source is None else source.take(self)

    def restore(self, record: bytes | None) -> None:
        """Take a paged-out message back into memory for good, from ``fetch``'s record
        (before its record changes or goes; after it left its queue's index)."""
        if record is not None:
            self._buf = record
            self._source = None
            self._rlen = 0

    def _record(self) -> bytes:
        source = self._source
        assert source is not None, "a message with no data in memory has a source"
        return source.payload(self)

    @property
    def persistent(self) -> bool:
        return self.persistence == C.MQPER_PERSISTENT

    @property
    def token(self) -> bytes:
        """MsgToken: 16 bytes unique on this queue (the sequence number, then zeros)."""
        return token_of(self.seq)

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at

    def remaining_expiry(self, now: float) -> int:
        """Expiry as the getter sees it: tenths of a second left, at least 1, or unlimited."""
        if self.expires_at is None:
            return C.MQEI_UNLIMITED
        return max(1, int((self.expires_at - now) * 10 + 0.999))

    def encode(self) -> bytes:
        """The message's journal record (see the module docstring)."""
        return b"".join(self.record_parts())

    def record_parts(self) -> tuple[bytes, ...]:
        """``encode()``'s bytes in parts, the data as it is held: what the journal is given,
        so that a large body is not copied into a joined record first."""
        shared = self.data_record
        buf, md = self._buf, self._md
        if buf is None and md is None and not shared:  # paged out and unchanged: the record as it is
            return (self._record(),)
        name = self.queue.encode("ascii")
        raw = md._raw if md is not None else b""
        if not raw.startswith(V2_LE_HEAD):  # its own MQMD as stored (a put's): the bytes themselves, no calls
            raw = self.md_bytes()
        props = props_model.pack(self.properties) if self.properties else b""
        flags = FLAG_TYPED_PROPERTIES | (FLAG_V6_BODY if self.v6 else 0)
        head = _HEAD.pack(_SHARED_DATA_VERSION if shared else _RECORD_VERSION, flags, len(name), self.seq, self.put_at,
                          len(props))
        # The small parts joined (a few hundred bytes): the journal checksums and copies
        # each part on its own, and these are not worth a part each. A copy sharing its
        # data (a publication's) is all small parts: one.
        if shared:
            return (b"".join((head, name, raw, props, _DATA_REF.pack(shared))),)
        return b"".join((head, name, raw, props)), buf if buf is not None and not self._off else self.data

    def share_data(self, record_id: int, data: bytes) -> None:
        """From now on the data is ``data`` (the same bytes object as the messages that share
        it) held in record ``record_id`` (set before the message's own record is written)."""
        self.data_record, self._buf, self._off = record_id, data, 0

    def page_out_shared(self, source: Source, length: int) -> None:
        """A recovered message whose shared data record was not loaded (``length``: its
        length): the data is read through ``source`` when asked."""
        self._buf, self._off, self._rlen, self._source = None, 0, length, source

    def reposition(self, fifo: bool) -> None:
        self.key = (0 if fifo else -min(self.priority, MAX_PRIORITY), self.seq)


token_of: Callable[[int], bytes] = struct.Struct(">Q8x").pack
"""The MsgToken of the message of sequence number ``seq`` on its queue (Message.token):
the number big-endian, then eight zero bytes. A precompiled struct's own ``pack``, not a
function around it: every message got makes one."""


_names: dict[bytes, str] = {}  # queue names repeat across a million records


def head_length(payload: bytes | memoryview) -> int:
    """How much of a message record ``decode_message`` needs when the rest is read later
    (the message paged out): up to the fields it keeps of the MQMD, or through the
    properties when there are some. The whole length when the record is too short to say."""
    if len(payload) < _HEAD.size or payload[0] == _SHARED_DATA_VERSION:  # small: its data is elsewhere
        return len(payload)
    name_len = int.from_bytes(payload[2:4], "little")
    prop_len = int.from_bytes(payload[20:24], "little")
    md_off = _HEAD.size + name_len
    return min(len(payload), md_off + (C.MQMD_LENGTH_2 + prop_len if prop_len else QUEUE_FIELDS_END))


def decode_message(payload: bytes, fifo_of: dict[str, bool], length: int = -1) -> Message:
    """Rebuild a Message from its record; ``length``: the whole record's, when ``payload``
    is only its head (``head_length``): the message is then made paged out by the caller.
    A record of version 2 gives a message whose ``data_record`` is set and whose data the
    caller provides (``share_data`` or ``page_out_shared``).

    Raises:
        DecodeError: the record is not a message record this version can read.
    """
    if len(payload) < _HEAD.size:
        raise DecodeError("message record", 0, "shorter than its header")
    version, flags, name_len, seq, put_at, prop_len = _HEAD.unpack_from(payload, 0)
    if version not in (_RECORD_VERSION, _SHARED_DATA_VERSION):
        raise DecodeError("message record", 0, f"record version {version} is not 1 or 2")
    off = _HEAD.size
    whole = len(payload) if length < 0 else length
    if (name_len > C.MQ_Q_NAME_LENGTH or off + name_len + C.MQMD_LENGTH_2 + prop_len > whole
            or len(payload) < min(whole, off + name_len + (C.MQMD_LENGTH_2 + prop_len if prop_len else QUEUE_FIELDS_END))):
        raise DecodeError("message record", 2, "lengths exceed the record")
    raw_name = payload[off : off + name_len]
    queue = _names.get(raw_name)
    if queue is None:
        queue = _names[raw_name] = raw_name.decode("ascii")
    md_off = off + name_len
    if not payload.startswith(V2_LE_HEAD, md_off):
        raise DecodeError("message record", md_off, "the stored descriptor is not a little-endian MQMD v2")
    fields = queue_fields(payload, md_off)
    if fields[4] == NONE_ID:  # most messages have none: one shared object, not a copy each
        fields = (*fields[:4], NONE_ID)
    data_off = md_off + C.MQMD_LENGTH_2 + prop_len
    if version == _SHARED_DATA_VERSION:
        if len(payload) != data_off + _DATA_REF.size:
            raise DecodeError("message record", data_off, "a shared-data record ends with 8 bytes, its data's record id")
        (ref,) = _DATA_REF.unpack_from(payload, data_off)
        if not ref:
            raise DecodeError("message record", data_off, "record id 0 for the shared data")
        # The descriptor is decoded now: the record kept is the data's, not this one.
        md = MQMD.decode(payload[md_off : md_off + C.MQMD_LENGTH_2], big_endian=False)
        msg = Message(queue, seq, md, b"", put_at, fifo_of.get(queue, False))
        msg.data_record = ref
    else:
        msg = Message(queue, seq, None, payload, put_at, fifo_of.get(queue, False), md_off, fields, data_off)
    if prop_len:
        start = md_off + C.MQMD_LENGTH_2
        if flags & FLAG_TYPED_PROPERTIES:
            msg.properties = props_model.unpack(payload, start, data_off)
        else:  # a record written before properties were typed
            msg.properties = PropertySet(decode_properties(payload[start:data_off]))
    msg.v6 = bool(flags & FLAG_V6_BODY)
    return msg


# The page and removal helpers below read the messages' slots in list comprehensions: on
# this interpreter a slot read there costs a third of an attrgetter call through map().


def md_column(msgs: Sequence[Message]) -> bytes:
    """``b"".join(m.md_bytes() for m in msgs)``, a put run at a time: a browse page is
    thousands of messages, most of them consecutive in one run, whose descriptors are the
    run's template with each message's identifiers (MQMD.v2_with_each_ids). The runs are
    found with a pass over the page's templates, not a call per message."""
    n = len(msgs)
    if n < 2:
        return msgs[0].md_bytes() if n else b""
    tpls = [m._tpl if m._md is None and m._md_off < 0 else None for m in msgs]  # run_template(), inline
    starts = [0, *compress(count(1), map(is_not, tpls[1:], tpls[:-1])), n]
    parts: list[bytes] = []
    for a, b in pairwise(starts):
        tpl, run = tpls[a], msgs[a:b]
        if tpl is None:
            parts.extend(m.md_bytes() for m in run)
        else:
            parts.append(tpl.v2_with_each_ids([m.msg_id for m in run], [m.correl_id for m in run]))
    return parts[0] if len(parts) == 1 else b"".join(parts)


def data_column(msgs: Sequence[Message]) -> list[bytes]:
    """``[m.data for m in msgs]``, the property inline where a message holds its data alone."""
    return [m._buf if not m._off and m._buf is not None else m.data for m in msgs]


def data_lengths(msgs: Sequence[Message]) -> list[int]:
    """``[m.data_length for m in msgs]``, the property inline."""
    return [(m._rlen if m._buf is None else len(m._buf)) - m._off for m in msgs]


def held_by_persistence(msgs: Sequence[Message]) -> tuple[int, int]:
    """The data ``msgs`` hold in memory (``held_bytes``), persistent and non-persistent:
    what a run of messages leaving a queue takes off its meter."""
    held = [0 if m._buf is None else len(m._buf) - m._off for m in msgs]
    kinds = [m.persistence for m in msgs]
    persistent = kinds.count(C.MQPER_PERSISTENT)
    if not persistent:
        return 0, sum(held)
    if persistent == len(kinds):
        return sum(held), 0
    on = sum(compress(held, map(C.MQPER_PERSISTENT.__eq__, kinds)))
    return on, sum(held) - on
