"""pymqi's ``Queue``: MQOPEN, MQPUT, MQGET, MQINQ, MQSET and MQCLOSE on one object handle.

As in pymqi, ``Queue(qmgr, name)`` without open options opens the queue on first use:
for output on ``put``, for input (or browse, when the GMO asks to browse) on ``get``,
for inquire on ``inquire`` and for set on ``set``. ``Queue(qmgr, name, options)`` opens
at once. MD, GMO, PMO and OD passed in are updated in place from the reply.
"""

from __future__ import annotations

import contextlib
from types import TracebackType
from typing import Any, Protocol

from ferrymq.client import mqi
from ferrymq.client.message import Message
from ferrymq.client.sync import Client
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.pymqi import ahead, handles, syncahead
from ferrymq.pymqi.core import QueueManager, _after_put, _as_od, _call, _data, _inquire, _open
from ferrymq.pymqi.errors import MQMIError, PYIFError, from_mq_error
from ferrymq.pymqi.rfh2 import RFH2
from ferrymq.pymqi.structs import GMO, MD, MSG_FLAGS_AT, OD, PMO, as_bytes, text
from ferrymq.wire.mqmd import MQMD, V1_LE_HEAD, V2_LE_HEAD

DEFAULT_OPEN = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_OUTPUT
_BROWSE = C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT | C.MQGMO_BROWSE_MSG_UNDER_CURSOR


