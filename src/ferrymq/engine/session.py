"""Connections, object handles, units of work, waiting gets and replayable readers'
positions: the per-application state of the engine, as plain records.

A leaf of the engine: it holds data and no behaviour, so every collaborator that works on
connections and handles (engine.qmgr and the modules it composes) imports it and it
imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ferrymq.engine.api import GetOptions
from ferrymq.engine.message import Message
from ferrymq.engine.msgqueue import Key
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.selection import SelectionView
from ferrymq.tls.names import TLSPeer
from ferrymq.wire.mqmd import MQMD

if TYPE_CHECKING:
    from ferrymq.engine.putplan import PutPlan
    from ferrymq.engine.remote import Route
    from ferrymq.engine.subscriptions import Subscription


@dataclass(slots=True)
class UnitOfWork:
    """Puts and gets made under syncpoint by one connection, not yet committed.

    ``puts`` are invisible to getters; ``gets`` are out of their queue's index. Both
    still count in their queue's depth (MessageQueue.uncommitted).
    """

    txid: int
    puts: list[tuple[QueueObject, Message]] = field(default_factory=list)
    gets: list[tuple[QueueObject, Message]] = field(default_factory=list)
    journaled: bool = False  # a record was written under txid, so commit/rollback is journaled
    marked_skip: Message | None = None
    # Gets read ahead (GET_AHEAD) by (queue, sequence): among ``gets``, their deletes not yet
    # journaled (engine.units.settle), so a return undoes them whole.
    ahead: dict[tuple[str, int], tuple[QueueObject, Message]] = field(default_factory=dict)
    # The other gets of a message with a record: their deletes, staged together when the
    # unit settles (engine.units.settle), one journal call for the unit's run of gets.
    drops: list[Message] = field(default_factory=list)
    # What changes only when the unit ends, beside its puts and gets (a retained
    # publication replaced under syncpoint: engine.retained).
    after_commit: list[Callable[[], None]] = field(default_factory=list)
    after_backout: list[Callable[[], None]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.puts) + len(self.gets)


@dataclass(slots=True)
class Handle:
    """An open object: a queue (resolved through an alias), the queue manager itself, a
    topic opened to publish on (``topic``: its full topic string) or a subscription made by
    MQSUB (``subscription``); the last two have no ``queue``."""

    hobj: int
    hconn: int
    options: int
    name: str  # the name as opened (an alias's own name)
    queue: QueueObject | None  # the local queue messages go to or come from; None for QMGR
    alias: QueueObject | None = None
    input_mode: int = 0  # MQOO_INPUT_SHARED or MQOO_INPUT_EXCLUSIVE when open for input
    cursor: Key | None = None  # browse position
    under_cursor: Message | None = None  # the message the browse cursor is on
    locked: Message | None = None
    saved_context: MQMD | None = None  # the context of the last message got (MQOO_SAVE_ALL_CONTEXT)
    selection: SelectionView | None = None  # opened with a SelectionString: what its gets may see
    put_plan: PutPlan | None = None  # what the last MQPUT worked out, for the next (engine.putplan)
    # (epoch, options, match options, message handle) of the last MQGET whose checks of its
    # options and this handle passed: they pass again for the same ones (engine.getting).
    get_checked: tuple[int, int, int, bool] | None = None
    deleted: bool = False
    topic: str | None = None
    subscription: Subscription | None = None
    remote: Route | None = None  # a queue on another queue manager: ``queue`` is its transmission queue
    # A distribution list (engine.distlist): one handle per object record (None: its open
    # failed, with the (CompCode, Reason) in ``member_reasons``); ``queue`` is None.
    members: list[Handle | None] | None = None
    member_reasons: list[tuple[int, int]] = field(default_factory=list)


@dataclass(slots=True)
class Connection:
    hconn: int
    appl_name: str
    user: str
    appl_type: int
    handles: dict[int, Handle] = field(default_factory=dict)
    conn_name: str = ""  # the client's network address (DISPLAY CONN CONNAME); blank in bindings mode
    channel: str = ""  # the server-connection channel (DISPLAY CONN CHANNEL); blank in bindings mode
    tls: TLSPeer | None = None  # what its TLS handshake agreed (DISPLAY CHSTATUS's SSLPEER ...); None: plain
    stopping: bool = False  # STOP CHANNEL MODE(QUIESCE) of its channel: ending (DISPLAY CHSTATUS: STOPPING)
    shcnv: int = 1  # its channel's SHARECNV when it connected, as 0 or 1 (one conversation per socket)
    uow: UnitOfWork | None = None
    waiters: set[int] = field(default_factory=set)
    acct: Any = None  # its accounting while ACCTMQI or ACCTQ collects (engine.monitoring)
    connected_at: float = 0.0
    cno_options: int = 0  # its MQCNO_ACCOUNTING_* options (honoured under ACCTCONO(ENABLED))
    pid: int = 0  # the application's process and thread (accounting's ApplicationPid/Tid); 0: not known
    tid: int = 0
    # The put plans of its closed handles by (name as opened, open options): a handle opened
    # again the same way starts with its last plan, which holds while the registry's epoch
    # does (engine.putplan), so its first put is planned too (a channel's receiving agent
    # opens its batch's destinations again per batch). At most PLANS_KEPT.
    closed_plans: dict[tuple[str, int], PutPlan] = field(default_factory=dict)


def connection_id(qmgr_name: str, hconn: int) -> bytes:
    """The 24-byte ConnectionId of a connection (DISPLAY CONN, MQCNO, accounting messages)."""
    return (b"FMQ" + qmgr_name.encode("latin-1", "replace")[:13]).ljust(16, b" ") + hconn.to_bytes(8, "big")


@dataclass(slots=True)
class Waiter:
    """A get that is waiting for a message (MQGMO_WAIT)."""

    waiter_id: int
    md: MQMD
    gmo: GetOptions
    buffer_length: int
    queue: str
    # Its connection and handle (a put that hands its message over, engine.handover, reads
    # them without looking them up): a wait ends before either goes (MQCLOSE, MQDISC).
    conn: Connection
    handle: Handle
    # The MsgId and CorrelId its search compares (matched by the options and not none), or
    # None: read once as the wait begins, so that a put looking for the wait to hand its
    # message to (engine.handover) compares them as they are.
    match_msg_id: bytes | None = None
    match_correl_id: bytes | None = None
    # A read-ahead's wait (get_many) goes on after a message handed over to it while it may
    # take more: how many more, and about how many more bytes of data (engine.handover).
    limit: int = 1
    room: int = 0
    # Its get may do no more than take the first message its MsgId and CorrelId match: no
    # browse, cursor, lock, skip-backout mark, conversion, selection string, nor a match
    # beyond those two (what a hand-over asks of every wait it passes, engine.handover),
    # read once as it begins.
    plain: bool = False
    # A message handed over to it is taken by counting alone: its get is outside syncpoint
    # and its handle saves no context (engine.handover), read once as it begins.
    bare: bool = False


@dataclass(slots=True)
class ReaderPosition:
    """How far one named reader has removed on one queue, and the journal record holding it
    (engine.sequence_access)."""

    queue: str
    reader: str
    acked: int
    record_id: int = 0
