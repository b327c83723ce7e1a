"""The ferrymq message-channel protocol: frames and a sans-IO machine for each end.

Every frame is a 12-byte header and a payload (all integers big-endian):

| Off | Len | Field   | Meaning                                                    |
|----:|----:|---------|------------------------------------------------------------|
|   0 |   4 | magic   | ``FMQC``                                                    |
|   4 |   1 | type    | HELLO 1, HELLO_ACK 2, MESSAGE 3, BATCH_END 4, CONFIRM 5, HEARTBEAT 6, HEARTBEAT_ACK 7, CLOSE 8, FAST_MESSAGE 9, PING 10, PING_ACK 11, SECURITY 12, REQUEST 13 |
|   5 |   3 | 0       | reserved                                                   |
|   8 |   4 | length  | payload bytes; bounded before any buffer is taken: 4 KiB until the handshake ends, then the negotiated MAXMSGL plus 64 KiB |

Payloads (``s48`` is a name blank-padded to 48 bytes, ASCII):

- HELLO (sender → receiver): version u32, channel s20, sender qmgr s48, BATCHSZ u32,
  MAXMSGL u32, HBINT u32, SEQWRAP u32, in-doubt sequence u32 (0: none), reset-to u32
  (0: none; RESET CHANNEL SEQNUM(n) sends n), NPMSPEED u32 (MQNPMS_NORMAL 1, FAST 2; a
  HELLO without it, of an older sender, means NORMAL), then, from a sender with
  CONVERT(YES), a security exit or PIPELINELENGTH above 1 only, flags u32 (1: tell me
  your CCSID and Encoding; 2: I have a security exit; 4: I pipeline batches) — a receiver
  older than it refuses that HELLO, so only such a channel needs both ends this recent.
  The in-doubt sequence is the newest of the sender's batches in doubt (informational).
- HELLO_ACK: reason u32 (0: accepted), receiver qmgr s48, BATCHSZ u32, MAXMSGL u32,
  HBINT u32 (each the negotiated value: the smaller of both ends, HBINT the larger), last
  committed sequence u32, then the reason's text (u16 length + UTF-8), then the agreed
  NPMSPEED u32 (FAST only when both ends are FAST; absent: NORMAL), then, only when the
  HELLO asked, or the receiver has a security exit, or both ends pipeline, the receiving
  queue manager's CCSID u32 and Encoding u32 (0 0: not asked; the sender's CONVERT(YES)
  converts to them), then, when the receiver has a security exit or both pipeline, flags
  u32 (2: a security exit; 4: pipelining agreed, as the HELLO asked it and PIPELINELENGTH
  here is above 1: the sender may send the next batch before the last one's CONFIRM).
- MESSAGE: properties length u32, the message's properties in ferrymq's typed binary form
  (ferrymq.properties.model; 0 bytes: none), then the transmission-queue message's data
  as it is (MQXQH, MQMDE, data). FAST_MESSAGE: the same payload, a non-persistent
  message sent outside the batch (NPMSPEED(FAST) agreed): the receiver puts it at once,
  outside any unit of work, and it is neither counted in BATCH_END nor confirmed.
- PING (sender → receiver, instead of HELLO: PING CHANNEL): channel s20, sender qmgr s48,
  then the data to echo (16 to 32768 bytes). PING_ACK: reason u32 (0: the channel is
  defined there as a receiver), receiver qmgr s48, then the data as it came. A ping
  conversation is these two frames (a CLOSE may answer instead); their length is bounded
  by PING_LIMIT before reading.
- REQUEST (requester → its partner, instead of HELLO: a RQSTR channel starting): channel
  s20, requester qmgr s48. The partner, a SVR (with or without CONNAME), answers by
  becoming the sending end of this conversation: its HELLO follows on the same connection
  and the requester answers HELLO_ACK as a receiver. A SDR closes the connection (CLOSE,
  reason 0) and calls back: its own connection to its CONNAME, a HELLO to the requester.
  Any other answer is a CLOSE with the reason.
- BATCH_END: sequence u32, messages u32. CONFIRM: sequence u32, reason u32 (0: committed).
  CONFIRMs come in the order of the BATCH_ENDs they answer; with pipelining agreed a
  second batch may follow a BATCH_END before its CONFIRM, and a third batch's messages
  may follow the second's BATCH_END, but never a third BATCH_END before the first CONFIRM
  (never more than two in doubt). A sender writes a BATCH_END only once its own prepare of
  that batch is durable; its next batch's messages come after it.
- HEARTBEAT / HEARTBEAT_ACK: empty. CLOSE: reason u32, text (u16 + UTF-8).
- SECURITY (either end, after the handshake; the security exits' exchange,
  ferrymq.channels.security): step u32 (SEC_SEND 0: no reply wanted, SEC_REQUEST 1: a
  reply wanted, SEC_DONE 2: this end's exit accepted), then the exit's data.

The machine checks the order (HELLO first; HELLO_ACK answers it; MESSAGE and BATCH_END
only from the sender after the handshake, CONFIRM only from the receiver) and raises
RemoteProtocolError on anything else; nothing from the wire is evaluated.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError

MAGIC = b"FMQC"
VERSION = 1
_HEAD = struct.Struct(">4sB3xI")
(HELLO, HELLO_ACK, MESSAGE, BATCH_END, CONFIRM, HEARTBEAT, HEARTBEAT_ACK, CLOSE, FAST_MESSAGE, PING, PING_ACK, SECURITY,
 REQUEST) = range(1, 14)
PING_DATA = (16, 32768)  # PING CHANNEL DATALEN's range (IBM's)
SEC_SEND, SEC_REQUEST, SEC_DONE = 0, 1, 2
NPMS_NORMAL, NPMS_FAST = 1, 2  # MQNPMS_NORMAL, MQNPMS_FAST
HANDSHAKE_LIMIT = 4096
SLACK = 65536  # room beyond MAXMSGL for a message's headers
PING_LIMIT = PING_DATA[1] + 72  # the longest PING (channel, qmgr, data)
_HELLO = struct.Struct(">I20s48sIIIIII")
_ACK = struct.Struct(">I48sIIIIH")
_TWO = struct.Struct(">II")
_CLOSE = struct.Struct(">IH")
_U32 = struct.Struct(">I")
_PING = struct.Struct(">20s48s")
_PING_ACK = struct.Struct(">I48s")
_OLD_HELLO = _HELLO.size  # before NPMSPEED was added
_ASKS_CCSID = 1  # HELLO flags: the sender converts (CONVERT(YES)) and asks the receiver's CCSID
_SECURITY_EXIT = 2  # HELLO and HELLO_ACK flags: this end has a security exit (SCYEXIT)
_PIPELINED = 4  # HELLO: the sender's PIPELINELENGTH is above 1; HELLO_ACK: the receiver's too (agreed)
# The top of each number's range (IBM's channel attributes; an MQLONG for reasons, CCSID and
# Encoding). A frame's u32 beyond it is malformed: stored as it came, it would reach a
# channel's status, its synchronization record and PCF's signed fields.
MAX_BATCHSZ, MAX_MAXMSGL, MAX_HBINT, MAX_SEQ, MAX_LONG = 9999, 104_857_600, 999_999, 999_999_999, 0x7FFFFFFF


def _name(raw: bytes) -> str:
    return raw.decode("ascii", "replace").rstrip(" \0")


def _pad(name: str, width: int) -> bytes:
    data = name.encode("ascii", "replace")
    if len(data) > width:
        raise LocalProtocolError(f"name {name!r} is longer than {width}")
    return data.ljust(width)


@dataclass(frozen=True, slots=True)
class Hello:
    channel: str
    qmgr: str
    batch_size: int
    max_msg_length: int
    heartbeat: int
    seq_wrap: int
    in_doubt_seq: int = 0
    reset_to: int = 0
    npm_speed: int = NPMS_NORMAL
    asks_ccsid: bool = False  # CONVERT(YES): the HELLO_ACK is to carry the receiver's CCSID and Encoding
    security: int = 0  # 1: the sender has a security exit
    pipelined: bool = False  # the sender's PIPELINELENGTH is above 1


@dataclass(frozen=True, slots=True)
class HelloAck:
    reason: int
    qmgr: str
    batch_size: int
    max_msg_length: int
    heartbeat: int
    last_seq: int
    text: str = ""
    npm_speed: int = NPMS_NORMAL
    ccsid: int = 0  # the receiving queue manager's, when the HELLO asked (0: not told)
    encoding: int = 0
    security: int = 0  # 1: the receiver has a security exit
    pipelined: bool = False  # pipelining agreed: both ends' PIPELINELENGTH above 1


@dataclass(frozen=True, slots=True)
class Message:
    data: bytes
    properties: bytes = b""  # ferrymq.properties.model's binary form, decoded by the agent
    fast: bool = False  # FAST_MESSAGE: outside the batch (NPMSPEED(FAST))


@dataclass(frozen=True, slots=True)
class Ping:
    channel: str
    qmgr: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Request:
    """A requester's first frame: start the named channel's sending end over this connection."""

    channel: str
    qmgr: str


@dataclass(frozen=True, slots=True)
class PingAck:
    reason: int
    qmgr: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Security:
    """One step of the security exits' exchange (``step``: SEC_SEND, SEC_REQUEST, SEC_DONE)."""

    step: int
    data: bytes = b""


