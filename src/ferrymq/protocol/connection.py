"""Sans-IO state machines of the client protocol: ``ClientConnection`` and ``ServerConnection``.

The h11 shape: feed bytes with ``receive_data(data)`` (``b""`` = the peer closed), take
events with ``next_event()`` until it returns ``NEED_DATA``, turn events into bytes with
``send(event)``. No sockets, no clocks: the drivers (ferrymq.server, ferrymq.client) own
I/O, timers and heartbeats.

Invariants the machines enforce, so that drivers never see a frame out of place:
- a frame carries no GPacket properties section (propsByteSize 0);
- the packet length is checked against the limit as soon as the 36-byte header is in,
  before any of the body is buffered (the limit is small until CONNECT has negotiated
  the maximum message length);
- CONNECT comes first and once; a request's correlation id is unique among the
  requests still unanswered; every reply answers an outstanding request with the
  right kind of reply; pushed messages arrive only for a handle that is consuming.
Any breach raises ``RemoteProtocolError`` (the peer's fault) from ``next_event()`` and
leaves the machine in ``ERROR``; ``send()`` raises ``LocalProtocolError`` for our own.
"""

from __future__ import annotations

import enum
import struct
from collections import deque
from collections.abc import Callable
from typing import Final, TypeVar

from ferrymq.errors import DecodeError
from ferrymq.protocol import codec, columnframes, seqframes
from ferrymq.protocol import events as E
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.protocol.framing import pack_packet, packet_parts
from ferrymq.wire import gpacket
from ferrymq.wire.gpacket import GPacketReader
from ferrymq.wire.mqmd import MQMD, V2_LE_HEAD


class _Sentinel(enum.Enum):
    NEED_DATA = "NEED_DATA"
    CLOSED = "CLOSED"


NEED_DATA: Final = _Sentinel.NEED_DATA
"""next_event(): no complete frame buffered; feed more bytes."""
CLOSED: Final = _Sentinel.CLOSED
"""next_event(): the peer closed its side (after every buffered frame was returned)."""

Next = E.Event | _Sentinel


class State(enum.Enum):
    IDLE = "IDLE"  # before CONNECT
    CONNECTING = "CONNECTING"  # CONNECT sent / received, reply outstanding
    CONNECTED = "CONNECTED"
    CLOSED = "CLOSED"  # disconnected, ended, or the peer hung up
    ERROR = "ERROR"


# The states as plain names: an Enum member looked up through its class costs several times
# a global's lookup, and every frame's check reads two of them.
_IDLE, _CONNECTED, _CLOSED = State.IDLE, State.CONNECTED, State.CLOSED
# Requests a server checks for more than a fresh correlation id (or for none at all).
_NOT_PLAIN_REQUESTS = frozenset({E.Credit, E.HeartbeatReply, E.Heartbeat, E.PutBatch, columnframes.PutColumns,
                                 E.GetBatch})

HANDSHAKE_LIMIT = 64 * 1024
"""Largest packet accepted before CONNECT has negotiated the maximum message length."""
FRAME_OVERHEAD = 64 * 1024
"""Room for headers, names and properties on top of the maximum message length."""

_Frame = TypeVar("_Frame", bytes, list[bytes])

# Which reply types may answer which request (Reply answers all of them).
_ANSWERS: dict[type, tuple[type, ...]] = {
    E.Connect: (E.ConnectReply,),
    E.Open: (E.OpenReply,),
    E.Put: (E.PutReply,),
    E.Put1: (E.PutReply,),
    E.Get: (E.GetReply,),
    E.GetBatch: (E.GetBatchReply, E.GetReply),  # GetReply: one message ended a wait
    E.Inquire: (E.InquireReply,),
    E.Stat: (E.StatReply,),
    E.Heartbeat: (E.HeartbeatReply,),
    **seqframes.ANSWERS,
}


