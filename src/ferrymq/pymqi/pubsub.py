"""pymqi's ``Topic`` and ``Subscription``: MQOPEN of a topic and MQPUT to it, MQSUB, MQSUBRQ
and MQCLOSE of a subscription, over ferrymq's client (ferrymq.client.mqi).

As in pymqi, ``Topic(qmgr, topic_string=...)`` opens on ``open(open_opts=...)`` or on the
first ``pub`` (for output); ``Subscription(qmgr).sub(sub_desc=SD(...))`` subscribes with an
MQSD whose MQCHARV fields were set with ``set_vs``, and the MQSD gets back what the queue
manager writes into it (ResObjectString, SubCorrelId). Publications are got from
``get_sub_queue()``, a ``Queue`` on the handle MQSUB returned (a managed queue's, or the
one given). Failures are ``MQMIError`` with the queue manager's completion and reason.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ferrymq.client import mqi
from ferrymq.client.sync import Client
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.pymqi import handles
from ferrymq.pymqi.core import QueueManager, _after_put, _call, _open, charv_text, ensure_not_str, raise_warning
from ferrymq.pymqi.errors import MQMIError, PYIFError
from ferrymq.pymqi.queue import Queue
from ferrymq.pymqi.structs import MD, OD, PMO, SD, SRO, as_bytes, text


def _opt_bytes(value: str | bytes | None) -> bytes | None:
    return value.encode("utf-8") if isinstance(value, str) else value


class Topic:
    """A topic opened for publishing, pymqi style."""

    def __init__(self, queue_manager: QueueManager, topic_name: str | bytes | None = None,
                 topic_string: str | bytes | None = None, topic_desc: OD | None = None,
                 open_opts: int | None = None) -> None:
        """``topic_desc`` (an OD of ObjectType MQOT_TOPIC, Version 4) wins over the names;
        with ``open_opts`` the topic is opened at once.

        Raises:
            PYIFError: a ``topic_desc`` that is not a version 4 topic descriptor.
            MQMIError: the open was refused.
        """
        self._qmgr = queue_manager
        self._hobj = 0
        self.topic_name = _opt_bytes(topic_name)
        self.topic_string = _opt_bytes(topic_string)
        self._open_opts = open_opts
        if topic_desc is not None:
            _check_topic_desc(topic_desc)
            self._desc = topic_desc
        else:
            self._desc = _topic_desc(self.topic_name, self.topic_string)
        if open_opts:
            self._real_open()

    def _client(self) -> Client:
        return self._qmgr._require()

    def _real_open(self) -> None:
        self._hobj = _open(self._client(), self._desc, self._open_opts or C.MQOO_OUTPUT)

    def open(self, topic_name: str | bytes | None = None, topic_string: str | bytes | None = None,
             topic_desc: OD | None = None, open_opts: int | None = None) -> None:
        """Take a new descriptor (or names); with ``open_opts``, open at once (MQOPEN),
        else on the first ``pub``.

        Raises:
            PYIFError: the topic is already open.
            MQMIError: the open was refused (e.g. 2085, 2425).
        """
        if self._hobj:
            raise PYIFError("The Topic is already open.")
        if topic_name:
            self.topic_name = _opt_bytes(topic_name)
        if topic_string:
            self.topic_string = _opt_bytes(topic_string)
        self._desc = topic_desc if topic_desc is not None else _topic_desc(self.topic_name, self.topic_string)
        if open_opts:
            self._open_opts = open_opts
            self._real_open()

    def pub(self, msg: bytes, *opts: Any) -> None:
        """MQPUT to the topic: ``pub(msg, mDesc=None, putOpts=None)``, opening it for output
        first when needed. The MD and PMO are updated in place.

        Raises:
            TypeError: ``msg`` is a ``str`` (pymqi publishes bytes).
            MQMIError: the publication was refused (e.g. 2502 MQRC_PUBLICATION_FAILURE).
        """
        ensure_not_str(msg)
        md: MD = opts[0] if len(opts) > 0 and opts[0] is not None else MD()
        pmo: PMO = opts[1] if len(opts) > 1 and opts[1] is not None else PMO()
        if not self._hobj:
            self._open_opts = C.MQOO_OUTPUT
            self._real_open()
        props = handles.outgoing(pmo)
        client, hobj, packed, data = self._client(), self._hobj, md.wire(), bytes(msg)
        reply = _call(lambda: mqi.mqput(client, hobj, packed, data, pmo.Options, props))
        _after_put(reply, md, pmo)

    def pub_rfh2(self, msg: bytes, *opts: Any) -> None:
        """``pub_rfh2(msg, mDesc, putOpts, [rfh2, ...])``: publish with the MQRFH2 headers
        packed in front of the data (each in the encoding of the structure before it).

        Raises:
            TypeError: the headers are not a list, or ``msg`` is a ``str``.
        """
        ensure_not_str(msg)
        if len(opts) >= 3 and opts[2] is not None:
            if not isinstance(opts[2], list):
                raise TypeError("Third item of opts should be a list.")
            encoding = opts[0]["Encoding"] if opts[0] is not None else C.MQENC_NATIVE
            head = b""
            for header in opts[2]:
                if header is not None:
                    head += header.pack(encoding)
                    encoding = header["Encoding"]
            self.pub(head + bytes(msg), *opts[0:2])
        else:
            self.pub(msg, *opts)

    def sub(self, *opts: Any) -> Subscription:
        """Subscribe to this topic: ``sub(sub_desc=None, sub_queue=None)``."""
        sub = Subscription(self._qmgr)
        sub.sub(sub_desc=opts[0] if opts else None, sub_queue=opts[1] if len(opts) > 1 else None,
                topic_name=self.topic_name, topic_string=self.topic_string)
        return sub

    def close(self, options: int = C.MQCO_NONE) -> None:
        """MQCLOSE.

        Raises:
            PYIFError: the topic is not open.
        """
        if not self._hobj:
            raise PYIFError("Topic not open.")
        hobj, self._hobj = self._hobj, 0
        client = self._client()
        _call(lambda: mqi.mqclose(client, hobj, options))
        self._open_opts = None

    def get_handle(self) -> int:
        """The object handle (0 when not open)."""
        return self._hobj

    def __del__(self) -> None:
        if getattr(self, "_hobj", 0) and self._qmgr.is_connected:
            with contextlib.suppress(Exception):
                self.close()


class Subscription:
    """A subscription to a topic, pymqi style."""

    def __init__(self, queue_manager: QueueManager, sub_desc: SD | None = None, sub_name: str | bytes | None = None,
                 sub_queue: Queue | int | str | bytes | None = None, sub_opts: int | None = None,
                 topic_name: str | bytes | None = None, topic_string: str | bytes | None = None) -> None:
        """With ``sub_desc`` the subscription is made at once (``sub``)."""
        self._qmgr = queue_manager
        self.sub_queue: Queue | int | str | bytes | None = sub_queue
        self.sub_name = _opt_bytes(sub_name)
        self.sub_opts = sub_opts
        self.topic_name = _opt_bytes(topic_name)
        self.topic_string = _opt_bytes(topic_string)
        self._hsub = 0
        self._opened: Queue | None = None  # a queue opened here from a name given as sub_queue
        self._sub_desc = sub_desc
        if sub_desc is not None:
            self.sub(sub_desc=sub_desc)

    def get_sub_queue(self) -> Queue | int | str | bytes | None:
        """The queue publications arrive on (a ``Queue`` once subscribed)."""
        return self.sub_queue

    def get(self, max_length: int | None = None, *opts: Any) -> bytes:
        """A publication: ``Queue.get`` on the subscription's queue."""
        return self._queue().get(max_length, *opts)

    def get_rfh2(self, max_length: int | None = None, *opts: Any) -> bytes:
        """A publication and its MQRFH2 headers: ``Queue.get_rfh2`` on the subscription's queue."""
        return self._queue().get_rfh2(max_length, *opts)

    def _queue(self) -> Queue:
        if not isinstance(self.sub_queue, Queue):
            raise PYIFError("Subscription not open.")
        return self.sub_queue

    def sub(self, sub_desc: SD | None = None, sub_queue: Queue | int | str | bytes | None = None,
            sub_name: str | bytes | None = None, sub_opts: int | None = None, topic_name: str | bytes | None = None,
            topic_string: str | bytes | None = None) -> None:
        """MQSUB: subscribe, resume or alter. Without ``sub_desc`` an SD is made from the
        names and ``sub_opts`` (default MQSO_CREATE | MQSO_NON_DURABLE | MQSO_MANAGED).
        ``sub_queue``: a ``Queue`` (or an object handle, or a queue name opened here for
        input) to deliver to, for a subscription that is not managed.

        Raises:
            TypeError: ``sub_desc`` is not an SD.
            MQMIError: the queue manager refused (2432 MQRC_SUB_ALREADY_EXISTS, 2428
                MQRC_NO_SUBSCRIPTION, 2429, 2424 MQRC_SD_ERROR...).
        """
        if topic_name:
            self.topic_name = _opt_bytes(topic_name)
        if topic_string:
            self.topic_string = _opt_bytes(topic_string)
        if sub_name:
            self.sub_name = _opt_bytes(sub_name)
        if sub_desc is not None:
            if not isinstance(sub_desc, SD):
                raise TypeError("sub_desc must be a SD(sub descriptor) object.")
        else:
            sub_desc = SD(Options=sub_opts or C.MQSO_CREATE | C.MQSO_NON_DURABLE | C.MQSO_MANAGED)
            if self.sub_name:
                sub_desc.set_vs("SubName", self.sub_name)
            if self.topic_name:
                sub_desc["ObjectName"] = self.topic_name
            if self.topic_string:
                sub_desc.set_vs("ObjectString", self.topic_string)
        self._sub_desc = sub_desc
        client = self._qmgr._require()
        hobj = self._queue_handle(sub_queue)
        request = sub_request_of(sub_desc, hobj)
        reply = _call(lambda: mqi.mqsub(client, request))
        raise_warning(reply)
        write_back(sub_desc, reply)
        queue = Queue(self._qmgr, reply.queue_name or None)
        queue.set_handle(reply.hobj)
        self.sub_queue = queue
        self._hsub = reply.hsub

    def _queue_handle(self, sub_queue: Queue | int | str | bytes | None) -> int:
        if sub_queue is None or sub_queue == b"" or sub_queue == "":
            return C.MQHO_NONE
        if isinstance(sub_queue, Queue):
            return sub_queue.get_handle()
        if isinstance(sub_queue, int):
            return sub_queue
        self._opened = Queue(self._qmgr, sub_queue, C.MQOO_INPUT_AS_Q_DEF)  # kept: dropped, it would close
        return self._opened.get_handle()

    def sub_request(self, action: int = C.MQSR_ACTION_PUBLICATION, sro: SRO | None = None) -> int:
        """MQSUBRQ (a ferrymq extra: pymqi has no call for it): the retained publications are
        sent to the subscription again; returns how many (also in ``sro.NumPubs``).

        Raises:
            PYIFError: not subscribed.
            MQMIError: the queue manager refused.
        """
        if not self._hsub:
            raise PYIFError("Subscription not open.")
        sro = SRO() if sro is None else sro
        client, hsub, options = self._qmgr._require(), self._hsub, sro.Options
        count = _call(lambda: mqi.mqsubrq(client, hsub, action, options))
        sro.NumPubs = count
        return count

    def close(self, sub_close_options: int = C.MQCO_NONE, close_sub_queue: bool = False,
              close_sub_queue_options: int = C.MQCO_NONE) -> None:
        """MQCLOSE of the subscription (MQCO_KEEP_SUB / MQCO_REMOVE_SUB for a durable one),
        then of its queue when ``close_sub_queue``.

        Raises:
            PYIFError: not subscribed.
            MQMIError: the queue manager refused.
        """
        if not self._hsub:
            raise PYIFError("Subscription not open.")
        hsub, self._hsub = self._hsub, 0
        client = self._qmgr._require()
        _call(lambda: mqi.mqclose(client, hsub, sub_close_options))
        self._sub_desc = None
        if close_sub_queue and isinstance(self.sub_queue, Queue):
            self.sub_queue.close(close_sub_queue_options)

    def get_handle(self) -> int:
        """The subscription handle (0 when not subscribed)."""
        return self._hsub

    def __del__(self) -> None:
        if getattr(self, "_hsub", 0) and self._qmgr.is_connected:
            with contextlib.suppress(Exception):
                self.close()