@dataclass(frozen=True, slots=True)
class BatchEnd:
    seq: int
    count: int


@dataclass(frozen=True, slots=True)
class Confirm:
    seq: int
    reason: int = 0


@dataclass(frozen=True, slots=True)
class Heartbeat:
    ack: bool = False


@dataclass(frozen=True, slots=True)
class Close:
    reason: int
    text: str = ""


Event = Hello | HelloAck | Message | BatchEnd | Confirm | Heartbeat | Close | Ping | PingAck | Security | Request


def negotiate(mine: Hello, batch_size: int, max_msg_length: int, heartbeat: int) -> tuple[int, int, int]:
    """The values both ends use: the smaller BATCHSZ and MAXMSGL (0 MAXMSGL means the
    other's), the larger HBINT (IBM's rule)."""
    def smaller(a: int, b: int) -> int:
        return min(a, b) if a and b else a or b
    return smaller(mine.batch_size, batch_size), smaller(mine.max_msg_length, max_msg_length), max(mine.heartbeat,
                                                                                                    heartbeat)


def npm_speed(mine: Hello, speed: int) -> int:
    """The agreed NPMSPEED: FAST only when both ends have FAST (IBM's rule)."""
    return NPMS_FAST if mine.npm_speed == NPMS_FAST and speed == NPMS_FAST else NPMS_NORMAL


