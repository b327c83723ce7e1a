"""Queue-manager objects: definitions, their persistence, and the admin API over them.

Definitions live in journal records (kind OBJECT, JSON payload: our own file, never
evaluated), so they survive restarts; temporary dynamic queues are never journaled.
The admin verbs (define, alter, delete, display) are the one implementation that
MQSC, PCF and Python reach.
"""

from __future__ import annotations

import fnmatch
import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ferrymq.engine import attrs as A
from ferrymq.engine.msgqueue import MessageQueue, Meter
from ferrymq.errors import failed
from ferrymq.mq import constants as C

KIND_OBJECT = 2
KIND_QMGR = 3
KIND_SEQUENCE = 4

# Sequence numbers are reserved in blocks so that a restart never reuses one, without a
# journal write per message (Spark reads queues by sequence number).
SEQUENCE_BLOCK = 100_000

SPARK_COMMIT_QUEUE = "FERRYMQ.SPARK.COMMITS"
SYSTEM_QUEUES: tuple[tuple[str, str, dict[str, int | str]], ...] = (
    ("SYSTEM.DEFAULT.LOCAL.QUEUE", A.QLOCAL, {}),
    ("SYSTEM.DEFAULT.ALIAS.QUEUE", A.QALIAS, {}),
    ("SYSTEM.DEFAULT.MODEL.QUEUE", A.QMODEL, {}),
    ("SYSTEM.DEFAULT.REMOTE.QUEUE", A.QREMOTE, {}),
    ("SYSTEM.DEAD.LETTER.QUEUE", A.QLOCAL, {"MAXDEPTH": 999_999_999, "DESCR": "Dead-letter queue"}),
    ("SYSTEM.ADMIN.COMMAND.QUEUE", A.QLOCAL, {"MAXDEPTH": 3000, "DESCR": "Command server input queue"}),
    ("SYSTEM.DURABLE.MODEL.QUEUE", A.QMODEL, {"DEFTYPE": C.MQQDT_PERMANENT_DYNAMIC}),
    # The model of managed queues for non-durable subscriptions (SYSTEM.BASE.TOPIC's MNDURMDL).
    ("SYSTEM.NDURABLE.MODEL.QUEUE", A.QMODEL, {"DEFTYPE": C.MQQDT_TEMPORARY_DYNAMIC}),
    ("SYSTEM.ADMIN.QMGR.EVENT", A.QLOCAL, {}),
    ("SYSTEM.ADMIN.PERFM.EVENT", A.QLOCAL, {}),  # the other event queues (engine.events)
    ("SYSTEM.ADMIN.CONFIG.EVENT", A.QLOCAL, {}),
    ("SYSTEM.ADMIN.COMMAND.EVENT", A.QLOCAL, {}),
    ("SYSTEM.ADMIN.CHANNEL.EVENT", A.QLOCAL, {}),
    ("SYSTEM.ADMIN.STATISTICS.QUEUE", A.QLOCAL, {}),  # statistics and accounting (engine.monitoring)
    ("SYSTEM.ADMIN.ACCOUNTING.QUEUE", A.QLOCAL, {}),
    # Message channels' synchronisation records (ferrymq.channels) and the channel initiator's
    # initiation queue, as IBM names them.
    ("SYSTEM.CHANNEL.SYNCQ", A.QLOCAL, {"MAXDEPTH": 999_999_999, "DESCR": "Channel synchronisation records",
                                        "DEFPSIST": C.MQPER_PERSISTENT}),
    ("SYSTEM.CHANNEL.INITQ", A.QLOCAL, {"DESCR": "Channel initiation queue"}),
    ("SYSTEM.DEFAULT.INITIATION.QUEUE", A.QLOCAL, {"DESCR": "Default initiation queue"}),
    # The queue manager's own Spark connector keeps one commit marker per streaming query
    # here (ferrymq.spark.commits): defined like the other system objects, so a query's
    # first commit never meets a queue nobody thought to define.
    (SPARK_COMMIT_QUEUE, A.QLOCAL, {"DEFPSIST": C.MQPER_PERSISTENT,
                                    "DESCR": "Commit markers of ferrymq's Spark streaming writes"}),
)
_DEFAULT_OF = {A.QLOCAL: "SYSTEM.DEFAULT.LOCAL.QUEUE", A.QALIAS: "SYSTEM.DEFAULT.ALIAS.QUEUE",
               A.QMODEL: "SYSTEM.DEFAULT.MODEL.QUEUE", A.QREMOTE: "SYSTEM.DEFAULT.REMOTE.QUEUE"}