def sub_request_of(sd: SD, hobj: int) -> E.Sub:
    """The MQSUB an SD stands for.

    Raises:
        MQMIError: 2424 (MQRC_SD_ERROR) for a wrong StrucId or Version; an MQCHARV field
            that breaks its rules (2441 ObjectString, 2440 SubName, 2431 SubUserData, 2519
            SelectionString).
    """
    if as_bytes(sd.StrucId) != C.MQSD_STRUC_ID.encode() or sd.Version != C.MQSD_VERSION_1:
        raise MQMIError(C.MQCC_FAILED, C.MQRC_SD_ERROR, detail="StrucId 'SD  ' and Version 1 (MQSD_VERSION_1)")
    correl, token = as_bytes(sd.SubCorrelId), as_bytes(sd.PubAccountingToken)
    return E.Sub(
        0, sd.Options, hobj, text(sd.ObjectName),
        charv_text(sd, "ObjectString", C.MQRC_OBJECT_STRING_ERROR), charv_text(sd, "SubName", C.MQRC_SUB_NAME_ERROR),
        charv_text(sd, "SubUserData", C.MQRC_SUB_USER_DATA_ERROR), correl.ljust(24, b"\0"), sd.PubPriority,
        token.ljust(32, b"\0"), text(sd.PubApplIdentityData),
        charv_text(sd, "SelectionString", C.MQRC_SELECTION_STRING_ERROR), sd.SubExpiry, sd.SubLevel,
        text(sd.AlternateUserId))


