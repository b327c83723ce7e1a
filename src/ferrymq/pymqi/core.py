"""pymqi's ``QueueManager``, ``Queue`` and ``connect`` over ferrymq's client.

Client mode connects over TCP to a ``QueueManagerServer`` (``conn_info`` is an MQ
connection name, ``"host(port)"``, or a comma-separated list of them). Bindings mode —
``connect("QM1")`` with no ``conn_info`` — connects in-process to an
``EmbeddedQueueManager`` that the application registered with ``register_bindings``, or
else to a queue manager of that name started on this machine from the same home, through
its local socket (``ferrymq.client.local``); failing both, the ``MQSERVER`` environment variable (``CHANNEL/TCP/host(port)``)
is honoured as MQ clients do.

Every MQI call goes through ``ferrymq.client.mqi`` with the application's MD/GMO/PMO/OD
packed as they are; those structures are updated in place from the reply, as pymqi does.
Asynchronous puts (MQPMO_ASYNC_RESPONSE, DEFPRESP) and read-ahead gets (MQOO_READ_AHEAD,
DEFREADA) take the client's own paths for them instead (ferrymq.pymqi.ahead).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from ferrymq.client import local, mqi
from ferrymq.client import session as S
from ferrymq.client.connname import MalformedConnName, parse_conn_name
from ferrymq.client.sync import Client
from ferrymq.client.sync import connect as client_connect
from ferrymq.client.tls import ClientTLS
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQXC, ahead, handles
from ferrymq.pymqi.errors import MQMIError, PYIFError, from_mq_error
from ferrymq.pymqi.structs import CD, CNO, MD, OD, PMO, SCO, STS, as_bytes, text
from ferrymq.pymqi.syncahead import SyncAhead

if TYPE_CHECKING:
    from ferrymq.api import EmbeddedQueueManager

T = TypeVar("T")

_BINDINGS: dict[str, EmbeddedQueueManager] = {}
_HCONNS = itertools.count(1)  # the numbers get_handle() gives out, one per connection

# MQCHARn lengths of the character attributes programs inquire most (pymqi returns the
# attribute blank-padded to its length, as MQINQ fills it).
_CHAR_ATTR_LENGTH = {
    C.MQCA_Q_MGR_NAME: 48, C.MQCA_Q_NAME: 48, C.MQCA_BASE_Q_NAME: 48, C.MQCA_DEAD_LETTER_Q_NAME: 48,
    C.MQCA_COMMAND_INPUT_Q_NAME: 48, C.MQCA_BACKOUT_REQ_Q_NAME: 48, C.MQCA_REMOTE_Q_NAME: 48,
    C.MQCA_REMOTE_Q_MGR_NAME: 48, C.MQCA_XMIT_Q_NAME: 48, C.MQCA_INITIATION_Q_NAME: 48,
    C.MQCA_Q_DESC: 64, C.MQCA_Q_MGR_DESC: 64,
}


def register_bindings(qmgr: EmbeddedQueueManager) -> None:
    """Make an embedded queue manager reachable by name in bindings mode (``connect(name)``)."""
    _BINDINGS[qmgr.name] = qmgr


def unregister_bindings(name: str) -> None:
    _BINDINGS.pop(name, None)


@contextmanager
def _mqcall(**extra: Any) -> Iterator[None]:
    """Turn ferrymq client errors (and bad connection names) into MQMIError."""
    try:
        yield
    except MQMIError:
        raise
    except MQError as exc:
        raise from_mq_error(exc, **extra) from None


def _call(fn: Callable[[], T]) -> T:
    with _mqcall():
        return fn()


def _name_of(q_desc: OD | str | bytes) -> str:
    return text(q_desc.ObjectName) if isinstance(q_desc, OD) else text(q_desc)


def _as_od(q_desc: OD | str | bytes) -> OD:
    return q_desc if isinstance(q_desc, OD) else OD(ObjectName=as_bytes(q_desc))


# The CCSIDs a selection string may be written in here (MQCCSI_APPL and 0 mean the
# application's own, which for a Python program is UTF-8).
_SELECTION_CODECS = {0: "utf-8", C.MQCCSI_APPL: "utf-8", 1208: "utf-8", 819: "latin-1", 1200: "utf-16-be"}


def _selection_string(od: OD) -> str:
    """The OD's SelectionString (version 4 and later) as text, by the rules of an MQCHARV.

    Raises:
        MQMIError: as ``charv_text``, with 2519 (MQRC_SELECTION_STRING_ERROR).
    """
    if od.Version < C.MQOD_VERSION_4:
        return ""
    return charv_text(od, "SelectionString", C.MQRC_SELECTION_STRING_ERROR)


def charv_text(struc: Any, base: str, reason: int) -> str:
    """An MQCHARV field of an OD or SD (``base``: "ObjectString", "SubName"...) as text.

    Raises:
        MQMIError: ``reason`` for an MQCHARV that breaks its rules (a negative length other
            than MQVS_NULL_TERMINATED, a length and no string, an offset as well as a
            string, or more than the string holds, or bytes its CCSID cannot read); 2111
            (MQRC_SOURCE_CCSID_ERROR) for a VSCCSID it cannot read.
    """
    ptr, length = getattr(struc, base + "VSPtr"), getattr(struc, base + "VSLength")
    raw = bytes(ptr) if isinstance(ptr, (bytes, bytearray)) else None
    if length == C.MQVS_NULL_TERMINATED and raw is not None:
        raw = raw.split(b"\0", 1)[0]
    elif length == 0:
        return ""
    elif length < 0 or raw is None or getattr(struc, base + "VSOffset") or len(raw) < length:
        raise MQMIError(C.MQCC_FAILED, reason)
    else:
        raw = raw[:length]
    codec = _SELECTION_CODECS.get(getattr(struc, base + "VSCCSID"))
    if codec is None:
        raise MQMIError(C.MQCC_FAILED, C.MQRC_SOURCE_CCSID_ERROR)
    try:
        return raw.decode(codec)
    except UnicodeDecodeError:
        raise MQMIError(C.MQCC_FAILED, reason) from None


def _object_string(od: OD) -> str:
    """A version 4 OD's ObjectString (a topic's) as text; 2441 when malformed."""
    if od.Version < C.MQOD_VERSION_4:
        return ""
    return charv_text(od, "ObjectString", C.MQRC_OBJECT_STRING_ERROR)


def ensure_not_str(value: Any) -> None:
    """Raise TypeError for a ``str`` where pymqi wants bytes (pymqi's ``ensure_not_unicode``)."""
    if isinstance(value, str):
        raise TypeError(f"Python 3 style string (unicode) found but not allowed here: `{value}`. Convert to bytes.")


def raise_warning(reply: Any) -> None:
    """pymqi raises MQMIError for any completion code but MQCC_OK: a call that completed
    with a warning (e.g. 2049 MQRC_PRIORITY_EXCEEDS_MAXIMUM on a put) raises too."""
    if reply.comp != C.MQCC_OK:
        raise MQMIError(reply.comp, reply.reason, detail=reply.detail)


def _open(client: Client, od: OD, options: int) -> int:
    """MQOPEN from an OD, which is updated with the names resolved."""
    selection = _selection_string(od)
    object_string = _object_string(od)
    reply = _call(lambda: mqi.mqopen(client, text(od.ObjectName), options, object_type=od.ObjectType,
                                     object_q_mgr_name=text(od.ObjectQMgrName),
                                     dynamic_q_name=text(od.DynamicQName) or "AMQ.*",
                                     alternate_user_id=text(od.AlternateUserId), selection_string=selection,
                                     object_string=object_string))
    od.ObjectName = as_bytes(reply.object_name).ljust(48)
    od.ResolvedQName = as_bytes(reply.resolved_q_name or reply.object_name).ljust(48)
    od.ResolvedQMgrName = as_bytes(reply.resolved_q_mgr_name).ljust(48)
    if reply.res_object_string and od.Version >= C.MQOD_VERSION_4:
        od.set_vs("ResObjectString", reply.res_object_string)
    raise_warning(reply)
    return reply.hobj


def _inquire(client: Client, hobj: int, attribute: int) -> int | bytes:
    if attribute >= C.MQCA_FIRST:
        reply = _call(lambda: mqi.mqinq(client, hobj, (), (attribute,)))
        raise_warning(reply)
        return as_bytes(reply.chars[0]).ljust(_CHAR_ATTR_LENGTH.get(attribute, 0))
    got = _call(lambda: mqi.mqinq(client, hobj, (attribute,), ()))
    raise_warning(got)
    return got.ints[0]


def _after_put(reply: Any, md: MD, pmo: PMO | None) -> None:
    raise_warning(reply)  # as pymqi: the MD and PMO are left as they were
    if isinstance(reply.md, bytes) and reply.md:
        md.unpack(reply.md)
    if pmo is not None:
        pmo.ResolvedQName = as_bytes(reply.resolved_q_name).ljust(48)
        pmo.ResolvedQMgrName = as_bytes(reply.resolved_q_mgr_name).ljust(48)


def _data(msg: bytes | bytearray | str, md: MD, qmgr: QueueManager) -> bytes:
    """The message's bytes. A ``str`` is encoded with the connection's ``bytes_encoding``
    and the MD says so (Format MQSTR, CodedCharSetId ``default_ccsid``), as pymqi does."""
    if isinstance(msg, str):
        md.Format = as_bytes(C.MQFMT_STRING)
        md.CodedCharSetId = qmgr.default_ccsid
        return msg.encode(qmgr.bytes_encoding)
    if isinstance(msg, (bytes, bytearray, memoryview)):
        return bytes(msg)
    raise TypeError(f"Message type is {type(msg)}. Convert to bytes.")


class QueueManager:
    """A connection to a queue manager (an hconn), pymqi style.

    ``QueueManager(name)`` connects in bindings mode at once; ``QueueManager(None)`` makes
    an unconnected object for ``connect_tcp_client`` / ``connect_with_options``.
    """

    def __init__(self, name: str | bytes | None = "", disconnect_on_exit: bool = True,
                 bytes_encoding: str = "utf8", default_ccsid: int = 1208) -> None:
        self._client: Client | None = None
        self.q_defaults: dict[str, tuple[int, int, int]] = {}  # (DEFPRESP, DEFREADA, PROPCTL) by name (ahead)
        self.sync_ahead: dict[int, SyncAhead] = {}  # handles reading ahead under syncpoint, by number (syncahead)
        self._hconn = 0
        self._qmgr_hobj = 0
        self._name = ""
        self.disconnect_on_exit = disconnect_on_exit
        self.bytes_encoding = bytes_encoding
        self.default_ccsid = default_ccsid
        if name is not None:
            self.connect(name)

    # -- connecting ----------------------------------------------------------------------

    def connect(self, name: str | bytes, *args: Any) -> None:
        """MQCONN in bindings mode (see the module docstring for how the queue manager is found)."""
        self.connect_with_options(name)

    def connect_with_options(self, name: str | bytes, *args: Any, user: str | bytes | None = None,
                             password: str | bytes | None = None, cd: CD | None = None, sco: SCO | None = None,
                             opts: int | None = None, **kw: Any) -> None:
        """MQCONNX: over TCP when ``cd.ConnectionName`` is set, else in bindings mode.

        Raises:
            MQMIError: 2002 if already connected; 2058/2059/2538 if the queue manager is not there;
                2277 (MQRC_CD_ERROR) for a malformed connection name.
        """
        for arg in args:  # pymqi also takes cd / sco positionally
            if isinstance(arg, CD):
                cd = arg
            elif isinstance(arg, SCO):
                sco = arg
            elif isinstance(arg, int):
                opts = arg
            elif isinstance(arg, CNO):
                kw["cno"] = arg
        cno = kw.pop("cno", None)
        csp = kw.pop("csp", None)  # an MQCSP-like object: CSPUserId, CSPPassword
        if csp is not None and user is None:
            user, password = getattr(csp, "CSPUserId", None), getattr(csp, "CSPPassword", None)
        options = int(opts or 0) | int(getattr(cno, "Options", 0) or 0)
        # MQCNO_RECONNECT(_Q_MGR): reconnect automatically after a lost connection.
        reconnect = bool(options & (C.MQCNO_RECONNECT | C.MQCNO_RECONNECT_Q_MGR)) and \
            not options & C.MQCNO_RECONNECT_DISABLED
        del kw
        if self._client is not None:
            raise MQMIError(C.MQCC_WARNING, C.MQRC_ALREADY_CONNECTED)
        qmgr = text(name)
        user_text = text(user) if user is not None else (text(cd.UserIdentifier) if cd is not None else "")
        secret = None if password is None or (not user_text and not text(password)) else text(password)
        conn = text(cd.ConnectionName) if cd is not None else ""
        with _mqcall():
            if conn:
                assert cd is not None
                self._client = self._tcp(qmgr, conn, user_text, cd, reconnect, secret, client_tls(cd, sco), options)
            else:
                self._client = self._bindings(qmgr, user_text, secret, options)
        self._name = self._client.qmgr_name
        self._hconn = next(_HCONNS)
        self.q_defaults = {}
        self.sync_ahead = {}

    @staticmethod
    def _tcp(qmgr: str, conn: str, user: str, cd: CD, reconnect: bool = False, password: str | None = None,
             tls: ClientTLS | None = None, options: int = 0) -> Client:
        try:
            parse_conn_name(conn)
        except MalformedConnName as exc:  # MQRC_CD_ERROR: the name is malformed, not unanswered
            raise MQMIError(exc.comp, exc.reason, detail=exc.detail) from None
        heartbeat = float(cd.HeartbeatInterval) if cd.HeartbeatInterval > 0 else 300.0
        return client_connect(qmgr, conn, user=user, password=password, heartbeat=heartbeat,
                              max_msg_length=int(cd.MaxMsgLength), appl_name="pymqi", reconnect=reconnect,
                              channel=text(cd.ChannelName), tls=tls, connect_options=options)

    @staticmethod
    def _bindings(qmgr: str, user: str, password: str | None = None, options: int = 0) -> Client:
        emb = _BINDINGS.get(qmgr)
        if emb is None and not qmgr and len(_BINDINGS) == 1:
            emb = next(iter(_BINDINGS.values()))
        if emb is not None:
            return emb.connect(user=user, password=password, appl_name="pymqi", connect_options=options)
        if local.available(qmgr):  # started on this machine from this home: its local socket
            return client_connect(qmgr, None, user=user, password=password, appl_name="pymqi",
                                  connect_options=options)
        server = os.environ.get("MQSERVER", "")
        parts = server.split("/", 2)
        if len(parts) == 3 and parts[1].upper() == "TCP":
            cd = CD(ChannelName=as_bytes(parts[0]), ConnectionName=as_bytes(parts[2]),
                    ChannelType=CMQXC.MQCHT_CLNTCONN, TransportType=CMQXC.MQXPT_TCP)
            return QueueManager._tcp(qmgr, parts[2], user, cd, password=password, options=options)
        raise MQMIError(C.MQCC_FAILED, C.MQRC_Q_MGR_NOT_AVAILABLE,
                        detail=f"no queue manager {qmgr!r} in this process (register_bindings) or started from "
                               f"{local.home_dir()}, and no MQSERVER")

    def connect_tcp_client(self, name: str | bytes, cd: CD | None, channel: str | bytes, conn_name: str | bytes,
                           user: str | bytes | None = None, password: str | bytes | None = None) -> None:
        """Connect as a client over TCP on ``channel`` to ``conn_name`` (``"host(port)"``)."""
        cd = CD() if cd is None else cd
        cd.ChannelName = as_bytes(channel)
        cd.ConnectionName = as_bytes(conn_name)
        cd.ChannelType = CMQXC.MQCHT_CLNTCONN
        cd.TransportType = CMQXC.MQXPT_TCP
        self.connect_with_options(name, user=user, password=password, cd=cd)

    connectTCPClient = connect_tcp_client  # pymqi's aliases
    connectWithOptions = connect_with_options

    def disconnect(self) -> None:
        """MQDISC (an open unit of work is committed, as MQ does).

        Raises:
            PYIFError: not connected.
        """
        client = self._require()
        self._end_unit(client)  # MQDISC commits: nothing read ahead may be in the unit then
        self._client = None
        self._hconn = self._qmgr_hobj = 0
        _call(client.disconnect)

    @property
    def is_connected(self) -> bool:
        return self._client is not None and not self._client.closed

    def get_handle(self) -> int:
        """The connection handle: a number for this connection, as pymqi's hconn.

        Raises:
            PYIFError: not connected.
        """
        self._require()
        return self._hconn

    getHandle = get_handle

    @property
    def client(self) -> Client:
        """The underlying ferrymq ``Client`` (a ferrymq extra).

        Raises:
            PYIFError: not connected.
        """
        return self._require()

    def _require(self) -> Client:
        if self._client is None:
            raise PYIFError("not connected")
        return self._client

    def __enter__(self) -> QueueManager:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if self.disconnect_on_exit and self._client is not None:
            self.disconnect()

    # -- units of work -------------------------------------------------------------------

    def begin(self) -> None:
        """Start a unit of work. Local units of work start with the first syncpoint put or
        get, so this only checks the connection (MQBEGIN's global units are not offered)."""
        self._require()

    def commit(self) -> None:
        """MQCMIT."""
        client = self._require()
        self._end_unit(client)
        _call(lambda: mqi.mqcmit(client))

    def backout(self) -> None:
        """MQBACK."""
        client = self._require()
        self._end_unit(client)
        _call(lambda: mqi.mqback(client))

    def _end_unit(self, client: Client) -> None:
        """Before MQCMIT, MQBACK or MQDISC: every message read ahead under syncpoint and not
        got goes back to its queue (ferrymq.pymqi.syncahead).

        Raises:
            MQMIError: the return failed (the unit is then left as it is).
        """
        # A snapshot: a Queue the program dropped can be collected during these calls, and its
        # __del__ closes it, which takes its entry out of sync_ahead (and returns its messages).
        for hobj, sa in list(self.sync_ahead.items()):
            if self.sync_ahead.get(hobj) is sa:
                self.return_ahead(client, hobj, sa)
                sa.unit_ended()

    @staticmethod
    def return_ahead(client: Client, hobj: int, sa: SyncAhead) -> None:
        """Return the messages ``sa`` read ahead on ``hobj`` and did not hand out.

        Raises:
            MQMIError: the queue manager refused, or the connection is gone.
        """
        tokens = sa.to_return()
        if tokens:
            _call(lambda: mqi.mqreturn_ahead(client, hobj, tokens))

    # -- calls on the queue manager ------------------------------------------------------

    def put1(self, qDesc: OD | str | bytes, msg: bytes | str, *opts: Any) -> None:
        """MQPUT1: ``put1(qDesc, msg, mDesc=None, putOpts=None)``; MD and PMO updated in place."""
        client = self._require()
        md = opts[0] if len(opts) > 0 and opts[0] is not None else MD()
        pmo: PMO = opts[1] if len(opts) > 1 and opts[1] is not None else PMO()
        od = _as_od(qDesc)
        if _selection_string(od):  # MQPUT1 opens for output, where selection has no meaning
            raise MQMIError(C.MQCC_FAILED, C.MQRC_SELECTOR_INVALID_FOR_TYPE)
        props = handles.outgoing(pmo)
        data = _data(msg, md, self)
        object_string = _object_string(od)
        name = text(od.ObjectName)
        if od.ObjectType == C.MQOT_Q and ahead.wants_async(pmo.Options, client, self.q_defaults, name):
            with _mqcall():
                S.od_names(name, text(od.ObjectQMgrName), text(od.AlternateUserId), 0)
                ahead.put_async(client, name, md, data, pmo, props,
                                {"object_q_mgr_name": text(od.ObjectQMgrName),
                                 "alternate_user_id": text(od.AlternateUserId)})
            return
        packed = md.wire()
        reply = _call(lambda: mqi.mqput1(client, text(od.ObjectName), packed, data, pmo.Options,
                                         object_q_mgr_name=text(od.ObjectQMgrName), object_type=od.ObjectType,
                                         alternate_user_id=text(od.AlternateUserId), properties=props,
                                         object_string=object_string))
        _after_put(reply, md, pmo)

    def stat(self, stat_type: int = C.MQSTAT_TYPE_ASYNC_ERROR, sts: STS | None = None) -> STS:
        """MQSTAT (a ferrymq extra: pymqi has no MQSTAT): the outcomes of the asynchronous
        puts (MQPMO_ASYNC_RESPONSE, or DEFPRESP(ASYNC)) since the last call, after sending
        any still buffered. ``CompCode``/``Reason`` are the first failure's (or the first
        warning's), the counts those of the puts that succeeded, warned and failed.

        Raises:
            MQMIError: 2430 (MQRC_STAT_TYPE_ERROR) for an unknown ``stat_type``.
            PYIFError: not connected.
        """
        client = self._require()
        with _mqcall():
            return ahead.stat(client, stat_type, sts)

    def inquire(self, attribute: int) -> int | bytes:
        """MQINQ on the queue manager object: an int (MQIA_*) or bytes (MQCA_*)."""
        client = self._require()
        if not self._qmgr_hobj:
            od = OD(ObjectType=C.MQOT_Q_MGR)
            self._qmgr_hobj = _open(client, od, C.MQOO_INQUIRE)
        return _inquire(client, self._qmgr_hobj, attribute)

    def __repr__(self) -> str:
        state = f"connected to {self._name!r}" if self.is_connected else "not connected"
        return f"<QueueManager {state}>"


def connect(queue_manager: str | bytes, channel: str | bytes | None = None, conn_info: str | bytes | None = None,
            user: str | bytes | None = None, password: str | bytes | None = None, disconnect_on_exit: bool = True,
            bytes_encoding: str = "utf8", default_ccsid: int = 1208) -> QueueManager:
    """Connect and return a ``QueueManager``: over TCP when ``conn_info`` is given, else bindings.

    Raises:
        MQMIError: the connection failed.
        PYIFError: a channel without a connection name.
    """
    qmgr = QueueManager(None, disconnect_on_exit, bytes_encoding, default_ccsid)
    if conn_info:
        qmgr.connect_tcp_client(queue_manager, CD(), channel or b"SYSTEM.DEF.SVRCONN", conn_info, user, password)
    elif channel:
        raise PYIFError("a channel was given without conn_info (the connection name)")
    else:
        qmgr.connect_with_options(queue_manager, user=user, password=password)
    return qmgr


__all__ = ["QueueManager", "connect", "register_bindings", "unregister_bindings"]


def client_tls(cd: CD, sco: SCO | None) -> ClientTLS | None:
    """TLS as an IBM MQ client takes it: on when the MQCD names a CipherSpec (an MQSCO alone
    turns nothing on); the key repository from the MQSCO or $MQSSLKEYR, the certificate label
    from the MQSCO, the MQCD or $MQCERTLABL.

    Raises:
        MQMIError: 2381 (MQRC_KEY_REPOSITORY_ERROR) when no key repository is named.
    """
    spec = text(cd.SSLCipherSpec)
    if not spec:
        return None
    repo = (text(sco.KeyRepository) if sco is not None else "") or os.environ.get("MQSSLKEYR", "")
    if not repo:
        raise MQMIError(C.MQCC_FAILED, C.MQRC_KEY_REPOSITORY_ERROR,
                        detail="SSLCipherSpec is set but no key repository is named (MQSCO KeyRepository or MQSSLKEYR)")
    label = ((text(sco.CertificateLabel) if sco is not None else "") or text(cd.CertificateLabel)
             or os.environ.get("MQCERTLABL", ""))
    return ClientTLS(repo, spec, label, text(cd.SSLPeerName), key_repo_password(sco))


def key_repo_password(sco: SCO | None) -> str:
    """The MQSCO's KeyRepoPassword (IBM MQ 9.3's, ahead of $MQKEYRPWD and the stash file),
    as given: a password may begin or end with blanks, so only NUL padding is dropped.
    pymqi raises the MQSCO's Version to 6 itself when the field is set, so any Version
    takes it here."""
    if sco is None:
        return ""
    value = sco.KeyRepoPassword
    if isinstance(value, bytes | bytearray):
        value = bytes(value).rstrip(b"\0").decode("utf-8", "replace")
    return str(value or "")