def stamp(now: float) -> tuple[str, str]:
    """IBM's attribute date and time forms: ``YYYY-MM-DD`` and ``HH.MM.SS``."""
    t = time.gmtime(now)
    return time.strftime("%Y-%m-%d", t), time.strftime("%H.%M.%S", t)


def check_name(name: str) -> str:
    """An object name as IBM allows it: 1..48 of A-Z a-z 0-9 . / _ %.

    Raises:
        MQError: MQRC_UNKNOWN_OBJECT_NAME-free names fail with MQRC_OBJECT_NAME_ERROR (2152).
    """
    name = name.rstrip()
    if not 1 <= len(name) <= C.MQ_Q_NAME_LENGTH or any(not (c.isascii() and (c.isalnum() or c in "./_%")) for c in name):
        raise failed(C.MQRC_OBJECT_NAME_ERROR, f"object name {name!r} must be 1..48 of A-Z a-z 0-9 . / _ %")
    return name


class QueueObject:
    """A queue definition and, for local queues, its messages and open state."""

    def __init__(self, name: str, qtype: str, attrs: dict[str, int | str], now: float, deftype: int,
                 meter: Meter | None = None) -> None:
        self.name = name
        self.qtype = qtype
        self.attrs = attrs
        self.deftype = deftype
        self.created = stamp(now)
        self.altered = self.created
        self.record_id = 0
        self.seq_record_id = 0
        self.next_seq = 1
        self.seq_reserved = 0
        self.messages = MessageQueue(meter)
        self.input_count = 0
        self.output_count = 0
        self.exclusive = False
        self.handles: set[int] = set()
        self.owner_hobj = 0  # the handle whose MQOPEN made this dynamic queue
        self.last_put: float = 0.0
        self.last_get: float = 0.0
        self.enqueued = 0  # messages placed since start, and taken by destructive gets (metrics)
        self.dequeued = 0
        self.events_epoch = -1  # the registry epoch ``events_on`` was worked out at (engine.events)
        self.events_on = False
        self.stats: Any = None  # this interval's statistics counters while STATQ is on (engine.monitoring)

    def __getitem__(self, name: str) -> Any:
        return self.attrs[name]

    @property
    def fifo(self) -> bool:
        return self.attrs.get("MSGDLVSQ") == C.MQMDS_FIFO

    @property
    def is_local(self) -> bool:
        return self.qtype == A.QLOCAL

    @property
    def temporary(self) -> bool:
        return self.deftype == C.MQQDT_TEMPORARY_DYNAMIC

    def status(self, name: str) -> int | str:
        """A status attribute (CURDEPTH, IPPROCS ...) or a definition attribute."""
        if name == "QUEUE":
            return self.name
        if name == "QTYPE":
            return A.QUEUE_BY_NAME["QTYPE"].words[self.qtype]
        if name == "CURDEPTH":
            return self.messages.depth
        if name == "IPPROCS":
            return self.input_count
        if name == "OPPROCS":
            return self.output_count
        if name == "QDEFTYPE":
            return self.deftype
        if name in ("CRDATE", "CRTIME"):
            return self.created[0 if name == "CRDATE" else 1]
        if name in ("ALTDATE", "ALTTIME"):
            return self.altered[0 if name == "ALTDATE" else 1]
        value = self.attrs.get(name)
        # a definition journaled before the attribute existed has its default
        return A.QUEUE_BY_NAME[name].default if value is None else value

    def encode(self) -> bytes:
        return json.dumps({"name": self.name, "type": self.qtype, "attrs": self.attrs, "deftype": self.deftype,
                           "created": self.created, "altered": self.altered}).encode()


def decode_object(payload: bytes, now: float, meter: Meter | None = None) -> QueueObject:
    doc = json.loads(payload)
    obj = QueueObject(doc["name"], doc["type"], dict(doc["attrs"]), now, int(doc["deftype"]), meter)
    obj.created = (doc["created"][0], doc["created"][1])
    obj.altered = (doc["altered"][0], doc["altered"][1])
    return obj