def write_back(sd: SD, reply: E.SubReply) -> None:
    """What MQSUB writes into the caller's MQSD: ResObjectString and SubCorrelId, and after
    a resume the subscription's own options and fields (IBM fills them so that the MQSD can
    be passed to MQSO_ALTER as it is)."""
    if reply.res_object_string:
        sd.set_vs("ResObjectString", reply.res_object_string)
    sd.SubCorrelId = reply.sub_correl_id
    if not reply.described:
        return
    sd.Options = reply.options
    sd.ObjectName = as_bytes(reply.object_name)
    sd.SubExpiry, sd.PubPriority, sd.SubLevel = reply.sub_expiry, reply.pub_priority, reply.sub_level
    sd.PubAccountingToken = reply.pub_accounting_token
    sd.PubApplIdentityData = as_bytes(reply.pub_appl_identity_data)
    for base, value in (("SubUserData", reply.sub_user_data), ("SelectionString", reply.selection_string)):
        if value or getattr(sd, base + "VSLength"):
            sd.set_vs(base, value)


def _topic_desc(topic_name: bytes | None, topic_string: bytes | None) -> OD:
    od = OD(ObjectType=C.MQOT_TOPIC, Version=C.MQOD_VERSION_4)
    if topic_name:
        od.ObjectName = topic_name
    if topic_string:
        od.set_vs("ObjectString", topic_string, 0, 0, 0)
    return od


def _check_topic_desc(od: OD) -> None:
    if od.ObjectType != C.MQOT_TOPIC:
        raise PYIFError("The Topic Descriptor ObjectType is not MQOT_TOPIC.")
    if od.Version != C.MQOD_VERSION_4:
        raise PYIFError("The Topic Descriptor Version is not MQOD_VERSION_4.")


__all__ = ["Subscription", "Topic", "sub_request_of", "write_back"]