class Queue:
    """An MQ queue opened through a ``QueueManager``."""

    def __init__(self, qmgr: QueueManager, q_desc: OD | str | bytes | None = None,
                 open_opts: int | None = None) -> None:
        self._qmgr = qmgr
        self._od: OD | None = None if q_desc is None else _as_od(q_desc)
        self._hobj = 0
        self._open_opts = 0
        self._lazy = False
        self._ahead: ahead.ReadAhead | None = None  # set at the first get of a read-ahead handle
        self._ahead_known = False  # whether the handle's read-ahead was decided
        self._sync: syncahead.SyncAhead | None = None  # gets read ahead under syncpoint (syncahead)
        self._hobj_of_sync = 0  # its key in the QueueManager's sync_ahead
        if self._od is not None and open_opts is not None:
            self.open(self._od, open_opts)

    # -- open / close --------------------------------------------------------------------

    def open(self, q_desc: OD | str | bytes, open_opts: int | None = None) -> None:
        """MQOPEN (default options MQOO_INPUT_AS_Q_DEF | MQOO_OUTPUT). A model queue's
        generated name is written back into the OD's ObjectName.

        Raises:
            PYIFError: the queue is already open.
            MQMIError: the queue manager refused.
        """
        if self._hobj:
            raise PYIFError("The Queue is already open")
        self._od = _as_od(q_desc)
        options = DEFAULT_OPEN if open_opts is None else open_opts
        self._hobj = _open(self._client(), self._od, options)
        self._open_opts = options
        self._lazy = False
        self._forget_ahead()

    def _forget_ahead(self) -> None:
        self._ahead, self._ahead_known = None, False
        if self._sync is not None:
            self._qmgr.sync_ahead.pop(self._hobj_of_sync, None)
            self._sync = None

    def _client(self) -> Client:
        return self._qmgr._require()

    def _ensure_open(self, options: int) -> int:
        """Open on first use; a queue opened that way is reopened with the union of the
        options when a later call needs more (pymqi would fail with e.g. 2037)."""
        if self._hobj and (not self._lazy or self._open_opts & options == options):
            return self._hobj
        if self._od is None:
            raise PYIFError("The Queue is not open and has no descriptor to open it with")
        if self._hobj:
            options |= self._open_opts
            self.close()
        self.open(self._od, options)
        self._lazy = True
        return self._hobj

    def close(self, options: int = C.MQCO_NONE) -> None:
        """MQCLOSE (``MQCO_DELETE``/``MQCO_DELETE_PURGE`` for a dynamic queue).

        Raises:
            PYIFError: the queue is not open.
        """
        if not self._hobj:
            raise PYIFError("not open")
        if options & C.MQCO_QUIESCE and self._ahead is not None and self._ahead.buffered():
            # IBM: messages pushed ahead and not yet got keep the handle open
            raise MQMIError(C.MQCC_WARNING, C.MQRC_READ_AHEAD_MSGS)
        client = self._client()
        if self._sync is not None:
            self._qmgr.return_ahead(client, self._hobj, self._sync)
        hobj, self._hobj = self._hobj, 0
        self._forget_ahead()
        options &= ~C.MQCO_QUIESCE
        _call(lambda: mqi.mqclose(client, hobj, options))

    def get_handle(self) -> int:
        """The object handle (0 when not open)."""
        return self._hobj

    def set_handle(self, queue_handle: int) -> None:
        """Take an object handle opened elsewhere (a subscription's queue), as pymqi does."""
        self._forget_ahead()
        self._hobj = queue_handle
        self._open_opts = 0
        self._lazy = False

    @property
    def name(self) -> str:
        """The queue's name (the generated one for a model queue once open)."""
        return "" if self._od is None else text(self._od.ObjectName)

    def __del__(self) -> None:
        # pymqi closes a queue its program dropped (a handle left open would keep the queue
        # in use: DELETE QLOCAL then fails with MQRCCF_OBJECT_OPEN).
        if getattr(self, "_hobj", 0) and self._qmgr.is_connected:
            with contextlib.suppress(Exception):
                self.close()

    def __enter__(self) -> Queue:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if self._hobj and self._qmgr.is_connected:
            self.close()

    # -- messages ------------------------------------------------------------------------

    def put(self, msg: bytes | str, *opts: Any) -> None:
        """MQPUT: ``put(msg, mDesc=None, putOpts=None)``. The MD comes back with the
        MsgId, PutDate/PutTime and the rest the queue manager filled in. The properties of
        PMO OriginalMsgHandle and NewMsgHandle (PMO version 3) travel with the message."""
        n = len(opts)
        md: MD = opts[0] if n > 0 and opts[0] is not None else MD()
        pmo: PMO = opts[1] if n > 1 and opts[1] is not None else PMO()
        # handles.outgoing's own test, first: most puts carry no message handle
        props = handles.outgoing(pmo) if pmo.Version >= C.MQPMO_VERSION_3 and (
            pmo.OriginalMsgHandle or pmo.NewMsgHandle) else None
        hobj = self._hobj if self._hobj and not self._lazy else self._ensure_open(C.MQOO_OUTPUT)
        client = self._qmgr._client or self._client()  # _client(): PYIFError when not connected
        data = msg if type(msg) is bytes else _data(msg, md, self._qmgr)
        options = pmo.Options
        if options & C.MQPMO_ASYNC_RESPONSE or (
                not options & C.MQPMO_SYNC_RESPONSE
                and ahead.wants_async(options, client, self._qmgr.q_defaults, self.name)):
            try:
                ahead.put_async(client, client._handles.current(hobj), md, data, pmo, props)
            except MQError as exc:
                raise from_mq_error(exc) from None
            return
        packed = md.wire()
        reply = _call(lambda: mqi.mqput(client, hobj, packed, data, pmo.Options, props))
        _after_put(reply, md, pmo)

    def put_rfh2(self, msg: bytes | str, *opts: Any) -> None:
        """``put_rfh2(msg, mDesc, putOpts, [rfh2, ...])``: put with the MQRFH2 headers packed in
        front of the data (each in the encoding of the structure before it). The MD's Format
        must already say MQHRF2, as in pymqi.

        Raises:
            TypeError: the headers are not a list.
        """
        if len(opts) >= 3 and opts[2] is not None:
            if not isinstance(opts[2], list):
                raise TypeError("Third item of opts should be a list.")
            encoding = opts[0]["Encoding"] if opts[0] is not None else C.MQENC_NATIVE
            head = b""
            for header in opts[2]:
                if header is not None:
                    head += header.pack(encoding)
                    encoding = header["Encoding"]
            if isinstance(msg, str):
                raise TypeError(f"Python 3 style string (unicode) found but not allowed here: `{msg}`. Convert to bytes.")
            self.put(head + bytes(msg), *opts[0:2])
        else:
            self.put(msg, *opts)

    def get(self, max_length: int | None = None, *opts: Any) -> bytes:
        """MQGET: ``get(max_length=None, mDesc=None, getOpts=None)`` → the message data.

        ``max_length=None`` takes messages of any size the connection carries. A message
        longer than ``max_length`` raises MQMIError 2080 (MQRC_TRUNCATED_MSG_FAILED; it
        stays on the queue) or, with MQGMO_ACCEPT_TRUNCATED_MSG, 2079 (it is removed);
        either way the error has ``message`` (the first ``max_length`` bytes) and
        ``original_length``, and the MD holds the message's descriptor.

        Raises:
            MQMIError: e.g. 2033 (MQRC_NO_MSG_AVAILABLE) when nothing arrived in the wait.
        """
        n = len(opts)
        md: MD = opts[0] if n > 0 and opts[0] is not None else MD()
        gmo: GMO = opts[1] if n > 1 and opts[1] is not None else GMO()
        handle = handles.incoming(gmo) if gmo.MsgHandle else None  # MQHM_NONE is 0
        hobj = self._hobj if self._hobj and not self._lazy else \
            self._ensure_open(C.MQOO_BROWSE if gmo.Options & _BROWSE else C.MQOO_INPUT_AS_Q_DEF)
        client = self._qmgr._client or self._client()
        buffer = client._s.max_msg_length if max_length is None else max_length  # mqi.max_msg_length
        match = gmo.MatchOptions if gmo.Version >= C.MQGMO_VERSION_2 else (
            C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID)
        if not self._ahead_known:
            self._decide_ahead(client, hobj)
        ra = self._ahead
        if ra is not None and not ra.off:
            # served by read-ahead: the next pushed message (see ferrymq.pymqi.ahead)
            try:
                msg = ra.next(client._handles, hobj, gmo.Options, match, md, gmo.WaitInterval)
            except MQMIError:
                raise
            except MQError as exc:
                raise from_mq_error(exc) from None
            if msg is not None:
                return _deliver(msg, ra, buffer, md, gmo, handle)
        sa = self._sync
        if sa is not None and (ra is None or ra.off):
            if syncahead.serves(gmo.Options, match, md.MsgId, md.CorrelId, md.GroupId):
                return self._get_sync_ahead(sa, client, hobj, buffer, md, gmo, handle, match)
            if sa.buffer:  # this get may want one of them, or see the queue as it is
                self._qmgr.return_ahead(client, hobj, sa)
        return self._get_plain(client, hobj, buffer, md, gmo, handle, match)

    def _decide_ahead(self, client: Client, hobj: int) -> None:
        """At the handle's first get: whether it reads ahead (docs/pymqi.md)."""
        self._ahead_known = True
        if not ahead.reads_ahead(self._open_opts, client, self._qmgr.q_defaults, self.name):
            return
        name = self.name
        propctl = self._qmgr.q_defaults[name][2]
        self._ahead = ahead.ReadAhead(client, client.handles.current(hobj), name, propctl)
        if client.session.conn.version >= E.AHEAD_VERSION and not self._open_opts & C.MQOO_SAVE_ALL_CONTEXT:
            self._sync = self._qmgr.sync_ahead[hobj] = syncahead.SyncAhead(name, propctl)
            self._hobj_of_sync = hobj

    def _get_plain(self, client: Client, hobj: int, buffer: int, md: MD, gmo: GMO, handle: Any, match: int) -> bytes:
        """MQGET answered by the queue manager."""
        token = gmo.MsgToken if gmo.Version >= C.MQGMO_VERSION_3 else C.MQMTOK_NONE
        if type(token) is not bytes:
            token = as_bytes(token)
        try:  # mqi.mqget's steps, called here: a layer less on every get
            reply = mqi.got(client._call(mqi.get_request(
                client._s, client._handles.current(hobj), md.wire(), gmo.Options, gmo.WaitInterval, match, buffer,
                token, handle is not None)))
        except MQError as exc:
            raise from_mq_error(exc) from None
        raw = reply.md_bytes
        _received(md, gmo, raw, reply.resolved_q_name, len(reply.data), reply.msg_token)
        if handle is not None:
            handles.fill(handle, reply.properties, MQMD.decode(raw))
        if reply.comp != C.MQCC_OK:
            raise MQMIError(reply.comp, reply.reason, message=reply.data, original_length=reply.data_length,
                            detail=reply.detail)
        return reply.data

    def _get_sync_ahead(self, sa: syncahead.SyncAhead, client: Client, hobj: int, buffer: int, md: MD, gmo: GMO,
                        handle: Any, match: int) -> bytes:
        """``get`` under syncpoint on a handle that reads ahead: the next message read
        ahead, else the queue manager's answer with the next ones read ahead (syncahead)."""
        msg = sa.take()
        if msg is not None:
            return _deliver(msg, sa, buffer, md, gmo, handle)
        n = sa.want()
        if n == 1 or gmo.Options & C.MQGMO_ACCEPT_TRUNCATED_MSG:  # a get of its own, as IBM's
            data = self._get_plain(client, hobj, buffer, md, gmo, handle, match)
            sa.counted()
            return data
        try:
            reply = mqi.mqget_ahead(client, hobj, gmo.Options, gmo.WaitInterval, n, syncahead.MAX_BYTES, buffer)
        except MQError as exc:
            raise from_mq_error(exc) from None
        if isinstance(reply, E.GetReply):
            msg = Message(reply.md_bytes, reply.data, reply.data_length, reply.msg_token, reply.properties,
                          reply.reason)
            if reply.reason == C.MQRC_TRUNCATED_MSG_FAILED:  # not taken: it stays on the queue
                return _deliver(msg, _Kept(sa.name, sa.propctl), buffer, md, gmo, handle)
        else:
            got = [Message(*item) for item in reply.items]
            msg = got[0]
            sa.keep(got[1:])
        sa.counted()
        return _deliver(msg, sa, buffer, md, gmo, handle)

    def get_no_jms(self, max_length: int | None = None, *opts: Any) -> bytes:
        """``get`` with MQGMO_NO_PROPERTIES: the data without an MQRFH2 folder."""
        md = opts[0] if len(opts) > 0 else None
        gmo: GMO = opts[1] if len(opts) > 1 and opts[1] is not None else GMO()
        gmo.Options |= C.MQGMO_NO_PROPERTIES
        return self.get(max_length, md, gmo)

    get_no_rfh2 = get_no_jms

    def get_rfh2(self, max_length: int | None = None, *opts: Any) -> bytes:
        """``get_rfh2(max_length, mDesc, getOpts, [])``: get, then unpack the MQRFH2 headers the
        data starts with (while the Format says MQHRF2) into the list; returns the data
        after them.

        Raises:
            TypeError: the third item is not a list; AttributeError: it is None.
        """
        if len(opts) < 3:
            return self.get(max_length, *opts)
        if opts[2] is None:
            raise AttributeError("get_opts cannot be None if passed.")
        if not isinstance(opts[2], list):
            raise TypeError("Third item of opts should be a list.")
        md: MD = opts[0] if opts[0] is not None else MD()
        msg = self.get(max_length, md, opts[1])
        fmt = md["Format"]
        encoding = md["Encoding"]
        while fmt == C.MQFMT_RF_HEADER_2.encode("latin-1"):
            header = RFH2()
            header.unpack(msg, encoding)
            opts[2].append(header)
            msg = msg[header["StrucLength"]:]
            fmt, encoding = header["Format"], header["Encoding"]
        return msg

    # -- attributes ----------------------------------------------------------------------

    def inquire(self, attribute: int) -> int | bytes:
        """MQINQ: one attribute, an int (MQIA_*) or bytes (MQCA_*)."""
        hobj = self._ensure_open(C.MQOO_INQUIRE)
        return _inquire(self._client(), hobj, attribute)

    def set(self, attribute: int, value: int | bytes | str) -> None:
        """MQSET: one attribute (e.g. MQIA_INHIBIT_PUT)."""
        hobj = self._ensure_open(C.MQOO_SET)
        client = self._client()
        if isinstance(value, int):
            _call(lambda: mqi.mqset(client, hobj, {attribute: value}, {}))
        else:
            _call(lambda: mqi.mqset(client, hobj, {}, {attribute: text(value)}))

    def __repr__(self) -> str:
        return f"<Queue {self.name!r} {'open' if self._hobj else 'closed'}>"