class ObjectRegistry:
    """Every queue and the queue manager's own attributes; the admin verbs.

    ``journal_write(obj)`` is called for each change that must be persisted; the
    QueueManager supplies it (the registry never sees the journal).
    """

    def __init__(self, qmgr_name: str, now: Callable[[], float]) -> None:
        self.now = now
        self.queues: dict[str, QueueObject] = {}
        self.qmgr: dict[str, int | str] = A.defaults_for(A.QMGR)
        self.qmgr_name = qmgr_name
        self.meter = Meter()  # shared by every queue's index (the queue manager's, engine.paging)
        self.qmgr_record_id = 0
        self.qmgr_created = stamp(now())
        self.qmgr_altered = self.qmgr_created
        self.persist: Callable[[QueueObject], None] = lambda obj: None
        self.unpersist: Callable[[QueueObject], None] = lambda obj: None
        self.persist_qmgr: Callable[[], None] = lambda: None
        # Bumped by every change of a queue's or the queue manager's attributes: what MQPUT
        # worked out from them and kept (engine.putplan) is stale from then on.
        self.epoch = 0

    # -- lookups ---------------------------------------------------------------------------
    def find(self, name: str) -> QueueObject | None:
        return self.queues.get(name.rstrip())

    def require(self, name: str) -> QueueObject:
        obj = self.find(name)
        if obj is None:
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"queue {name.rstrip()!r} is not defined")
        return obj

    def names(self, pattern: str = "*", qtype: str | None = None) -> list[str]:
        """Names matching an MQSC generic name (``APP.*``), sorted as DISPLAY lists them."""
        pattern = pattern.rstrip() or "*"
        return sorted(n for n, o in self.queues.items() if fnmatch.fnmatchcase(n, pattern) and qtype in (None, o.qtype))

    def qmgr_status(self, name: str) -> int | str:
        if name == "QMNAME":
            return self.qmgr_name
        if name == "QMID":
            return f"{self.qmgr_name}_{self.qmgr_created[0]}"
        if name in ("CRDATE", "CRTIME"):
            return self.qmgr_created[0 if name == "CRDATE" else 1]
        if name in ("ALTDATE", "ALTTIME"):
            return self.qmgr_altered[0 if name == "ALTDATE" else 1]
        attr = A.QMGR_BY_NAME[name]
        return self.qmgr.get(name, attr.default)

    # -- admin verbs -----------------------------------------------------------------------
    def define(self, qtype: str, name: str, attrs: Mapping[str, object] | None = None, *, like: str | None = None,
               replace: bool = False, deftype: int = C.MQQDT_PREDEFINED) -> QueueObject:
        """DEFINE QLOCAL/QALIAS/QMODEL/QREMOTE: a new queue from the type's defaults (or LIKE another).

        Raises:
            MQError: MQRC_OBJECT_ALREADY_EXISTS without REPLACE, MQRC_OBJECT_TYPE_ERROR when
                REPLACE meets another type, MQRC_UNKNOWN_OBJECT_NAME for a missing LIKE, and
                the attribute rules of attrs.py.
        """
        if qtype not in A.QUEUE_TYPES:
            raise failed(C.MQRC_OBJECT_TYPE_ERROR, f"{qtype} is not a queue type this queue manager defines")
        name = check_name(name)
        existing = self.queues.get(name)
        if existing is not None and not replace:
            raise failed(C.MQRC_OBJECT_ALREADY_EXISTS, f"{qtype}({name}) already exists; use REPLACE to redefine it")
        if existing is not None and existing.qtype != qtype:
            raise failed(C.MQRC_OBJECT_TYPE_ERROR, f"{name} exists as {existing.qtype}, not {qtype}")
        base_name = like or _DEFAULT_OF[qtype]
        base = self.queues.get(base_name)
        if like is not None and (base is None or base.qtype != qtype):
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"LIKE({like}) is not a {qtype}")
        values = dict(base.attrs) if base is not None else A.defaults_for(qtype)
        values.update(self._checked(qtype, attrs or {}))
        self._check_references(qtype, name, values)
        self.epoch += 1
        if existing is not None:
            existing.attrs = values
            existing.altered = stamp(self.now())
            self.persist(existing)
            return existing
        obj = QueueObject(name, qtype, values, self.now(), deftype, self.meter)
        self.queues[name] = obj
        if not obj.temporary:
            self.persist(obj)
        return obj

    def alter(self, name: str, attrs: Mapping[str, object], qtype: str | None = None) -> QueueObject:
        """ALTER a queue's definition attributes.

        Raises:
            MQError: MQRC_UNKNOWN_OBJECT_NAME, MQRC_OBJECT_TYPE_ERROR, and attribute rules.
        """
        obj = self.require(name)
        if qtype is not None and obj.qtype != qtype:
            raise failed(C.MQRC_OBJECT_TYPE_ERROR, f"{obj.name} is a {obj.qtype}, not a {qtype}")
        values = dict(obj.attrs)
        values.update(self._checked(obj.qtype, attrs))
        self._check_references(obj.qtype, obj.name, values)
        if values.get("SHARE") == C.MQQA_NOT_SHAREABLE and obj.input_count > 1:
            raise failed(C.MQRC_OBJECT_IN_USE, f"{obj.name} is open for input by {obj.input_count} handles; NOSHARE refused")
        fifo_before = obj.fifo
        obj.attrs = values
        self.epoch += 1
        obj.altered = stamp(self.now())
        if obj.fifo != fifo_before:
            _reorder(obj)
        if not obj.temporary:
            self.persist(obj)
        return obj

    def delete(self, name: str, *, purge: bool = False, qtype: str | None = None) -> None:
        """DELETE a queue (PURGE to discard messages).

        Raises:
            MQError: MQRC_OBJECT_IN_USE when open, MQRC_Q_NOT_EMPTY with messages and no PURGE.
        """
        obj = self.require(name)
        if qtype is not None and obj.qtype != qtype:
            raise failed(C.MQRC_OBJECT_TYPE_ERROR, f"{obj.name} is a {obj.qtype}, not a {qtype}")
        if obj.handles:
            raise failed(C.MQRC_OBJECT_IN_USE, f"{obj.name} is open by {len(obj.handles)} handles")
        if obj.messages.uncommitted:
            raise failed(C.MQRC_OBJECT_IN_USE, f"{obj.name} has {obj.messages.uncommitted} uncommitted messages")
        if len(obj.messages) and not purge:
            raise failed(C.MQRC_Q_NOT_EMPTY, f"{obj.name} holds {len(obj.messages)} messages; use PURGE")
        del self.queues[obj.name]
        self.epoch += 1
        self.unpersist(obj)

    def display(self, name: str, qtype: str | None = None, attrs: Iterable[str] = ("ALL",)) -> list[dict[str, int | str]]:
        """DISPLAY QUEUE(name) with generic names: one dict per queue, MQSC keywords to values."""
        wanted = [a.upper() for a in attrs]
        out = []
        for n in self.names(name, qtype):
            obj = self.queues[n]
            row: dict[str, int | str] = {"QUEUE": obj.name, "TYPE": obj.qtype}
            for attr in A.QUEUE_ATTRS + A.QUEUE_STATUS_ATTRS:
                if obj.qtype not in attr.types or (attr.name == "QDEFTYPE" and obj.qtype != A.QLOCAL):
                    continue
                if "ALL" in wanted or attr.name in wanted:
                    row[attr.name] = obj.status(attr.name)
            out.append(row)
        return out

    def alter_qmgr(self, attrs: Mapping[str, object]) -> None:
        """ALTER QMGR.

        Raises:
            MQError: attribute rules (unknown, read-only, out of range).
        """
        values = self._checked(A.QMGR, attrs)
        self.qmgr.update(values)
        self.epoch += 1
        self.qmgr_altered = stamp(self.now())
        self.persist_qmgr()

    def display_qmgr(self) -> dict[str, int | str]:
        return {a.name: self.qmgr_status(a.name) for a in A.QMGR_ATTRS}

    def encode_qmgr(self) -> bytes:
        return json.dumps({"attrs": self.qmgr, "created": self.qmgr_created, "altered": self.qmgr_altered}).encode()

    def load_qmgr(self, payload: bytes) -> None:
        doc = json.loads(payload)
        self.qmgr.update(doc["attrs"])
        self.epoch += 1
        self.qmgr_created = (doc["created"][0], doc["created"][1])
        self.qmgr_altered = (doc["altered"][0], doc["altered"][1])

    # -- rules -----------------------------------------------------------------------------
    def _checked(self, obj_type: str, attrs: Mapping[str, object]) -> dict[str, int | str]:
        out: dict[str, int | str] = {}
        for key, value in attrs.items():
            attr = A.lookup(obj_type, key)
            if attr.readonly:
                raise failed(C.MQRC_SELECTOR_ERROR, f"{attr.name} is status, not a definition attribute of {obj_type}")
            out[attr.name] = attr.check(value)
        return out

    def _check_references(self, qtype: str, name: str, values: Mapping[str, int | str]) -> None:
        if qtype == A.QALIAS and values.get("TARGET") == name:
            raise failed(C.MQRC_ALIAS_BASE_Q_TYPE_ERROR, f"alias {name} cannot target itself")


def _reorder(obj: QueueObject) -> None:
    """MSGDLVSQ changed: rebuild the order keys (IBM applies the new order to existing messages)."""
    msgs = obj.messages.clear()
    fresh = MessageQueue(obj.messages.meter)
    fresh.uncommitted = obj.messages.uncommitted
    for m in msgs:
        m.reposition(obj.fifo)
        fresh.insert(m)
    obj.messages = fresh
