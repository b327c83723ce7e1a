"""Sans-IO state machines of the client protocol: ``ClientConnection`` and ``ServerConnection``.

The h11 shape: feed bytes with ``receive_data(data)`` (``b""`` = the peer closed), take
events with ``next_event()`` until it returns ``NEED_DATA``, turn events into bytes with
``send(event)``. No sockets, no clocks: the drivers (ferrymq.server, ferrymq.client) own
I/O, timers and heartbeats.

Frames are packed and decoded by the code generated from their declarations
(ferrymq.protocol.codec), a frame decoded where it lies in the receive buffer. A frame
carries no GPacket properties section, and its length is checked against the limit as soon
as its 36-byte header is in, before any of its body is buffered (the limit is small until
CONNECT has negotiated the maximum message length). The conversation's rules are one table
(ferrymq.protocol.rules), which both ends apply: to what they send, raising
``LocalProtocolError`` from ``send()``, and to what they receive, where the breach is the
peer's: ``next_event()`` raises ``RemoteProtocolError`` and leaves the machine in ``ERROR``.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable, Iterable
from typing import Final, cast

from ferrymq.errors import DecodeError
from ferrymq.protocol import codec, columnframes, layout, rules, seqframes
from ferrymq.protocol import events as E
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.protocol.rules import FRAME_OVERHEAD, HANDSHAKE_LIMIT, Conversation, CrossedInFlight, State
from ferrymq.wire.gpacket import HEADER_SIZE, GPacketReader

OWN_BUFFER_FRAMES: Final = frozenset({seqframes.T_BROWSE_COLUMNS_REPLY})
"""The frames that ``packet_room`` reads into a buffer of their own, a bytearray: their
decoders copy what they keep or keep views of it, and never a slice of the buffer, which
would be a bytearray where bytes are expected (a message's data, an identifier)."""

__all__ = ["CLOSED", "FRAME_OVERHEAD", "HANDSHAKE_LIMIT", "NEED_DATA", "ClientConnection", "ServerConnection", "State"]


class _Sentinel(enum.Enum):
    NEED_DATA = "NEED_DATA"
    CLOSED = "CLOSED"


NEED_DATA: Final = _Sentinel.NEED_DATA
"""next_event(): no complete frame buffered; feed more bytes."""
CLOSED: Final = _Sentinel.CLOSED
"""next_event(): the peer closed its side (after every buffered frame was returned)."""

Next = E.Event | _Sentinel

_PACKERS = codec.PACKERS
_ENCODING_ERRORS = (ValueError, OverflowError, TypeError, struct.error)

_DecodePacket = Callable[[bytes | bytearray, int, int, int], "tuple[E.Event, int] | None"]
_Decode = Callable[[bytes | bytearray, int, int, int, int], E.Event]
Incoming = dict[int, tuple[_DecodePacket, rules.Rule, _Decode]]
"""The frames one end accepts: packet type -> its packet decoder, the rule of its event,
and its body decoder."""
Outgoing = dict[type, "layout.Send[E.Event | columnframes.PutColumns]"]
"""The events one end sends: class -> its frame's sender (layout.Frame.sender: its packer
and its rule at once)."""


def _incoming(frames: dict[int, codec.Decoder], packets: dict[int, codec.PacketDecoder],
              theirs: dict[type, rules.Rule]) -> Incoming:
    return {ptype: (cast(_DecodePacket, packets[ptype]), theirs[codec.EVENTS[ptype]], cast(_Decode, decode))
            for ptype, decode in frames.items()}


Takers = list["layout.Take[E.Event] | None"]
"""The step that takes each usual packet (layout.Frame.taker: its decoder and its rule at
once), by the low byte of its type: every packet type of the client protocol lies in
1024..1279 (codec), so that byte alone tells the frames apart, and the taker checks the
whole type (another goes the general way). A list of 256, None where no frame has a
taker: indexed by a byte, one step of the interpreter's own, where a dict's ``get`` is
a method call per frame."""

NO_TAKERS: Final[Takers] = [None] * 256
"""The takers of a machine whose stream has ended or broken: none."""


def _make_takers(incoming: Incoming, md_as_bytes: bool = False) -> Takers:
    assert all(ptype >> 8 == 4 for ptype in incoming), "a packet type outside 1024..1279"
    out: Takers = [None] * 256
    for ptype, (_, rule, _) in incoming.items():
        lines, names = rules.USUAL.get(rule, (None, {}))
        take = codec.FRAMES[codec.EVENTS[ptype]].taker(
            lines, {**names, "_rule": rule, "_LocalProtocolError": LocalProtocolError},
            md_as_bytes=md_as_bytes and ptype == codec.T_PUT)
        if take is not None:
            out[ptype & 0xFF] = take
    return out


def _outgoing(mine: dict[type, rules.Rule]) -> Outgoing:
    out: Outgoing = {}
    for t, rule in mine.items():
        lines, names = rules.USUAL.get(rule, (None, {}))
        out[t] = codec.FRAMES[t].sender(lines, {**names, "_rule": rule})
    return out


class _Machine(Conversation):
    """What both ends share: the byte buffer, the frame reader, the writer, and the
    conversation's state with the rules of each side (``_mine`` for what this end sends,
    ``_theirs`` for what it receives), one lookup each per frame."""

    _theirs: Incoming
    _takers: Takers
    _mine: Outgoing

    def __init__(self) -> None:
        super().__init__()
        self._reader = GPacketReader(max_size=HANDSHAKE_LIMIT, max_properties=0)  # frames carry none
        self._fed = 0  # bytes received, for stream offsets in error messages
        self._eof = False
        self._error: RemoteProtocolError | None = None
        self._taking = self._takers
        """The takers ``take_event`` may use: none once the stream has ended or broken."""
        self.drained = True
        """next_event has returned every event of the bytes received so far: its next call
        would return NEED_DATA, and a driver may leave it out. False after the end of the
        stream until CLOSED has been returned, and after an error (the call raises it)."""
        self.frame_begun = False
        """A frame's header is in and its body is not (set when next_event returns NEED_DATA):
        only then can ``packet_room`` give room, so a driver asks it only then, not per read."""

    def _negotiated(self, max_msg_length: int, version: int) -> None:
        super()._negotiated(max_msg_length, version)
        self._reader.max_size = self.max_packet

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
        self.drained = False
        if not data:
            self._eof = True
            self._taking = NO_TAKERS
            return
        if self._eof:
            raise RuntimeError("received data after the end of the stream")
        if self._error is None:
            self._fed += len(data)
            reader = self._reader
            # GPacketReader.feed's usual read, without the call: a drained reader holds no
            # byte, no header begun and no error, so the read becomes its buffer as it is.
            if reader.drained and type(data) is bytes and reader._rx is None:
                reader._buf, reader._pos, reader._end = data, 0, len(data)
                reader.drained = False
                return
            reader.feed(data)

    def take_event(self, data: bytes) -> E.Event | None:
        """The first event of a read that begins with a whole usual packet while nothing is
        buffered (what a request/reply loop receives: a reply alone), taken where it lies by
        its frame's taker, the event ``receive_data(data)`` then ``next_event()`` would give
        (the read's rest buffered after it). None for any other read, having taken nothing:
        the driver feeds it with ``receive_data``. Apart, so that what a driver does before
        bytes are buffered (the client's test for a torn frame) costs nothing on this way.
        """
        reader = self._reader
        have = len(data)
        if reader.drained and have >= HEADER_SIZE:
            take = self._taking[data[3]]
            if take is not None:
                try:
                    got = take(self, data, 0, have, reader.max_size)
                except DecodeError:  # next_event says what is wrong
                    return None
                if got is not None:
                    ev, end = got
                    self._fed += have
                    # ``drained`` is left as it is: True, as nothing was buffered (or, after a
                    # read of no bytes into the buffer, False: next_event then says NEED_DATA).
                    if end != have:  # more after it: buffered from there (receive_data's way, or copied)
                        self.drained = False
                        if type(data) is bytes and reader._rx is None:
                            reader._buf, reader._pos, reader._end = data, end, have
                            reader.drained = False
                        else:
                            reader.feed(data[end:])
                    return ev
        return None

    def get_buffer(self, sizehint: int = -1) -> memoryview:
        """Room for the peer's next bytes to be read into, then ``buffer_updated``: the way
        in of ``asyncio.BufferedProtocol``, with no bytes object per read (GPacketReader)."""
        return self._reader.get_buffer(sizehint)

    def packet_room(self, least: int) -> memoryview | None:
        """The missing rest of a frame of ``least`` bytes or more that has begun, to read
        into, then ``packet_filled`` (GPacketReader.packet_room); None otherwise: then
        read as usual (``receive_data``). Always None while ``frame_begun`` is False."""
        if self._error is not None or self._eof:
            return None
        return self._reader.packet_room(least, OWN_BUFFER_FRAMES)

    def packet_filled(self, nbytes: int) -> None:
        """``nbytes`` from the peer were read into the room ``packet_room`` gave."""
        self.drained = False
        self._fed += nbytes
        self._reader.packet_filled(nbytes)

    def buffer_updated(self, nbytes: int) -> None:
        """``nbytes`` from the peer were read into the room ``get_buffer`` gave.

        Raises:
            RuntimeError: data after the end of the stream.
        """
        if self._eof:
            raise RuntimeError("received data after the end of the stream")
        self.drained = False
        if self._error is None:
            self._fed += nbytes
            self._reader.buffer_updated(nbytes)

    def next_event(self) -> Next:
        """The next event, ``NEED_DATA`` or ``CLOSED``.

        Raises:
            RemoteProtocolError: the peer's bytes break the protocol (also on every later call).
        """
        if self._error is not None:
            raise self._error
        reader = self._reader
        buf, pos, have = reader._buf, reader._pos, reader._end
        try:
            got = None
            # (the reader's own error is always this machine's too, which was raised above)
            if have - pos >= HEADER_SIZE and reader._header is None:
                # The usual packet: whole in the buffer, read with its header and its rule
                # kept by its frame's taker, the frame told by the type in the header (the
                # taker checks the header as GPacketReader.next_in_place does, and leaves
                # every other case, and every error, to the general way below).
                take = self._takers[buf[pos + 3]]
                if take is not None:
                    try:
                        got = take(self, buf, pos, have, reader.max_size)
                    except DecodeError:  # the general decoder below says what is wrong
                        got = None
            if got is not None:
                ev, end = got
                # GPacketReader.consume(end), inline: a request/reply hop takes two frames
                # of one read (a put and the get after it), a reply one of its own.
                if end != have or reader._rx is not None:  # the buffer is kept: past the frame
                    reader._pos = end
                    reader.drained = end == have and not reader._more
                elif not reader._more:  # the read is taken whole: dropped
                    reader._buf, reader._pos, reader._end = b"", 0, 0
                    reader.drained = True
                else:
                    reader.consume(end)
            else:
                try:
                    frame = reader.next_in_place()
                except DecodeError as exc:  # the framing itself: bad magic, version, size over the limit
                    raise RemoteProtocolError(f"bad packet: {exc}", self._fed - reader.buffered) from None
                if frame is None:
                    if self._eof:
                        return self._no_frame()
                    self.drained = True
                    self.frame_begun = reader._header is not None
                    return NEED_DATA
                self.frame_begun = False
                ptype, flags, corr, props_size, buf, start, end = frame
                entry = self._theirs.get(ptype)
                if entry is None or props_size:
                    raise self._refused(ptype, props_size, end - start)
                _, rule, decode = entry
                try:
                    ev = decode(buf, start, end, corr, flags)
                except DecodeError as exc:
                    raise RemoteProtocolError(f"malformed {codec.NAMES[ptype]} frame: {exc}",
                                              self._fed - reader.buffered - (end - start + HEADER_SIZE)) from None
                try:
                    rule(self, ev)
                except CrossedInFlight:  # no breach: the driver ignores such a frame
                    pass
                except LocalProtocolError as exc:  # the rule is the peer's to keep: its breach is theirs
                    raise RemoteProtocolError(str(exc)) from None
        except RemoteProtocolError as exc:
            self._error = exc
            self._taking = NO_TAKERS
            self.state = State.ERROR
            raise
        self.drained = reader.drained and not self._eof
        return ev

    def _refused(self, ptype: int, props_size: int, size: int) -> RemoteProtocolError:
        where = self._fed - self._reader.buffered - size - HEADER_SIZE  # where the frame began in the stream
        if props_size:  # message properties travel in the payload (docs/protocol.md)
            return RemoteProtocolError(f"{codec.NAMES.get(ptype, ptype)} frame has a GPacket properties section of "
                                       f"{props_size} bytes; this protocol's frames have none", where)
        return RemoteProtocolError(f"malformed {ptype} frame: packet type {ptype} is not valid in this direction",
                                   where)

    def _no_frame(self) -> Next:
        if self._reader.buffered:
            raise RemoteProtocolError("stream ended inside a packet", self._fed - self._reader.buffered)
        self.state = State.CLOSED
        return CLOSED

    # -- output --------------------------------------------------------------------------

    def _send(self, ev: E.Event | columnframes.PutColumns) -> list[bytes]:
        """The packet of ``ev`` as pieces, once the rule of ``ev`` has allowed it and
        applied it (an event that cannot be encoded changes nothing)."""
        parts: list[bytes] = []
        try:  # a subscript, not get(): no method call per frame
            send = self._mine[type(ev)]
        except KeyError:
            raise LocalProtocolError(f"{type(ev).__name__} is not a frame this side sends") from None
        try:
            send(self, ev, parts)
        except _ENCODING_ERRORS as exc:
            raise LocalProtocolError(f"cannot encode {type(ev).__name__}: {exc}") from None
        return parts

    def _pack(self, ev: E.Event | columnframes.PutColumns) -> bytes:
        """The packet of ``ev``, whatever the conversation's state (a test's rogue peer)."""
        return b"".join(_PACKERS[type(ev)](ev))

    def send(self, ev: E.Event | columnframes.PutColumns) -> bytes:
        """The bytes of one frame.

        Raises:
            LocalProtocolError: a frame the conversation does not allow now, or one that
                cannot be encoded.
        """
        # _send's work, inline: every reply a server writes comes through here
        parts: list[bytes] = []
        try:  # a subscript, not get(): no method call per frame
            send = self._mine[type(ev)]
        except KeyError:
            raise LocalProtocolError(f"{type(ev).__name__} is not a frame this side sends") from None
        try:
            send(self, ev, parts)
        except _ENCODING_ERRORS as exc:
            raise LocalProtocolError(f"cannot encode {type(ev).__name__}: {exc}") from None
        return b"".join(parts)  # (a frame of one piece is that piece: join returns a lone bytes as it is)

    def send_parts(self, ev: E.Event | columnframes.PutColumns) -> list[bytes]:
        """``send``'s frame as pieces, not joined, for frames of megabytes (a page of
        browsed messages) that are written with one vectored write.

        Raises:
            LocalProtocolError: as ``send``.
        """
        return self._send(ev)

    def send_many(self, events: Iterable[E.Event | columnframes.PutColumns]) -> bytes:
        """The bytes of several frames, one after another, in one join (a pipelined write:
        an asynchronous put and the get after it leave in one write, their data copied once).

        Raises:
            LocalProtocolError: as ``send``, for the first event refused; the events before it
                were sent (the conversation's state moved), and their bytes are lost with the error.
        """
        parts: list[bytes] = []
        mine = self._mine
        for ev in events:  # _send's work, inline: a request/reply loop's every write comes here
            try:
                send = mine[type(ev)]
            except KeyError:
                raise LocalProtocolError(f"{type(ev).__name__} is not a frame this side sends") from None
            try:
                send(self, ev, parts)
            except _ENCODING_ERRORS as exc:
                raise LocalProtocolError(f"cannot encode {type(ev).__name__}: {exc}") from None
        return b"".join(parts)


class ClientConnection(_Machine):
    """The client's end: sends requests, receives replies and pushed messages."""

    _theirs = _incoming(codec.SERVER_FRAMES, codec.SERVER_PACKETS, rules.SERVER_SENDS)
    _takers = _make_takers(_theirs)
    _mine = _outgoing(rules.CLIENT_SENDS)


class ServerConnection(_Machine):
    """The server's end: receives requests, sends replies, pushed messages, heartbeats."""

    _theirs = _incoming(codec.CLIENT_FRAMES, codec.CLIENT_PACKETS, rules.CLIENT_SENDS)
    _takers = _make_takers(_theirs)
    _mine = _outgoing(rules.SERVER_SENDS)
    _theirs_md_bytes = _incoming(codec.CLIENT_FRAMES_MD_BYTES, codec.CLIENT_PACKETS_MD_BYTES, rules.CLIENT_SENDS)
    _takers_md_bytes = _make_takers(_theirs_md_bytes, md_as_bytes=True)

    def __init__(self, *, max_msg_length: int = 4 * 1024 * 1024, raw_put_md: bool = False) -> None:
        """``raw_put_md``: a Put event's ``md`` is the MQMD's bytes (checked to be one), for
        a driver that decodes it only when it must."""
        super().__init__()
        if raw_put_md:
            self._theirs, self._takers = self._theirs_md_bytes, self._takers_md_bytes
            self._taking = self._takers
        self.server_max_msg_length = max_msg_length


layout.CODE.save()  # the machines' takers are made: keep their code for the next process