def encode(ev: Event) -> bytes:
    """One frame's bytes."""
    if isinstance(ev, Hello):
        kind, body = HELLO, _HELLO.pack(VERSION, _pad(ev.channel, 20), _pad(ev.qmgr, 48), ev.batch_size,
                                        ev.max_msg_length, ev.heartbeat, ev.seq_wrap, ev.in_doubt_seq,
                                        ev.reset_to) + _U32.pack(ev.npm_speed) + _hello_flags(ev)
    elif isinstance(ev, HelloAck):
        text = ev.text.encode()[:1024]
        kind, body = HELLO_ACK, _ACK.pack(ev.reason, _pad(ev.qmgr, 48), ev.batch_size, ev.max_msg_length,
                                          ev.heartbeat, ev.last_seq, len(text)) + text + _U32.pack(ev.npm_speed) + (
                                              _ack_tail(ev))
    elif isinstance(ev, Message):
        kind, body = FAST_MESSAGE if ev.fast else MESSAGE, _U32.pack(len(ev.properties)) + ev.properties + ev.data
    elif isinstance(ev, BatchEnd):
        kind, body = BATCH_END, _TWO.pack(ev.seq, ev.count)
    elif isinstance(ev, Ping):
        kind, body = PING, _PING.pack(_pad(ev.channel, 20), _pad(ev.qmgr, 48)) + ev.data
    elif isinstance(ev, Request):
        kind, body = REQUEST, _PING.pack(_pad(ev.channel, 20), _pad(ev.qmgr, 48))
    elif isinstance(ev, PingAck):
        kind, body = PING_ACK, _PING_ACK.pack(ev.reason, _pad(ev.qmgr, 48)) + ev.data
    elif isinstance(ev, Confirm):
        kind, body = CONFIRM, _TWO.pack(ev.seq, ev.reason)
    elif isinstance(ev, Heartbeat):
        kind, body = HEARTBEAT_ACK if ev.ack else HEARTBEAT, b""
    elif isinstance(ev, Security):
        kind, body = SECURITY, _U32.pack(ev.step) + ev.data
    else:
        text = ev.text.encode()[:1024]
        kind, body = CLOSE, _CLOSE.pack(ev.reason, len(text)) + text
    return _HEAD.pack(MAGIC, kind, len(body)) + body


