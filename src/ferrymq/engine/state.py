"""The engine's shared state: the queue manager's name, clock, journal, objects (queues and
topics), connections and handles, with the lookups and stamps every MQI verb needs.

One EngineState is made per queue manager and handed to each collaborator the
QueueManager facade composes (engine.qmgr): they read its fields and call its helpers,
and each owns its own state besides (waits, units of work, staging).
"""

from __future__ import annotations

import time

from ferrymq.engine import attrs as A
from ferrymq.engine.api import Clock
from ferrymq.engine.authority import KIND_SECURITY, Authorities
from ferrymq.engine.channels import ChannelRegistry, ListenerRegistry
from ferrymq.engine.chlcontrol import ChannelControl
from ferrymq.engine.namelists import NamelistRegistry
from ferrymq.engine.objects import ObjectRegistry, QueueObject
from ferrymq.engine.paging import MemoryLimits, Pager
from ferrymq.engine.processes import ProcessRegistry
from ferrymq.engine.session import Connection, Handle
from ferrymq.engine.staging import Staging
from ferrymq.engine.topics import TopicRegistry
from ferrymq.errors import failed
from ferrymq.mq import constants as C
from ferrymq.store.journal import Journal
from ferrymq.wire.mqmd import put_stamp_of
from ferrymq.wire.mqod_names import check_dynamic_q_name

_HUNDREDTHS = tuple(f"{n:02d}" for n in range(100))  # PutTime's last two digits, made once