class _Holder(Protocol):
    """What held a message the client delivers: its queue's name and PROPCTL, and where a
    message too long for the get's buffer goes back."""

    name: str
    propctl: int

    def put_back(self, msg: Message) -> None: ...


def _deliver(msg: Message, holder: _Holder, buffer: int, md: MD, gmo: GMO, handle: Any) -> bytes:
    """A message the client holds (pushed, or read ahead under syncpoint, by ``holder``),
    as MQGET gives it: into the MD and GMO (and the message handle); one too long for the
    buffer goes back to ``holder`` unless accepted truncated. The holder itself is passed,
    not a bound ``put_back``: most gets never need one, and making it costs every get."""
    if handle is None and msg._properties:  # without_handle's own test, first: most messages have none
        data, raw = ahead.without_handle(msg, gmo.Options, holder.propctl)
        returned = len(data)
        length = msg.data_length + returned - len(msg.data)
    else:
        data, raw = msg.data, msg.md_bytes
        returned = len(data)
        length = msg.data_length
    if length < returned:
        length = returned
    if length <= buffer:  # most gets: the whole message
        reason = 0  # MQRC_NONE
    else:
        if not gmo.Options & C.MQGMO_ACCEPT_TRUNCATED_MSG:
            holder.put_back(msg)
            reason = C.MQRC_TRUNCATED_MSG_FAILED
        else:
            reason = C.MQRC_TRUNCATED_MSG_ACCEPTED
        data = data[:buffer]
        returned = len(data)
    _received(md, gmo, raw, holder.name, returned, msg.msg_token)
    if handle is not None and reason != C.MQRC_TRUNCATED_MSG_FAILED:
        handles.fill(handle, msg._properties, msg.md)
    if reason:
        comp = C.MQCC_FAILED if reason == C.MQRC_TRUNCATED_MSG_FAILED else C.MQCC_WARNING
        raise MQMIError(comp, reason, message=data, original_length=length)
    return data