class _Machine:
    """What both ends share: the byte buffer, the frame reader and the writer."""

    _frames: dict[int, codec.Decoder]
    # Frames decoded in place when they are the usual shape (an instance may choose its own table).
    _fast: dict[int, codec.FastDecoder] = {}  # noqa: RUF012 - never mutated, only replaced

    def __init__(self) -> None:
        self.state = State.IDLE
        self.max_packet = HANDSHAKE_LIMIT
        self.max_msg_length = 0
        self.version = 0  # the protocol version agreed at Connect
        self._reader = GPacketReader(max_size=HANDSHAKE_LIMIT, max_properties=0)  # frames carry none: see _read_frame
        self._fed = 0  # bytes received, for stream offsets in error messages
        self._eof = False
        self._error: RemoteProtocolError | None = None
        self._events: deque[E.Event] = deque()

    @property
    def buffered(self) -> int:
        """Bytes received and not yet returned as events (a frame begun, or frames a driver
        has not taken yet): what this machine holds in memory for its peer."""
        return self._reader.buffered

    # -- input ---------------------------------------------------------------------------

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Feed bytes from the peer; ``b""`` means the peer closed its side.

        Raises:
            RuntimeError: data after the end of the stream.
        """
        if not data:
            self._eof = True
            return
        if self._eof:
            raise RuntimeError("received data after the end of the stream")
        if self._error is None:
            self._fed += len(data)
            self._reader.feed(data)

    def next_event(self) -> Next:
        """The next event, ``NEED_DATA`` or ``CLOSED``.

        Raises:
            RemoteProtocolError: the peer's bytes break the protocol (also on every later call).
        """
        if self._error is not None:
            raise self._error
        reader = self._reader
        # A usual frame first (take_plain also says at once that nothing is buffered).
        ev: E.Event | None = reader.take_plain(self._fast) if self._fast else None
        if ev is None:
            if not self._eof and not reader.buffered:  # the usual second call after a frame
                return NEED_DATA
            framed = self._next_framed()
            if isinstance(framed, _Sentinel):
                return framed
            ev = framed
        try:
            self._check_incoming(ev)
        except RemoteProtocolError as exc:
            self._fail(exc)
            raise
        return ev

    def _next_framed(self) -> Next:
        """The next frame through the ordinary decoders (not yet checked against the
        conversation's state), ``NEED_DATA`` or ``CLOSED``."""
        try:
            ev = self._read_frame()
        except RemoteProtocolError as exc:
            self._fail(exc)
            raise
        except DecodeError as exc:  # the framing itself: bad magic, version, size over the limit
            err = RemoteProtocolError(f"bad packet: {exc}", self._fed - self._reader.buffered)
            self._fail(err)
            raise err from None
        if ev is not None:
            return ev
        if self._eof:
            if self._reader.buffered:
                err = RemoteProtocolError("stream ended inside a packet", self._fed - self._reader.buffered)
                self._fail(err)
                raise err
            self.state = State.CLOSED
            return CLOSED
        return NEED_DATA

    def _fail(self, exc: RemoteProtocolError) -> None:
        self._error = exc
        self.state = State.ERROR

    def _read_frame(self) -> E.Event | None:
        reader = self._reader
        reader.max_size = self.max_packet
        frame = reader.next_frame()
        if frame is None:
            return None
        header, raw_props, payload = frame
        if raw_props is not None:  # message properties travel in the payload (docs/protocol.md)
            where = self._fed - reader.buffered - header.size
            raise RemoteProtocolError(f"{codec.NAMES.get(header.type, header.type)} frame has a GPacket properties "
                                      f"section of {header.props_size} bytes; this protocol's frames have none", where)
        try:
            return codec.decode(self._frames, header.type, header.flags, header.sequence, payload, None)
        except DecodeError as exc:
            where = self._fed - reader.buffered - header.size  # where the frame began in the stream
            raise RemoteProtocolError(f"malformed {codec.NAMES.get(header.type, header.type)} frame: {exc}", where) from None

    def _check_incoming(self, ev: E.Event) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    # -- output --------------------------------------------------------------------------

    def _pack(self, ev: E.Event | columnframes.PutColumns) -> bytes:
        try:
            ptype, flags, corr, parts = codec.encode(ev)
            return pack_packet(ptype, flags, corr, parts, None)  # no frame has GPacket properties
        except (ValueError, OverflowError) as exc:
            raise LocalProtocolError(f"cannot encode {type(ev).__name__}: {exc}") from None

    def _pack_parts(self, ev: E.Event) -> list[bytes]:
        try:
            ptype, flags, corr, parts = codec.encode(ev)
            return packet_parts(ptype, flags, corr, parts, None)
        except (ValueError, OverflowError) as exc:
            raise LocalProtocolError(f"cannot encode {type(ev).__name__}: {exc}") from None

    def batch_limit(self) -> int:
        """Payload bytes a batch frame may carry (0: batches not agreed on this connection)."""
        return self.max_msg_length if self.version >= E.BATCH_VERSION else 0

    def _batch_items(self, ev: E.PutBatch | columnframes.PutColumns,
                     error: type[LocalProtocolError] | type[RemoteProtocolError]) -> None:
        if self.version < E.BATCH_VERSION:
            raise error(f"{type(ev).__name__} needs protocol version {E.BATCH_VERSION}; version {self.version} was agreed")
        limit = self.max_msg_length
        if isinstance(ev, columnframes.PutColumns):
            try:
                columnframes.check(ev)
            except ValueError as exc:
                raise error(f"PutColumns: {exc}") from None
            longest = columnframes.largest(ev)
        else:
            longest = max((len(d) for _, d in ev.items), default=0)
        if longest > limit:
            raise error(f"message of {longest} bytes exceeds the negotiated maximum {limit}")

    def _negotiated(self, max_msg_length: int, version: int) -> None:
        self.version = version
        self.max_msg_length = max_msg_length
        self.max_packet = self._reader.max_size = max_msg_length + FRAME_OVERHEAD


# A GetReply frame as a request/reply loop receives it: the GPacket header, then the body's
# fixed start (an OK status of 10 bytes, data length, MsgToken, the resolved name's length).
_GET_REPLY_HEAD = struct.Struct(">hhiiiqqI10sI16sH")
_MD_V2 = MQMD.length(2)  # a version-2 MQMD
_NO_PROPS = b"\0\0\0\0"
_shapes: dict[int, struct.Struct] = {}


def _reply_shape(n: int) -> struct.Struct:
    """The usual GetReply (see ``receive_get_reply``) from a queue whose name is ``n`` bytes,
    from the GPacket header to the properties' length: the fields ``_GET_REPLY_HEAD`` reads
    (less the timestamp and flags), then the name's length, the name and the MQMD's first 8
    bytes as one field (see ``_named``), then the properties' length: one unpack where there
    were one and three comparisons in place."""
    shape = _shapes.get(n)
    if shape is None:
        shape = struct.Struct(f">hhiii8xq4x10sI16s{2 + n + 8}s{_MD_V2 - 8}xI")
        if len(_shapes) < 64:  # names of up to 48 characters, in practice
            _shapes[n] = shape
    return shape


def _named(raw: bytes) -> bytes:
    """The bytes of a usual GetReply from the queue named ``raw`` (encoded) between its
    MsgToken and the rest of its MQMD: the name's length, the name, an MQMD v2's head."""
    return struct.pack(">H", len(raw)) + raw + V2_LE_HEAD


class ClientConnection(_Machine):
    """The client's end: sends requests, receives replies and pushed messages."""

    _frames = codec.SERVER_FRAMES
    _fast = codec.FAST_SERVER_FRAMES

    def __init__(self) -> None:
        super().__init__()
        self._outstanding: dict[int, type] = {}
        self._consuming: set[int] = set()
        self._closing: dict[int, int] = {}  # corr of an outstanding Close -> its hobj
        # A Consume stays outstanding while the server pushes; its Reply ends it.
        self._consume_req: dict[int, int] = {}  # corr of an outstanding Consume -> its hobj
        self._proposed = 0
        self._clean = False  # known: nothing buffered, no end, no error (see receive_get_reply)
        self._name_raw, self._name = b"", ""  # the last GetReply's queue name, encoded and not
        self._shape = _reply_shape(0)  # a GetReply from that queue
        self._named = _named(b"")  # what such a reply has between its MsgToken and the rest of its MQMD

    @property
    def outstanding(self) -> int:
        """Requests sent and not yet answered."""
        return len(self._outstanding)

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        self._clean = False
        super().receive_data(data)

    def receive_get_reply(self, data: bytes) -> E.GetReply | None:
        """``receive_data(data)`` and ``next_event()`` at once, for what a request/reply loop
        receives: ``data`` is exactly one GetReply frame (OK status, an MQMD v2 in
        little-endian, no properties) answering an outstanding Get, and nothing is buffered.
        Returns the event ``next_event`` would return. For any other ``data`` (also a
        malformed frame, whose error ``next_event`` reports) returns None having taken
        nothing: the caller feeds it with ``receive_data``."""
        if not self._clean:  # only receive_data can change what this asks
            if self._reader.buffered or self._eof or self._error is not None:
                return None
            self._clean = True
        if type(data) is not bytes:  # slices of bytes are the event's fields
            return None
        shape = self._shape
        if len(data) >= shape.size:  # first as a reply from the last reply's queue, in one unpack
            version, ptype, size, magic, props_size, corr, status, length, token, named, props_len = \
                shape.unpack_from(data)
            if (ptype == codec.T_GET_REPLY and size == len(data) and magic == gpacket.MAGIC
                    and version == gpacket.VERSION and not props_size and status == codec.OK_STATUS
                    and size <= self.max_packet and named == self._named and not props_len):
                req = self._outstanding.get(corr)
                if req is not E.Get and req is not E.GetBatch:
                    return None
                del self._outstanding[corr]
                self._fed += size
                md_at = _GET_REPLY_HEAD.size + len(self._name_raw)
                return E.GetReply(corr, data[md_at : md_at + _MD_V2], data[md_at + _MD_V2 + 4 :], length, token,
                                  self._name)
        if len(data) < _GET_REPLY_HEAD.size:
            return None
        version, ptype, size, magic, props_size, _, corr, _, status, length, token, n = _GET_REPLY_HEAD.unpack_from(data)
        if (ptype != codec.T_GET_REPLY or size != len(data) or magic != gpacket.MAGIC or version != gpacket.VERSION
                or props_size or status != codec.OK_STATUS or size > self.max_packet):
            return None
        md_at = _GET_REPLY_HEAD.size + n
        data_at = md_at + _MD_V2 + 4
        if (size < data_at or not data.startswith(V2_LE_HEAD, md_at)
                or not data.startswith(_NO_PROPS, data_at - 4)):
            return None
        req = self._outstanding.get(corr)
        if req is not E.Get and req is not E.GetBatch:
            return None
        if n == len(self._name_raw) and data.startswith(self._name_raw, _GET_REPLY_HEAD.size):
            name = self._name  # a getter's replies come from one queue
        else:
            raw = data[_GET_REPLY_HEAD.size : md_at]
            try:
                name = raw.decode("utf-8")
            except UnicodeDecodeError:
                return None
            self._name_raw, self._name = raw, name
            self._shape, self._named = _reply_shape(n), _named(raw)
        del self._outstanding[corr]
        self._fed += size
        return E.GetReply(corr, data[md_at : data_at - 4], data[data_at:], length, token, name)

    def send(self, ev: E.ClientEvent | columnframes.PutColumns) -> bytes:
        """The bytes of one client frame.

        Raises:
            LocalProtocolError: not allowed in this state, or a duplicate correlation id.
        """
        t = type(ev)
        if self.state is _CONNECTED:  # a request/reply loop's frames first (no other check applies to them)
            if t is E.Get:
                corr = ev.corr  # type: ignore[union-attr]
                if corr <= 0 or corr in self._outstanding:
                    raise LocalProtocolError(f"correlation id {corr} is not positive or is still in use")
                try:  # on any failure the general encoder runs, and raises what it raises
                    data = codec.get_frame(ev)
                except (ValueError, OverflowError, TypeError, struct.error):
                    data = self._pack(ev)
                self._outstanding[corr] = t
                return data
            if t is E.Put and not ev.reply:  # type: ignore[union-attr]
                if len(ev.data) > self.max_msg_length > 0:  # type: ignore[union-attr]
                    raise LocalProtocolError(f"message of {len(ev.data)} bytes exceeds the negotiated maximum {self.max_msg_length}")  # type: ignore[union-attr]
                try:
                    return codec.put_frame(ev)
                except (ValueError, OverflowError, TypeError, struct.error):
                    return self._pack(ev)
        if self.state is _IDLE:
            if t is not E.Connect:
                raise LocalProtocolError(f"{t.__name__} before Connect")
            assert isinstance(ev, E.Connect)
            self._proposed = ev.max_msg_length
            self.max_packet = ev.max_msg_length + FRAME_OVERHEAD
            self.state = State.CONNECTING
        elif self.state is not _CONNECTED:
            raise LocalProtocolError(f"cannot send {t.__name__} in state {self.state.value}")
        elif t is E.Credit:
            assert isinstance(ev, E.Credit)
            if ev.hobj not in self._consuming:
                raise LocalProtocolError(f"Credit for handle {ev.hobj}, which is not consuming")
            return self._pack(ev)
        elif t is E.Consume and ev.hobj in self._consuming:  # type: ignore[union-attr]
            raise LocalProtocolError(f"handle {ev.hobj} is already consuming")  # type: ignore[union-attr]
        if t is E.HeartbeatReply or (t is E.Heartbeat and not ev.reply):  # type: ignore[union-attr]
            return self._pack(ev)
        if t is E.PutBatch or t is columnframes.PutColumns:
            self._batch_items(ev, LocalProtocolError)  # type: ignore[arg-type]
            return self._pack(ev)
        if t is E.GetBatch and self.version < E.BATCH_VERSION:
            raise LocalProtocolError(f"GetBatch needs protocol version {E.BATCH_VERSION}; version {self.version} was agreed")
        if t is E.Put or t is E.Put1:
            if len(ev.data) > self.max_msg_length > 0:  # type: ignore[union-attr]
                raise LocalProtocolError(f"message of {len(ev.data)} bytes exceeds the negotiated maximum {self.max_msg_length}")  # type: ignore[union-attr]
            if not ev.reply:  # type: ignore[union-attr]
                return self._pack(ev)
        corr = ev.corr  # type: ignore[union-attr]
        if corr <= 0 or corr in self._outstanding:
            raise LocalProtocolError(f"correlation id {corr} is not positive or is still in use")
        data = self._pack(ev)
        self._outstanding[corr] = t
        if t is E.Consume:
            self._consuming.add(ev.hobj)  # type: ignore[union-attr]
            self._consume_req[corr] = ev.hobj  # type: ignore[union-attr]
        elif t is E.Close:
            self._closing[corr] = ev.hobj  # type: ignore[union-attr]
        return data

    def send_pair(self, put: E.Put, get: E.Get) -> bytes | None:
        """``send(put) + send(get)`` at once, for what a request/reply loop writes: an
        asynchronous Put (held by the session) and the Get that follows it. Returns those
        bytes when both sends would succeed; for anything else returns None having changed
        nothing, and the caller sends them one by one (and meets their errors)."""
        if self.state is not _CONNECTED or type(put) is not E.Put or put.reply or type(get) is not E.Get:
            return None
        corr = get.corr
        try:  # also the checks: whatever they would raise, the sends one by one raise
            if corr <= 0 or corr in self._outstanding or len(put.data) > self.max_msg_length > 0:
                return None
            data = codec.put_get_frames(put, get)
        except Exception:  # the one-by-one sends then raise what they raise
            return None
        self._outstanding[corr] = E.Get
        return data

    def _check_incoming(self, ev: E.Event) -> None:
        t = type(ev)
        if t is E.PushedBatch and self.version < E.BATCH_VERSION:
            raise RemoteProtocolError(f"PushedBatch needs protocol version {E.BATCH_VERSION}; version {self.version} was agreed")
        if t is E.Pushed or t is E.PersistentNext or t is E.PushedBatch:
            if ev.hobj not in self._consuming:  # type: ignore[union-attr]
                raise RemoteProtocolError(f"{t.__name__} for handle {ev.hobj}, which is not consuming")  # type: ignore[union-attr]
            return
        if t is E.Heartbeat:
            return
        if t is E.Ending:
            self.state = State.CLOSED
            return
        corr = ev.corr  # type: ignore[union-attr]
        req = self._outstanding.pop(corr, None)
        if req is None:
            raise RemoteProtocolError(f"{t.__name__} answers correlation id {corr}, which is not outstanding")
        if t is not E.Reply and t not in _ANSWERS.get(req, ()):
            raise RemoteProtocolError(f"{t.__name__} cannot answer {req.__name__}")
        if req is E.Connect:
            ok = t is E.ConnectReply and ev.comp != 2  # type: ignore[union-attr]
            if ok:
                assert isinstance(ev, E.ConnectReply)
                if ev.max_msg_length > self._proposed:
                    raise RemoteProtocolError(f"server raised the maximum message length to {ev.max_msg_length}")
                self._negotiated(ev.max_msg_length, ev.version)
            self.state = State.CONNECTED if ok else State.CLOSED
        elif req is E.Disconnect:
            self.state = State.CLOSED
        elif req is E.Close:
            self._closing.pop(corr)
        elif req is E.Consume:  # the Consume's reply is its end: no pushes after it
            self._consuming.discard(self._consume_req.pop(corr))


class ServerConnection(_Machine):
    """The server's end: receives requests, sends replies, pushed messages, heartbeats."""

    _frames = codec.CLIENT_FRAMES
    _fast = codec.FAST_CLIENT_FRAMES

    def __init__(self, *, max_msg_length: int = 4 * 1024 * 1024, raw_put_md: bool = False) -> None:
        """``raw_put_md``: a Put frame of the usual shape (a plain MQMD, no properties) gives
        an event whose ``md`` is the MQMD's bytes, for a driver that decodes it only when
        it must (any other Put's is decoded)."""
        super().__init__()
        if raw_put_md:
            self._fast = codec.FAST_CLIENT_FRAMES_RAW_MD
        self.server_max_msg_length = max_msg_length
        self._outstanding: dict[int, type] = {}
        self._consuming: set[int] = set()
        self._consume_req: dict[int, int] = {}  # corr of an outstanding Consume -> hobj

    @property
    def outstanding(self) -> int:
        return len(self._outstanding)

    def is_consuming(self, hobj: int) -> bool:
        return hobj in self._consuming

    def _check_incoming(self, ev: E.Event) -> None:
        t = type(ev)
        if self.state is not _CONNECTED or t is E.Connect:
            self._check_order(t)
        if t is E.Get:  # the most frequent request: only its correlation id to check
            pass
        elif t is E.Put or t is E.Put1:
            if len(ev.data) > self.max_msg_length:  # type: ignore[union-attr]
                raise RemoteProtocolError(f"message of {len(ev.data)} bytes exceeds the negotiated maximum {self.max_msg_length}")  # type: ignore[union-attr]
            if not ev.reply:  # type: ignore[union-attr]
                return
        elif t in _NOT_PLAIN_REQUESTS:
            if t is E.Credit or t is E.HeartbeatReply or (t is E.Heartbeat and not ev.reply):  # type: ignore[union-attr]
                return  # Credit may cross the Consume's end in flight: the driver ignores stale ones
            if t is E.PutBatch or isinstance(ev, columnframes.PutColumns):
                self._batch_items(ev, RemoteProtocolError)  # type: ignore[arg-type]
                return
            if t is E.GetBatch and self.version < E.BATCH_VERSION:
                raise RemoteProtocolError(f"GetBatch needs protocol version {E.BATCH_VERSION}; version {self.version} was agreed")
        corr = ev.corr  # type: ignore[union-attr]
        if corr <= 0 or corr in self._outstanding:
            raise RemoteProtocolError(f"correlation id {corr} is not positive or is still in use")
        self._outstanding[corr] = t
        if t is E.Consume:
            if ev.hobj in self._consuming:  # type: ignore[union-attr]
                raise RemoteProtocolError(f"a second Consume on handle {ev.hobj}")  # type: ignore[union-attr]
            self._consume_req[corr] = ev.hobj  # type: ignore[union-attr]
            self._consuming.add(ev.hobj)  # type: ignore[union-attr]
        elif t is E.Disconnect:
            self.state = State.CLOSED

    def _check_order(self, t: type) -> None:
        """Connect first and once; nothing after Disconnect."""
        if self.state is _IDLE:
            if t is not E.Connect:
                raise RemoteProtocolError(f"{t.__name__} before Connect")
            self.state = State.CONNECTING
        elif t is E.Connect:
            raise RemoteProtocolError("a second Connect")
        elif self.state is _CLOSED:
            raise RemoteProtocolError(f"{t.__name__} after Disconnect")

    def send(self, ev: E.ServerEvent) -> bytes:
        """The bytes of one server frame.

        Raises:
            LocalProtocolError: a reply to nothing outstanding, or a frame not allowed now.
        """
        if type(ev) is E.GetReply:  # a waiting get answered: the frame of every request/reply hop
            corr = ev.corr
            req = self._outstanding.get(corr)
            if req is E.Get or req is E.GetBatch:  # what _send checks, the answer being right
                try:  # on any failure the general encoder runs, and raises what it raises
                    data = codec.get_reply_frame(ev)
                except (ValueError, OverflowError, struct.error):
                    data = None
                if data is not None:
                    del self._outstanding[corr]
                    return data
        return self._send(ev, self._pack)

    def send_get_reply(self, corr: int, md_bytes: bytes, data: bytes, token: bytes, q_name: str) -> bytes | None:
        """``send(GetReply(corr, md_bytes, data, len(data), token, q_name))``, an OK reply
        without properties, when it answers an outstanding Get or GetBatch and packs in one
        step (``send``'s fast path without the event). None otherwise, having changed
        nothing: the caller then sends the event, and ``send`` answers or raises."""
        req = self._outstanding.get(corr)
        if req is not E.Get and req is not E.GetBatch:
            return None
        try:
            frame = codec.ok_get_reply_frame(corr, md_bytes, data, len(data), token, q_name)
        except (ValueError, OverflowError, TypeError, struct.error):
            return None
        del self._outstanding[corr]
        return frame

    def send_parts(self, ev: E.ServerEvent) -> list[bytes]:
        """``send``'s frame as pieces, not joined, for frames of megabytes (a page of
        browsed messages) that are written with one vectored write.

        Raises:
            LocalProtocolError: as ``send``.
        """
        return self._send(ev, self._pack_parts)

    def _send(self, ev: E.ServerEvent, pack: Callable[[E.Event], _Frame]) -> _Frame:
        t = type(ev)
        if t is E.PushedBatch and self.version < E.BATCH_VERSION:
            raise LocalProtocolError(f"PushedBatch needs protocol version {E.BATCH_VERSION}; version {self.version} was agreed")
        if t is E.Pushed or t is E.PersistentNext or t is E.PushedBatch:
            if ev.hobj not in self._consuming:  # type: ignore[union-attr]
                raise LocalProtocolError(f"{t.__name__} on handle {ev.hobj}, which is not consuming")  # type: ignore[union-attr]
            return pack(ev)
        if t is E.Ending:
            self.state = State.CLOSED
            return pack(ev)
        if t is E.Heartbeat:  # reply=True: a probe the client answers (the server's idle deadline)
            return pack(ev)
        corr = ev.corr  # type: ignore[union-attr]
        req = self._outstanding.get(corr)
        if req is None:
            raise LocalProtocolError(f"{t.__name__} for correlation id {corr}, which is not outstanding")
        if t is not E.Reply and t not in _ANSWERS.get(req, ()):
            raise LocalProtocolError(f"{t.__name__} cannot answer {req.__name__}")
        data = pack(ev)
        del self._outstanding[corr]
        failed = getattr(ev, "comp", 0) == 2
        if req is E.Connect:
            if failed:
                self.state = State.CLOSED
            else:
                assert isinstance(ev, E.ConnectReply)
                self._negotiated(ev.max_msg_length, ev.version)
                self.state = State.CONNECTED
        elif req is E.Consume:  # its reply ends the read-ahead
            self._consuming.discard(self._consume_req.pop(corr))
        return data