class EngineState:
    """Fields and helpers shared by the engine's collaborators."""

    def __init__(self, name: str, journal: Journal, clock: Clock, limits: MemoryLimits | None = None) -> None:
        self.name = name
        self.journal = journal
        self.clock = clock
        self.pager = Pager(journal, limits or MemoryLimits())
        self.objects = ObjectRegistry(name, clock.now)
        self.objects.meter = self.pager.meter
        self.staging = Staging(journal, self.objects)
        self.topics = TopicRegistry(self.objects, clock.now)  # TOPIC objects and the topic tree
        self.topics.attach(self.staging)
        self.namelists = NamelistRegistry(self.objects, clock.now)  # NAMELIST objects
        self.namelists.attach(self.staging)
        self.channels = ChannelRegistry(self.objects, clock.now)  # CHANNEL objects (engine.channels)
        self.channels.attach(self.staging)
        self.listeners = ListenerRegistry(self.objects, clock.now)  # LISTENER objects
        self.listeners.attach(self.staging)
        self.channel_control = ChannelControl()  # running channels and listeners (engine.chlcontrol)
        self.channels.in_use = self.channel_control.active
        self.listeners.in_use = self.channel_control.listening
        self.processes = ProcessRegistry(self.objects, clock.now)  # PROCESS objects (triggering)
        self.processes.attach(self.staging)
        self.authority = Authorities()  # the OAM and the AUTHINFO settings (engine.authority)
        self.authority.persist = self._persist_authority
        self.connections: dict[int, Connection] = {}
        self.handles: dict[int, Handle] = {}
        self.quiescing = False
        self._last_id = 0
        self._dyn_counter = 0
        self._stamp_second = -1
        self._stamp = ("", "")
        self._stamp_tick = -1  # put_stamp's: the 1/100 s of its stamp, as second * 100 + hundredths
        self._stamp_bytes = b""
        self._id_prefix = b"AMQ " + name[:12].encode("latin-1", "replace").ljust(12, b" ")

    # -- identifiers -----------------------------------------------------------------------
    def new_id(self) -> bytes:
        """A 24-byte MsgId/CorrelId: ``AMQ ``, 12 characters of the QM name, 8 clock-derived bytes.

        The tail is max(last + 1, microseconds now), so identifiers stay unique across
        restarts as long as the clock does not run backwards by more than the restart took.
        """
        self._last_id = max(self._last_id + 1, int(self.clock.now() * 1_000_000))
        return self._id_prefix + self._last_id.to_bytes(8, "big")

    def reserve_ids(self, n: int) -> tuple[bytes, int]:
        """``n`` identifiers at once, as ``new_id`` would make them one by one: the prefix
        and the first tail (tail + i is the i-th; the caller may leave some unused)."""
        first = max(self._last_id + 1, int(self.clock.now() * 1_000_000))
        self._last_id = first + max(n, 1) - 1
        return self._id_prefix, first

    def recovered_id(self, tail: int) -> None:
        """Recovery saw a MsgId with this tail: identifiers made from now on are later."""
        self._last_id = max(self._last_id, tail)

    def dynamic_name(self, pattern: str) -> str:
        """A name from DynamicQName: ``*`` at the end is replaced by a unique string.

        Raises:
            MQError: MQRC_DYNAMIC_Q_NAME_ERROR for a pattern IBM would refuse.
        """
        pattern = pattern.rstrip()
        check_dynamic_q_name(pattern)
        if not pattern or pattern.startswith("*") or ("*" in pattern and not pattern.endswith("*")):
            raise failed(C.MQRC_DYNAMIC_Q_NAME_ERROR, f"DynamicQName {pattern!r}: '*' may only end a non-empty prefix")
        if any(not (c.isascii() and (c.isalnum() or c in "./_%")) for c in pattern.removesuffix("*")):
            raise failed(C.MQRC_DYNAMIC_Q_NAME_ERROR,
                         f"DynamicQName {pattern!r} has characters a queue name may not (A-Z a-z 0-9 . / _ %)")
        if not pattern.endswith("*"):
            return pattern
        while True:
            self._dyn_counter += 1
            unique = f"{int(self.clock.now()):08X}{self._dyn_counter:08X}"
            name = (pattern[:-1] + unique)[: C.MQ_Q_NAME_LENGTH]
            if self.objects.find(name) is None:
                return name

    # -- lookups ---------------------------------------------------------------------------
    def _persist_authority(self) -> None:
        a = self.authority
        a.record_id = self.staging.write_record(a.record_id, KIND_SECURITY, a.encode())
        self.objects.epoch += 1  # a put memo made under the old authorities is stale

    def conn(self, hconn: int) -> Connection:
        conn = self.connections.get(hconn)
        if conn is None:
            raise failed(C.MQRC_HCONN_ERROR, f"connection handle {hconn} is not connected")
        return conn

    def handle(self, conn: Connection, hobj: int) -> Handle:
        h = conn.handles.get(hobj)
        if h is None:
            raise failed(C.MQRC_HOBJ_ERROR, f"object handle {hobj} is not open on this connection")
        if h.deleted:
            raise failed(C.MQRC_Q_DELETED, f"queue {h.name} was deleted while this handle was open")
        return h

    def check_quiescing(self, options: int, flag: int) -> None:
        if self.quiescing and options & flag:
            raise failed(C.MQRC_Q_MGR_QUIESCING, f"queue manager {self.name} is quiescing")

    def dead_letter_queue(self) -> QueueObject | None:
        name = str(self.objects.qmgr.get("DEADQ", ""))
        q = self.objects.find(name) if name else None
        return q if q is not None and q.is_local else None

    def stamp_put(self, now: float) -> tuple[str, str]:
        """PutDate ``YYYYMMDD`` and PutTime ``HHMMSSTH`` in GMT."""
        second = int(now)
        if second != self._stamp_second:
            t = time.gmtime(second)
            self._stamp_second, self._stamp = second, (time.strftime("%Y%m%d", t), time.strftime("%H%M%S", t))
        hundredths = int((now - second) * 100)
        return self._stamp[0], self._stamp[1] + (_HUNDREDTHS[hundredths] if 0 <= hundredths < 100 else f"{hundredths:02d}")

    def put_stamp(self, now: float) -> bytes:
        """``stamp_put(now)`` as a descriptor holds it, PutDate and PutTime side by side (the
        ``stamp`` of MQMD.with_ids): made once per 1/100 s, the planned put's every stamp."""
        second = int(now)
        tick = second * 100 + int((now - second) * 100)
        if tick != self._stamp_tick:
            self._stamp_bytes = put_stamp_of(*self.stamp_put(now))
            self._stamp_tick = tick
        return self._stamp_bytes

    def qmgr_attr(self, name: str) -> int:
        value = self.objects.qmgr.get(name)
        return int(A.QMGR_BY_NAME[name].default if value is None else value)