class _Kept:
    """A message the queue manager did not take (2080): nothing here holds it."""

    __slots__ = ("name", "propctl")

    def __init__(self, name: str, propctl: int) -> None:
        self.name = name
        self.propctl = propctl

    def put_back(self, msg: Message) -> None:
        """It stays on the queue: nothing to put back."""


_GROUPED = C.MQMF_MSG_IN_GROUP | C.MQMF_LAST_MSG_IN_GROUP | C.MQMF_SEGMENT | C.MQMF_LAST_SEGMENT
_RESOLVED: dict[str, bytes] = {}  # a queue name as GMO ResolvedQName holds it


_WHOLE_V2 = (V1_LE_HEAD, V2_LE_HEAD)  # a whole MQMD v2 (what a get brings) begins with one of them


def _received(md: MD, gmo: GMO, raw: bytes, resolved_q_name: str, returned: int, msg_token: bytes) -> None:
    """A got message into ``md`` and ``gmo``, as MQGET leaves them: its MQMD into the MD (which
    keeps its Version 1 or 2, as pymqi's does), and into the GMO the ResolvedQName, the
    ReturnedLength, the MsgToken and the group and segment status (from MsgFlags, for an
    MD of version 2). One call for both: every get makes it."""
    version = md.Version
    if type(version) is not int:  # a program may have set it as another number
        version = int(version)
    if raw.startswith(_WHOLE_V2) and len(raw) >= C.MQMD_LENGTH_2:
        if version not in (C.MQMD_VERSION_1, C.MQMD_VERSION_2):
            version = int.from_bytes(raw[4:8], "little")
        md.received(raw, version)  # decoded when first read
        # MsgFlags's low byte (little-endian) holds every group and segment flag (_GROUPED)
        flags = 0 if version < C.MQMD_VERSION_2 else raw[MSG_FLAGS_AT]
    else:
        md.unpack(raw)
        if version in (C.MQMD_VERSION_1, C.MQMD_VERSION_2):
            md.Version = version
        version = int(md.Version)
        # a version 1 MQMD (324 bytes) into an MD of version 2: no MsgFlags, none set
        flags = raw[MSG_FLAGS_AT] if version >= C.MQMD_VERSION_2 and len(raw) > MSG_FLAGS_AT else 0
    resolved = _RESOLVED.get(resolved_q_name)
    if resolved is None:
        resolved = as_bytes(resolved_q_name).ljust(48)
        if len(_RESOLVED) < 1024:
            _RESOLVED[resolved_q_name] = resolved
    if flags & _GROUPED:
        group = b"L" if flags & C.MQMF_LAST_MSG_IN_GROUP else b"G" if flags & C.MQMF_MSG_IN_GROUP else b" "
        segment = b"L" if flags & C.MQMF_LAST_SEGMENT else b"S" if flags & C.MQMF_SEGMENT else b" "
    else:  # most messages: neither in a group nor a segment
        group = segment = b" "
    # plain attributes (GMO has no __setattr__ of its own): each store is the interpreter's fast one
    gmo.ResolvedQName = resolved
    gmo.ReturnedLength = returned
    gmo.MsgToken = msg_token
    gmo.GroupStatus = group
    gmo.SegmentStatus = segment