def _decode(kind: int, body: bytes, offset: int) -> Event:
    try:
        if kind == HELLO:
            version, ch, qm, bs, ml, hb, wrap, doubt, reset = _HELLO.unpack_from(body)
            if version != VERSION:
                raise RemoteProtocolError(f"channel protocol version {version} is not {VERSION}", offset)
            speed = NPMS_NORMAL if len(body) == _OLD_HELLO else _U32.unpack_from(body, _OLD_HELLO)[0]
            flags = _U32.unpack(body[_OLD_HELLO + 4:])[0] if len(body) > _OLD_HELLO + 4 else 0
            _within(offset, "HELLO", BATCHSZ=(bs, MAX_BATCHSZ), MAXMSGL=(ml, MAX_MAXMSGL), HBINT=(hb, MAX_HBINT),
                    SEQWRAP=(wrap, MAX_SEQ), in_doubt_sequence=(doubt, MAX_SEQ), reset_sequence=(reset, MAX_SEQ))
            return Hello(_name(ch), _name(qm), bs, ml, hb, wrap, doubt, reset, _speed(speed, offset),
                         bool(flags & _ASKS_CCSID), int(bool(flags & _SECURITY_EXIT)), bool(flags & _PIPELINED))
        if kind == HELLO_ACK:
            reason, qm, bs, ml, hb, last, n = _ACK.unpack_from(body)
            end = _ACK.size + n
            if len(body) not in (end, end + 4, end + 4 + _TWO.size, end + 8 + _TWO.size):
                raise RemoteProtocolError("HELLO_ACK text length does not match the frame", offset)
            text = body[_ACK.size:end].decode("utf-8", "replace")
            speed = _U32.unpack_from(body, end)[0] if len(body) > end else NPMS_NORMAL
            ccsid, encoding = _TWO.unpack_from(body, end + 4) if len(body) > end + 4 else (0, 0)
            flags = _U32.unpack_from(body, end + 12)[0] if len(body) > end + 12 else 0
            _within(offset, "HELLO_ACK", reason=(reason, MAX_LONG), BATCHSZ=(bs, MAX_BATCHSZ), MAXMSGL=(ml, MAX_MAXMSGL),
                    HBINT=(hb, MAX_HBINT), sequence=(last, MAX_SEQ), CCSID=(ccsid, MAX_LONG),
                    Encoding=(encoding, MAX_LONG))
            return HelloAck(reason, _name(qm), bs, ml, hb, last, text, _speed(speed, offset), ccsid, encoding,
                            int(bool(flags & _SECURITY_EXIT)), bool(flags & _PIPELINED))
        if kind in (MESSAGE, FAST_MESSAGE):
            (n,) = _U32.unpack_from(body)
            if n > len(body) - 4:
                raise RemoteProtocolError(f"MESSAGE properties of {n} bytes exceed the frame", offset)
            return Message(body[4 + n:], body[4:4 + n], kind == FAST_MESSAGE)
        if kind == PING:
            ch, qm = _PING.unpack_from(body)
            return Ping(_name(ch), _name(qm), body[_PING.size:])
        if kind == REQUEST:
            if len(body) != _PING.size:
                raise RemoteProtocolError(f"REQUEST of {len(body)} bytes is not {_PING.size}", offset)
            ch, qm = _PING.unpack(body)
            return Request(_name(ch), _name(qm))
        if kind == PING_ACK:
            reason, qm = _PING_ACK.unpack_from(body)
            _within(offset, "PING_ACK", reason=(reason, MAX_LONG))
            return PingAck(reason, _name(qm), body[_PING_ACK.size:])
        if kind in (BATCH_END, CONFIRM):
            a, b = _TWO.unpack(body)
            if kind == BATCH_END:
                _within(offset, "BATCH_END", sequence=(a, MAX_SEQ), messages=(b, MAX_LONG))
                return BatchEnd(a, b)
            _within(offset, "CONFIRM", sequence=(a, MAX_SEQ), reason=(b, MAX_LONG))
            return Confirm(a, b)
        if kind in (HEARTBEAT, HEARTBEAT_ACK):
            if body:
                raise RemoteProtocolError("a heartbeat carries no payload", offset)
            return Heartbeat(kind == HEARTBEAT_ACK)
        if kind == SECURITY:
            (step,) = _U32.unpack_from(body)
            if step not in (SEC_SEND, SEC_REQUEST, SEC_DONE):
                raise RemoteProtocolError(f"SECURITY step {step} is not 0, 1 or 2", offset)
            return Security(step, body[4:])
        if kind == CLOSE:
            reason, n = _CLOSE.unpack_from(body)
            if len(body) != _CLOSE.size + n:
                raise RemoteProtocolError("CLOSE text length does not match the frame", offset)
            _within(offset, "CLOSE", reason=(reason, MAX_LONG))
            return Close(reason, body[_CLOSE.size:].decode("utf-8", "replace"))
    except struct.error as exc:
        raise RemoteProtocolError(f"frame type {kind}: {exc}", offset) from None
    raise RemoteProtocolError(f"unknown frame type {kind}", offset)


