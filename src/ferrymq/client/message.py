"""What the client hands back: ``Message`` (a got or browsed message) and ``PutResult``.

Both hold the message descriptor as the bytes that came off the wire (checked by the codec
to be an MQMD) and make the ``MQMD`` when it is first asked for: a consumer that reads
``data`` and ``msg_id`` never pays for making one.
"""

from __future__ import annotations

from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.wire import ccsid as ccsid_table
from ferrymq.wire.mqmd import CORREL_ID_BYTES, MQMD, MSG_ID_BYTES, V2_LE_HEAD

_decode = MQMD.decode  # bound once: a classmethod looked up on its class makes a method at every call
_V2_LENGTH = C.MQMD_LENGTH_2


class _Described:
    __slots__ = ("_md",)

    _md: MQMD | bytes  # bytes until ``md`` is first read

    @property
    def md(self) -> MQMD:
        """The full message descriptor."""
        md = self._md
        if isinstance(md, bytes):
            md = self._md = _decode(md)
        return md

    @property
    def md_bytes(self) -> bytes:
        """The descriptor's bytes (little-endian, in its own version)."""
        md = self._md
        if type(md) is bytes and len(md) == _V2_LENGTH and md[:8] == V2_LE_HEAD:
            return md  # a whole little-endian v2 descriptor, as it came: what decode and pack give back
        return self.md.pack()

    @property
    def msg_id(self) -> bytes:
        md = self._md
        return md.msg_id if type(md) is MQMD else md[MSG_ID_BYTES]  # type: ignore[index]  # type(): no call

    @property
    def correl_id(self) -> bytes:
        md = self._md
        return md.correl_id if type(md) is MQMD else md[CORREL_ID_BYTES]  # type: ignore[index]  # as msg_id


class Message(_Described):
    """A message from ``get`` or ``browse``: ``data`` plus the descriptor's fields.

    ``data_length`` is the message's full length (larger than ``len(data)`` when the
    message was truncated); ``reason`` carries a warning such as MQRC_TRUNCATED_MSG_ACCEPTED.
    ``properties`` is the typed mapping of the message's properties (``properties.type_of(name)``
    gives the MQTYPE_*): the Pythonic API gets with a message handle, so they come here and
    not as an MQRFH2 in ``data`` (unless the queue has PROPCTL(FORCE)).
    """

    __slots__ = ("_properties", "data", "data_length", "msg_token", "reason")

    def __init__(self, md: MQMD | bytes, data: bytes, data_length: int = -1, msg_token: bytes = bytes(16),
                 properties: PropertySet | None = None, reason: int = C.MQRC_NONE) -> None:
        """``md``: the descriptor, or the bytes of one (as the codec checked them)."""
        self._md = md
        self.data = data
        self.data_length = len(data) if data_length < 0 else data_length
        self.msg_token = msg_token
        self._properties = properties  # None: none came; the empty set is made when asked for
        self.reason = reason

    @property
    def properties(self) -> PropertySet:
        props = self._properties
        if props is None:
            props = self._properties = PropertySet()
        return props

    @properties.setter
    def properties(self, value: PropertySet) -> None:
        self._properties = value

    @property
    def text(self) -> str:
        """The data as text in the message's CCSID when ferrymq knows it (ccsid.SUPPORTED;
        UTF-16 in the byte order of its Encoding), else as UTF-8; bytes that are not text
        there become U+FFFD."""
        md = self.md
        ccsid = md.coded_char_set_id
        if not ccsid_table.is_supported(ccsid):
            return self.data.decode("utf-8", errors="replace")
        big = md.encoding & C.MQENC_INTEGER_MASK == C.MQENC_INTEGER_NORMAL
        return ccsid_table.decode(self.data, ccsid, big_endian=big, errors="replace")

    @property
    def priority(self) -> int:
        return self.md.priority

    @property
    def persistent(self) -> bool:
        return self.md.persistence == C.MQPER_PERSISTENT

    @property
    def reply_to_q(self) -> str:
        return self.md.reply_to_q

    @property
    def reply_to_q_mgr(self) -> str:
        return self.md.reply_to_q_mgr

    @property
    def format(self) -> str:
        return self.md.format

    @property
    def backout_count(self) -> int:
        return self.md.backout_count

    @property
    def put_timestamp(self) -> str:
        """PutDate and PutTime as ``YYYYMMDDHHMMSSTH`` (GMT)."""
        return self.md.put_date + self.md.put_time

    def __repr__(self) -> str:
        preview = self.data[:32]
        return f"Message(msg_id={self.msg_id.hex()}, length={self.data_length}, data={preview!r}{'...' if len(self.data) > 32 else ''})"


class PutResult(_Described):
    """What a put returns: the identifiers the message got, and its descriptor.

    For an asynchronous put (MQPMO_ASYNC_RESPONSE) the client chose the MsgId itself and
    the descriptor is the one sent; the queue manager's outcome is reported by ``stat()``.
    """

    __slots__ = ("resolved_q_mgr_name", "resolved_q_name")

    def __init__(self, md_bytes: MQMD | bytes, md: MQMD | None = None, resolved_q_name: str = "",
                 resolved_q_mgr_name: str = "") -> None:
        """``md_bytes``: the descriptor, or the bytes of one (as packed or checked), unless ``md`` is given."""
        self._md = md_bytes if md is None else md
        self.resolved_q_name = resolved_q_name
        self.resolved_q_mgr_name = resolved_q_mgr_name

    def __repr__(self) -> str:
        return f"PutResult(msg_id={self.msg_id.hex()}, correl_id={self.correl_id.hex()})"


class AsyncPutStatus:
    """MQSTAT for asynchronous puts: counts since the last ``stat()`` and the first problem."""

    __slots__ = ("failures", "first_error", "successes", "warnings")

    def __init__(self, successes: int, warnings: int, failures: int, first_error: Exception | None) -> None:
        self.successes = successes
        self.warnings = warnings
        self.failures = failures
        self.first_error = first_error

    def __repr__(self) -> str:
        return (f"AsyncPutStatus(successes={self.successes}, warnings={self.warnings}, "
                f"failures={self.failures}, first_error={self.first_error!r})")
