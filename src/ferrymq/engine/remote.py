"""Queue-name resolution beyond this queue manager, and what a message bound elsewhere wears.

IBM MQ's rules, as the resolver (engine.routing) applies them at MQOPEN and MQPUT1:

- An ObjectQMgrName naming another queue manager is resolved as a queue-manager name
  (``for_qmgr``): a queue-manager alias (a QREMOTE of that name with a blank RNAME) gives the
  real queue manager (RQMNAME; this one's own name makes the queue local) and perhaps its
  XMITQ; else a local queue named like the queue manager, which must be a transmission queue
  (USAGE(XMITQ): 2092 otherwise); else the queue manager's DEFXMITQ (2197, 2198, 2199 when it
  is missing, not local, not a transmission queue); else MQRC_UNKNOWN_REMOTE_Q_MGR (2087).
- A QREMOTE opened by name (``through``) is a remote queue definition: its RNAME at its
  RQMNAME (2184 when RNAME is blank: a queue-manager alias is no queue), carried by its XMITQ
  (2196, 2091, 2092) or, when XMITQ is blank, by the transmission queue RQMNAME resolves to.
  An RQMNAME naming this queue manager makes RNAME a local queue.
- A reply-to alias (``reply_alias``): a QREMOTE named as a message's ReplyToQ (ReplyToQMgr
  blank or this queue manager) has the put replace ReplyToQ and ReplyToQMgr by its RNAME and
  RQMNAME.

A resolved remote destination is a ``Route``: the transmission queue and the names the
MQXQH will carry. ``xmit_descriptor`` is the descriptor IBM builds for the message on the
transmission queue (the original descriptor travels inside the MQXQH, engine.putting).
"""

from __future__ import annotations

from dataclasses import dataclass

from ferrymq.engine import attrs as A
from ferrymq.engine.objects import ObjectRegistry, QueueObject
from ferrymq.errors import failed
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

# Report options whose reports the destination makes: the transmission queue's own message
# must not trigger them on arrival there or when its channel's agent gets it.
_DESTINATION_REPORTS = (C.MQRO_COA_WITH_FULL_DATA | C.MQRO_COD_WITH_FULL_DATA)
_SEPARATE_V2 = {"group_id": bytes(24), "msg_seq_number": 1, "offset": 0, "msg_flags": C.MQMF_NONE,
                "original_length": C.MQOL_UNDEFINED}


@dataclass(frozen=True, slots=True)
class Route:
    """A destination on another queue manager: the local transmission queue that holds its
    messages, and RemoteQName/RemoteQMgrName for their MQXQH."""

    xmitq: QueueObject
    q_name: str
    q_mgr_name: str
    definition: QueueObject | None = None  # the QREMOTE it was reached through: its PUT counts too