def _within(offset: int, frame: str, **fields: tuple[int, int]) -> None:
    for name, (value, top) in fields.items():
        if value > top:
            raise RemoteProtocolError(f"{frame} {name.replace('_', ' ')} {value} is beyond {top}", offset)


def _speed(value: int, offset: int) -> int:
    if value not in (NPMS_NORMAL, NPMS_FAST):
        raise RemoteProtocolError(f"NPMSPEED {value} is neither NORMAL (1) nor FAST (2)", offset)
    return value


def _hello_flags(ev: Hello) -> bytes:
    """HELLO's flags word, written only when a flag is set (a receiver older than it reads
    the rest)."""
    flags = (_ASKS_CCSID if ev.asks_ccsid else 0) | (_SECURITY_EXIT if ev.security else 0) | (
        _PIPELINED if ev.pipelined else 0)
    return _U32.pack(flags) if flags else b""


def _ack_tail(ev: HelloAck) -> bytes:
    """HELLO_ACK's CCSID, Encoding and flags, written only when needed (module docstring)."""
    flags = (_SECURITY_EXIT if ev.security else 0) | (_PIPELINED if ev.pipelined else 0)
    if not (ev.ccsid or flags):
        return b""
    return _TWO.pack(ev.ccsid, ev.encoding) + (_U32.pack(flags) if flags else b"")


# Who may send what once the handshake is done.
_FROM_SENDER = (Message, BatchEnd, Heartbeat, Close, Security)
_FROM_RECEIVER = (Confirm, Heartbeat, Close, Security)