class RemoteNames:
    """The remote-queue rules of one queue manager (see the module docstring)."""

    def __init__(self, qmgr_name: str, objects: ObjectRegistry) -> None:
        self.qmgr_name, self.objects = qmgr_name, objects

    def is_local(self, qmgr: str) -> bool:
        return qmgr.strip() in ("", self.qmgr_name)

    def qmgr_alias(self, qmgr: str) -> QueueObject | None:
        """The queue-manager alias named ``qmgr`` (a QREMOTE with a blank RNAME), if any."""
        obj = self.objects.find(qmgr)
        if obj is None or obj.qtype != A.QREMOTE or obj["RNAME"]:
            return None
        return obj

    def for_qmgr(self, q_name: str, qmgr: str) -> Route | None:
        """Where queue ``q_name`` at queue manager ``qmgr`` (not this one) leads: a Route, or
        None when a queue-manager alias brings it back here (``q_name`` is then local).

        Raises:
            MQError: 2087, 2091, 2092, 2196, 2197, 2198, 2199 (see the module docstring).
        """
        qmgr = qmgr.strip()
        alias = self.qmgr_alias(qmgr)
        if alias is not None:
            real = str(alias["RQMNAME"]) or qmgr
            if self.is_local(real):
                return None
            if alias["XMITQ"]:
                return Route(self._named_xmitq(str(alias["XMITQ"])), q_name, real)
            qmgr = real
        return Route(self.xmitq_of(qmgr), q_name, qmgr)

    def through(self, remote: QueueObject) -> Route | None:
        """The Route of a remote queue definition; None when its RQMNAME is this queue
        manager (RNAME is then a local queue's name).

        Raises:
            MQError: 2184 blank RNAME, 2087 blank RQMNAME, and the transmission queue's reasons.
        """
        rname, rqm = str(remote["RNAME"]), str(remote["RQMNAME"])
        if not rname:
            raise failed(C.MQRC_REMOTE_Q_NAME_ERROR, f"{remote.name} has a blank RNAME: a queue-manager alias, not a queue")
        if not rqm:
            raise failed(C.MQRC_UNKNOWN_REMOTE_Q_MGR, f"{remote.name} has a blank RQMNAME")
        if self.is_local(rqm) and not remote["XMITQ"]:
            return None
        if remote["XMITQ"]:
            return Route(self._named_xmitq(str(remote["XMITQ"])), rname, rqm, remote)
        route = self.for_qmgr(rname, rqm)
        return None if route is None else Route(route.xmitq, route.q_name, route.q_mgr_name, remote)

    def xmitq_of(self, qmgr: str) -> QueueObject:
        """The transmission queue for queue manager ``qmgr``: the local queue of its name, or
        DEFXMITQ.

        Raises:
            MQError: 2087 none, 2092 a local queue of that name that is no transmission
                queue, 2091 an object of that name that is no local queue, DEFXMITQ's 2197-2199.
        """
        obj = self.objects.find(qmgr)
        if obj is not None and obj.qtype != A.QREMOTE:
            if not obj.is_local:
                raise failed(C.MQRC_XMIT_Q_TYPE_ERROR, f"{obj.name} is a {obj.qtype}, not a local transmission queue")
            if obj["USAGE"] != C.MQUS_TRANSMISSION:
                raise failed(C.MQRC_XMIT_Q_USAGE_ERROR, f"{obj.name} has USAGE(NORMAL), not USAGE(XMITQ)")
            return obj
        default = str(self.objects.qmgr.get("DEFXMITQ", ""))
        if not default:
            raise failed(C.MQRC_UNKNOWN_REMOTE_Q_MGR,
                         f"no route to queue manager {qmgr}: no transmission queue of that name and no DEFXMITQ")
        dq = self.objects.find(default)
        if dq is None:
            raise failed(C.MQRC_UNKNOWN_DEF_XMIT_Q, f"DEFXMITQ({default}) is not defined")
        if not dq.is_local:
            raise failed(C.MQRC_DEF_XMIT_Q_TYPE_ERROR, f"DEFXMITQ({default}) is a {dq.qtype}, not a local queue")
        if dq["USAGE"] != C.MQUS_TRANSMISSION:
            raise failed(C.MQRC_DEF_XMIT_Q_USAGE_ERROR, f"DEFXMITQ({default}) has USAGE(NORMAL), not USAGE(XMITQ)")
        return dq

    def _named_xmitq(self, name: str) -> QueueObject:
        q = self.objects.find(name)
        if q is None:
            raise failed(C.MQRC_UNKNOWN_XMIT_Q, f"transmission queue {name} is not defined")
        if not q.is_local:
            raise failed(C.MQRC_XMIT_Q_TYPE_ERROR, f"transmission queue {name} is a {q.qtype}, not a local queue")
        if q["USAGE"] != C.MQUS_TRANSMISSION:
            raise failed(C.MQRC_XMIT_Q_USAGE_ERROR, f"{name} has USAGE(NORMAL), not USAGE(XMITQ)")
        return q

    def reply_alias(self, md: MQMD) -> MQMD:
        """``md`` with a reply-to alias in ReplyToQ resolved (see the module docstring)."""
        name = md.reply_to_q.strip()
        if not name or not self.is_local(md.reply_to_q_mgr):
            return md
        obj = self.objects.find(name)
        if obj is None or obj.qtype != A.QREMOTE or not obj["RNAME"]:
            return md
        return md.replace(reply_to_q=str(obj["RNAME"]), reply_to_q_mgr=str(obj["RQMNAME"]) or self.qmgr_name)


def xmit_descriptor(original: MQMD, ccsid: int) -> MQMD:
    """The descriptor of a message on a transmission queue (IBM's "separate" MQMD): the
    original's but for the header it describes (Format MQXMIT, native encoding, the queue
    manager's CCSID), a BackoutCount of 0, no group or segment fields (the MQXQH, and an MQMDE
    behind it, keep the original's), and no report the destination makes (COA, COD)."""
    return original.replace(version=C.MQMD_VERSION_2, format=C.MQFMT_XMIT_Q_HEADER, encoding=C.MQENC_NATIVE,
                            coded_char_set_id=ccsid, backout_count=0,
                            report=original.report & ~_DESTINATION_REPORTS, **_SEPARATE_V2)