class ChannelConnection:
    """One end of a channel conversation: ``sender=True`` at the sending MCA.

    ``receive_data(bytes)`` then ``events()``; ``send(event) -> bytes``. The first frame
    is the sender's HELLO, answered by one HELLO_ACK; then ``limit`` bounds a frame at the
    negotiated MAXMSGL plus SLACK (set by ``agreed``).

    ``outbound`` and ``inbound`` (the agents' send and receive exits) see each frame's
    payload after the handshake, HELLO and HELLO_ACK never: ``outbound`` the payload this
    end sends, before its header is made; ``inbound`` the payload received, before it is
    decoded. What they return replaces it (the limit bounds it on the wire and again after
    ``inbound``); whatever they raise goes to the caller of ``send`` or ``events``.
    """

    def __init__(self, *, sender: bool) -> None:
        self.sender = sender
        # What is received and not yet decoded: ``_held[_pos:]``, or ``_rx`` while a frame
        # longer than the reads so far is gathered. A read is kept as the bytes object it
        # came in (no copy) and each frame's payload sliced from it once; a frame that a read
        # cut short is joined with the next read, or gathered in ``_rx`` (a bytearray: a
        # large message over many reads is copied once, not once per read).
        self._held = b""
        self._pos = 0
        self._rx: bytearray | None = None
        self.offset = 0  # stream offset of _held[_pos], for errors
        self.limit = HANDSHAKE_LIMIT
        self.said_hello = False  # HELLO or PING sent (sender) or received (receiver)
        self.pinging = False  # the conversation is a PING's
        self.requested = False  # REQUEST sent (a requester) or received (its partner, now the sender)
        self.acked = False  # HELLO_ACK received (sender) or sent (receiver)
        self.closed = False
        self.outbound: Callable[[bytes], bytes] | None = None
        self.inbound: Callable[[bytes], bytes] | None = None

    def agreed(self, max_msg_length: int) -> None:
        self.limit = max_msg_length + SLACK

    def send(self, ev: Event) -> bytes:
        """Raises: LocalProtocolError for a frame this end may not send now."""
        if type(ev) is Message and self.sender and self.acked and not self.pinging and self.outbound is None:
            # A batch's messages, the bulk of a conversation: framed here, without the chains.
            props = ev.properties
            return b"".join((_HEAD.pack(MAGIC, FAST_MESSAGE if ev.fast else MESSAGE, 4 + len(props) + len(ev.data)),
                             _U32.pack(len(props)), props, ev.data))
        if isinstance(ev, Request):
            if self.sender or self.said_hello or self.requested:
                raise LocalProtocolError("only a receiving end says REQUEST, once, before any HELLO")
            self.requested = True
        elif isinstance(ev, (Hello, Ping)):
            if not self.sender or self.said_hello:
                raise LocalProtocolError("only the sender says HELLO or PING, once")
            self.said_hello, self.pinging = True, isinstance(ev, Ping)
        elif isinstance(ev, PingAck):
            if self.sender or not self.pinging or self.acked:
                raise LocalProtocolError("PING_ACK answers one PING")
            self.acked = True
        elif isinstance(ev, HelloAck):
            if self.sender or not self.said_hello or self.acked or self.pinging:
                raise LocalProtocolError("HELLO_ACK answers one HELLO")
            self.acked = True
        elif isinstance(ev, Close):
            pass
        elif self.pinging:
            raise LocalProtocolError(f"{type(ev).__name__} in a ping conversation")
        elif not (self.said_hello and self.acked):
            raise LocalProtocolError(f"{type(ev).__name__} before the handshake")
        elif not isinstance(ev, _FROM_SENDER if self.sender else _FROM_RECEIVER):
            raise LocalProtocolError(f"the {'sender' if self.sender else 'receiver'} does not send {type(ev).__name__}")
        frame = encode(ev)
        if self.outbound is None or isinstance(ev, Hello | HelloAck) or not (self.said_hello and self.acked):
            return frame
        payload = self.outbound(frame[_HEAD.size:])
        return _HEAD.pack(MAGIC, frame[4], len(payload)) + payload

    @property
    def buffer(self) -> bytes:
        """The bytes received and not yet decoded (a frame begun, or frames not yet taken)."""
        return bytes(self._rx) if self._rx is not None else self._held[self._pos:]

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        rx = self._rx
        if rx is not None:
            rx += data
            return
        held, pos = self._held, self._pos
        left = len(held) - pos
        if not left:
            self._held = data if type(data) is bytes else bytes(data)
        elif left >= _HEAD.size and left + len(data) < _HEAD.size + _HEAD.unpack_from(held, pos)[2]:
            self._rx = rx = bytearray(held[pos:])  # still not whole after this read: gathered
            rx += data
            self._held = b""
        else:
            self._held = held[pos:] + data
        self._pos = 0

    def _frame_end(self, buf: bytes | bytearray, pos: int) -> int:
        """Where the frame whose header is at ``pos`` ends, its header checked.

        Raises:
            RemoteProtocolError: bad magic, or a length beyond the limit.
        """
        magic, kind, length = _HEAD.unpack_from(buf, pos)
        if magic != MAGIC:
            raise RemoteProtocolError("not a ferrymq channel frame (bad magic)", self.offset)
        limit = PING_LIMIT if kind in (PING, PING_ACK) and not self.acked else self.limit
        if length > limit:
            raise RemoteProtocolError(f"frame of {length} bytes exceeds the limit {limit}", self.offset)
        end: int = pos + _HEAD.size + length
        return end

    def events(self) -> Iterator[Event]:
        """Every whole frame received so far.

        Raises:
            RemoteProtocolError: bad magic, an oversized length, a frame out of order.
        """
        rx = self._rx
        if rx is not None:  # a gathered frame (at least its header): decoded once it is whole
            if len(rx) < self._frame_end(rx, 0):
                return
            self._held, self._pos, self._rx = bytes(rx), 0, None
        while len(self._held) - self._pos >= _HEAD.size:
            held, pos = self._held, self._pos
            end = self._frame_end(held, pos)
            if len(held) < end:
                return
            kind, start = held[pos + 4], pos + _HEAD.size
            at = self.offset
            self._pos = end
            self.offset += end - pos
            if self.inbound is not None and kind not in (HELLO, HELLO_ACK) and self.said_hello and self.acked:
                held = self.inbound(held[start:end])
                start, end = 0, len(held)
                if end > self.limit:
                    raise RemoteProtocolError(f"frame of {end} bytes after the receive exit exceeds the "
                                              f"limit {self.limit}", at)
            if kind == MESSAGE and self.acked and not self.sender and not self.pinging:
                # A batch's messages, the bulk of a conversation: decoded here, and in order
                # (a sender's MESSAGE after the handshake), without _decode's and _check's
                # chains; the data sliced from the read (its one copy here).
                if end - start < 4:
                    raise RemoteProtocolError(f"frame type {kind}: a MESSAGE shorter than its properties length", at)
                n = int.from_bytes(held[start:start + 4], "big")
                start += 4
                if n > end - start:
                    raise RemoteProtocolError(f"MESSAGE properties of {n} bytes exceed the frame", at)
                yield Message(held[start + n:end], held[start:start + n]) if n else Message(held[start:end])
                continue
            body = held[start:end]
            ev = _decode(kind, body, at)
            self._check(ev, at)
            yield ev

    def _check(self, ev: Event, at: int) -> None:
        if isinstance(ev, Request):
            if self.sender or self.said_hello or self.requested:
                raise RemoteProtocolError("unexpected REQUEST", at)
            self.requested, self.sender = True, True  # this end now sends: its HELLO comes next
        elif isinstance(ev, (Hello, Ping)):
            if self.sender or self.said_hello:
                raise RemoteProtocolError(f"unexpected {type(ev).__name__.upper()}", at)
            self.said_hello, self.pinging = True, isinstance(ev, Ping)
        elif isinstance(ev, PingAck):
            if not self.sender or not self.pinging or self.acked:
                raise RemoteProtocolError("unexpected PING_ACK", at)
            self.acked = True
        elif isinstance(ev, HelloAck):
            if not self.sender or not self.said_hello or self.acked or self.pinging:
                raise RemoteProtocolError("unexpected HELLO_ACK", at)
            self.acked = True
        elif isinstance(ev, Close):
            self.closed = True
        elif self.pinging:
            raise RemoteProtocolError(f"{type(ev).__name__} in a ping conversation", at)
        elif not (self.said_hello and self.acked):
            raise RemoteProtocolError(f"{type(ev).__name__} before the handshake", at)
        elif not isinstance(ev, _FROM_RECEIVER if self.sender else _FROM_SENDER):
            raise RemoteProtocolError(f"the {'receiver' if self.sender else 'sender'} may not send "
                                      f"{type(ev).__name__}", at)
