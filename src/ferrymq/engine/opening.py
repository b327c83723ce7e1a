"""MQCONN, MQDISC, MQOPEN and MQCLOSE: connections and the handles they hold open.

Owns the numbering of connection and object handles, the checks of MQOPEN and MQCLOSE,
what a handle holds on its queue (input and output counts, exclusive input, a selection
view, a browse lock), model queues' dynamic queues and their deletion. Where an opened
name leads is the resolver's (engine.routing): a queue, or a topic string for a topic
opened to publish on. A subscription's handle (MQSUB's hsub) is numbered and closed here
too; what closing it does to the subscription is engine.subscribing's (``close_sub``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ferrymq.engine import attrs as A
from ferrymq.engine import validate
from ferrymq.engine.api import ObjectDescriptor, OpenResult
from ferrymq.engine.authority import open_auths
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.remote import Route
from ferrymq.engine.routing import Resolver
from ferrymq.engine.selection import SelectionView, selector_for_open
from ferrymq.engine.selector import Selector
from ferrymq.engine.session import Connection, Handle
from ferrymq.engine.state import EngineState
from ferrymq.engine.topics import BASE_TOPIC, parents
from ferrymq.engine.units import Units
from ferrymq.engine.waits import Waits
from ferrymq.errors import MQError, failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.wire.mqod_names import check_od_names

_INPUT = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_INPUT_SHARED | C.MQOO_INPUT_EXCLUSIVE
_QMGR_OPEN_OK = C.MQOO_INQUIRE | C.MQOO_FAIL_IF_QUIESCING | C.MQOO_ALTERNATE_USER_AUTHORITY
# A topic opens to publish on, or to inquire (IBM: a subscription is made with MQSUB,
# never MQOPEN; only queues' attributes are set with MQSET).
_TOPIC_OPEN_OK = (C.MQOO_OUTPUT | C.MQOO_INQUIRE | C.MQOO_PASS_IDENTITY_CONTEXT | C.MQOO_PASS_ALL_CONTEXT | C.MQOO_SET_IDENTITY_CONTEXT
                  | C.MQOO_SET_ALL_CONTEXT | C.MQOO_FAIL_IF_QUIESCING | C.MQOO_ALTERNATE_USER_AUTHORITY
                  | C.MQOO_NO_MULTICAST | C.MQOO_BIND_AS_Q_DEF)
# A remote queue (an ObjectQMgrName elsewhere, a QREMOTE, an alias of one) opens to put to.
_REMOTE_OPEN_OK = (C.MQOO_OUTPUT | C.MQOO_PASS_IDENTITY_CONTEXT | C.MQOO_PASS_ALL_CONTEXT | C.MQOO_SET_IDENTITY_CONTEXT
                   | C.MQOO_SET_ALL_CONTEXT | C.MQOO_FAIL_IF_QUIESCING | C.MQOO_ALTERNATE_USER_AUTHORITY
                   | C.MQOO_BIND_AS_Q_DEF | C.MQOO_BIND_ON_OPEN | C.MQOO_BIND_NOT_FIXED)
MANAGED_PREFIX = "SYSTEM.MANAGED."  # the names of managed subscriptions' queues
PLANS_KEPT = 64  # the closed handles' put plans a connection keeps (Connection.closed_plans)


def _keep_sub_unbound(conn: Connection, h: Handle, options: int) -> None:  # pragma: no cover - bound at composition
    raise RuntimeError("Opener used for a subscription handle before close_sub_with")


class Opener:
    """Connections and handles of one queue manager (see the module docstring)."""

    def __init__(self, state: EngineState, waits: Waits, units: Units, resolver: Resolver) -> None:
        self.state = state
        self.name, self.objects, self.connections, self.handles = (state.name, state.objects, state.connections,
                                                                   state.handles)
        self.waits, self.units, self.resolver = waits, units, resolver
        self._next_hconn = 1
        self._next_hobj = 1
        self.close_sub: Callable[[Connection, Handle, int], None] = _keep_sub_unbound
        # Managed queues whose subscription was removed while a handle was open on them:
        # deleted, with what is left on them, when their last handle closes (IBM).
        self.orphans: set[str] = set()
        # A queue's first input handle (an initiation queue: a trigger monitor starting).
        self.opened_for_input: Callable[[QueueObject], None] = lambda q: None

    def close_sub_with(self, close_sub: Callable[[Connection, Handle, int], None]) -> None:
        """Bind what MQCLOSE of a subscription handle does (engine.subscribing), at composition."""
        self.close_sub = close_sub

    @property
    def next_hobj(self) -> int:
        """The object handle the next MQOPEN gives (handles are numbered across connections)."""
        return self._next_hobj

    def connect(self, *, appl_name: str = "", user: str = "", appl_type: int = C.MQAT_DEFAULT) -> int:
        """MQCONN: a new connection handle.

        Raises:
            MQError: MQRC_Q_MGR_QUIESCING while the queue manager is ending.
        """
        if self.state.quiescing:
            raise failed(C.MQRC_Q_MGR_QUIESCING, f"queue manager {self.name} is quiescing")
        self.state.authority.check(user, C.MQOT_Q_MGR, self.name, (F.MQAUTH_CONNECT,), "connect to")
        hconn = self._next_hconn
        self._next_hconn += 1
        self.connections[hconn] = Connection(hconn, appl_name, user, appl_type)
        return hconn

    def disconnect(self, hconn: int, *, commit: bool = True) -> None:
        """MQDISC: closes the connection's handles; an open unit of work is committed (as IBM
        does on a normal MQDISC) or backed out (``commit=False``: the connection was lost)."""
        conn = self.state.conn(hconn)
        if conn.uow is not None:
            if commit:
                try:
                    self.units.commit(conn)
                except MQError:
                    self.units.backout(conn)
            else:
                self.units.backout(conn)
        for wid in list(conn.waiters):
            self.waits.end_wait(wid)
        for hobj in list(conn.handles):
            self.close(hconn, hobj)
        del self.connections[hconn]

    def open(self, hconn: int, od: ObjectDescriptor, options: int) -> OpenResult:
        """MQOPEN a queue (local, alias or model) or the queue manager object.

        Raises:
            MQError: 2046, 2043, 2045, 2085, 2086, 2035, 2082, 2001, 2087, 2042, 2161, 2011, 2100 ...;
                for a SelectionString 2516, 2519, 2459, 2504 (see engine.selection).
        """
        state = self.state
        conn = state.conn(hconn)
        validate.open_options(options)
        check_od_names(od.object_name, od.object_q_mgr_name, od.alternate_user_id, options)
        selector = selector_for_open(od.selection_string, od.object_type, options)
        state.check_quiescing(options, C.MQOO_FAIL_IF_QUIESCING)
        if len(conn.handles) >= state.qmgr_attr("MAXHANDS"):
            raise failed(C.MQRC_HANDLE_NOT_AVAILABLE, f"connection holds MAXHANDS({state.qmgr_attr('MAXHANDS')}) handles")
        self.check_open_authority(conn, od, options)
        if od.object_type == C.MQOT_Q_MGR:
            if od.object_name.strip() not in ("", self.name):
                raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"{od.object_name.strip()} is not this queue manager")
            if options & ~_QMGR_OPEN_OK:
                raise failed(C.MQRC_OPTION_NOT_VALID_FOR_TYPE, "the queue manager object opens for MQOO_INQUIRE only")
            return self._new_handle(conn, options, self.name, None, None, 0)
        if od.object_type == C.MQOT_TOPIC:
            return self._open_topic(conn, od, options)
        if od.object_type != C.MQOT_Q:
            raise failed(C.MQRC_OBJECT_TYPE_ERROR, f"ObjectType {od.object_type} is not MQOT_Q, MQOT_TOPIC or MQOT_Q_MGR")
        obj, alias, route = self.resolver.resolve(od.object_name, od.object_q_mgr_name)
        # IBM: a local definition (a QREMOTE, an alias) may also be opened to inquire on its
        # own attributes (MQINQ answers from Handle.alias); a queue named by ObjectQMgrName not.
        # A queue-manager alias bringing the name back here still opens for output only (2045).
        named_elsewhere = not self.resolver.remote.is_local(od.object_q_mgr_name)
        remote_ok = _REMOTE_OPEN_OK | (C.MQOO_INQUIRE if alias is not None and not named_elsewhere else 0)
        if ((route is not None or named_elsewhere or (alias is not None and alias.qtype == A.QREMOTE))
                and options & ~remote_ok):
            raise failed(C.MQRC_OPTION_NOT_VALID_FOR_TYPE,
                         f"{od.object_name.strip()} is a queue on another queue manager (or its definition): "
                         "it opens for output" + (" or inquire" if alias is not None else "") + " only")
        if route is not None:
            return self._open_remote(conn, options, alias, route)
        input_mode = 0
        if options & _INPUT:
            input_mode = self._input_mode(obj, options)
        if obj.qtype == A.QMODEL:
            name = state.dynamic_name(od.dynamic_q_name)
            if self.objects.find(name) is not None:
                raise failed(C.MQRC_OBJECT_ALREADY_EXISTS, f"dynamic queue {name} already exists")
            attrs = {k: v for k, v in obj.attrs.items() if k != "DEFTYPE"}
            deftype = int(obj["DEFTYPE"])
            obj = self.objects.define(A.QLOCAL, name, {}, like=None, deftype=deftype)
            self.objects.queues[name].attrs.update(attrs)
            self.objects.epoch += 1
            if not obj.temporary:
                state.staging.persist_object(obj)
            input_mode = self._input_mode(obj, options) if options & _INPUT else 0
            opened = self._new_handle(conn, options, obj.name, obj, None, input_mode, selector)
            obj.owner_hobj = opened.hobj
            return opened
        return self._new_handle(conn, options, alias.name if alias else obj.name, obj, alias, input_mode, selector)

    def check_open_authority(self, conn: Connection, od: ObjectDescriptor, options: int) -> None:
        """The OAM's check of an MQOPEN (engine.authority): the authority each open option
        needs on the object as named (a queue on another queue manager: on its transmission
        queue); with MQOO_ALTERNATE_USER_AUTHORITY the alternate user's, and altusr for the
        caller. Raises MQError 2035 (MQRC_NOT_AUTHORIZED) before anything is looked up, so
        an unauthorised user learns nothing of the object either."""
        oam = self.state.authority
        if not oam.enabled:
            return
        user = conn.user
        if options & C.MQOO_ALTERNATE_USER_AUTHORITY:
            oam.check(user, C.MQOT_Q_MGR, self.name, (F.MQAUTH_ALT_USER_AUTHORITY,), "act as another user on")
            user = od.alternate_user_id.strip()
        needed = open_auths(options)
        if od.object_type == C.MQOT_Q_MGR:
            oam.check(user, C.MQOT_Q_MGR, self.name, needed, "open")
        elif od.object_type == C.MQOT_TOPIC:
            topic = self.resolver.topics.full_string(od.object_name, od.object_string)
            self.check_topic_authority(user, topic, needed - {F.MQAUTH_OUTPUT} | (
                {F.MQAUTH_PUBLISH} if F.MQAUTH_OUTPUT in needed else set()), "publish on")
        elif od.object_type == C.MQOT_Q:
            name = od.object_name.strip()
            if not self.resolver.remote.is_local(od.object_q_mgr_name):
                route = self.resolver.remote.for_qmgr(name, od.object_q_mgr_name)
                name = route.xmitq.name if route is not None else name
            oam.check(user, C.MQOT_Q, name, needed, "open")

    def check_topic_authority(self, user: str, topic: str, needed: Iterable[int], what: str) -> None:
        """Topic authority as IBM's: what is granted on the administered topic object closest
        above the topic string, or on any object further up the tree (SYSTEM.BASE.TOPIC last).
        Raises MQError 2035."""
        oam = self.state.authority
        if not oam.enabled or oam.is_admin(user):
            return
        want = frozenset(needed)
        have: set[int] = set()
        names = [obj.name for s in parents(topic) if (obj := self.state.topics.by_string.get(s)) is not None]
        for name in [*names, BASE_TOPIC]:
            have |= oam.granted(user, C.MQOT_TOPIC, name)
        if want - have:
            oam.check(user, C.MQOT_TOPIC, names[0] if names else BASE_TOPIC, want, what)

    def _open_remote(self, conn: Connection, options: int, first: QueueObject | None, route: Route) -> OpenResult:
        """MQOPEN of a queue on another queue manager: the handle puts to the transmission
        queue behind an MQXQH (engine.putting); IBM reports the remote names as resolved."""
        name = first.name if first is not None else route.q_name
        opened = self._new_handle(conn, options, name, route.xmitq, first, 0)
        h = self.handles[opened.hobj]
        h.remote, h.put_plan = route, None  # its puts are made behind an MQXQH: never planned
        return OpenResult(opened.hobj, name, route.q_name, route.q_mgr_name)

    def _open_topic(self, conn: Connection, od: ObjectDescriptor, options: int) -> OpenResult:
        """MQOPEN of a topic, to publish on: the handle holds the full topic string."""
        if options & ~_TOPIC_OPEN_OK:
            raise failed(C.MQRC_OPTION_NOT_VALID_FOR_TYPE,
                         "a topic opens for MQOO_OUTPUT (with context options) or MQOO_INQUIRE; subscribe with MQSUB")
        topic = self.resolver.resolve_topic(od.object_name, od.object_string, od.object_q_mgr_name)
        hobj = self._next_hobj
        self._next_hobj += 1
        name = od.object_name.rstrip()
        h = Handle(hobj, conn.hconn, options, name or topic, None, topic=topic)
        conn.handles[hobj] = h
        self.handles[hobj] = h
        return OpenResult(hobj, name, "", self.name, res_object_string=topic)

    def add_handle(self, conn: Connection, h: Handle) -> Handle:
        """Number and register a handle made elsewhere (MQSUB's subscription handle).

        Raises:
            MQError: MQRC_HANDLE_NOT_AVAILABLE when the connection holds MAXHANDS handles.
        """
        limit = self.state.qmgr_attr("MAXHANDS")
        if len(conn.handles) >= limit:
            raise failed(C.MQRC_HANDLE_NOT_AVAILABLE, f"connection holds MAXHANDS({limit}) handles")
        h.hobj = self._next_hobj
        self._next_hobj += 1
        conn.handles[h.hobj] = h
        self.handles[h.hobj] = h
        return h

    def open_queue(self, conn: Connection, q: QueueObject, options: int) -> int:
        """Open ``q`` itself (no name resolution): a subscription's queue for MQSUB.

        Raises:
            MQError: MQRC_HANDLE_NOT_AVAILABLE, MQRC_OBJECT_IN_USE (exclusive input).
        """
        limit = self.state.qmgr_attr("MAXHANDS")
        if len(conn.handles) >= limit:
            raise failed(C.MQRC_HANDLE_NOT_AVAILABLE, f"connection holds MAXHANDS({limit}) handles")
        mode = self._input_mode(q, options) if options & _INPUT else 0
        return self._new_handle(conn, options, q.name, q, None, mode).hobj

    def make_managed_queue(self, model_name: str, durable: bool) -> QueueObject:
        """A managed subscription's queue, from ``model_name``'s attributes: permanent
        dynamic for a durable subscription (journaled), temporary for a non-durable one.
        No handle owns it: it ends with its subscription (``drop_queue``).

        Raises:
            MQError: MQRC_UNKNOWN_OBJECT_NAME when the model is not a model queue.
        """
        model = self.objects.find(model_name)
        if model is None or model.qtype != A.QMODEL:
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"model queue {model_name!r} for managed queues is not defined")
        name = self.state.dynamic_name(MANAGED_PREFIX + ("DURABLE." if durable else "NDURABLE.") + "*")
        deftype = C.MQQDT_PERMANENT_DYNAMIC if durable else C.MQQDT_TEMPORARY_DYNAMIC
        attrs = {k: v for k, v in model.attrs.items() if k != "DEFTYPE"}
        obj = self.objects.define(A.QLOCAL, name, {}, like=None, deftype=deftype)
        obj.attrs.update(attrs)
        self.objects.epoch += 1
        if durable:
            self.state.staging.persist_object(obj)
        return obj

    def drop_queue(self, q: QueueObject, *, when_closed: bool = False) -> None:
        """Delete a dynamic queue (a managed queue whose subscription ended): now, or with
        ``when_closed`` once no handle has it open."""
        if self.objects.find(q.name) is not q:
            return
        if when_closed and q.handles:
            self.orphans.add(q.name)
        else:
            self.orphans.discard(q.name)
            self._drop_queue(q)

    def _input_mode(self, q: QueueObject, options: int) -> int:
        mode = options & (C.MQOO_INPUT_SHARED | C.MQOO_INPUT_EXCLUSIVE) or int(q["DEFSOPT"])
        if q["SHARE"] == C.MQQA_NOT_SHAREABLE:
            mode = C.MQOO_INPUT_EXCLUSIVE  # IBM: shared requests on a NOSHARE queue are exclusive
        if q.input_count and (mode == C.MQOO_INPUT_EXCLUSIVE or q.exclusive):
            raise failed(C.MQRC_OBJECT_IN_USE, f"{q.name} is open for {'exclusive ' if q.exclusive else ''}input by another handle")
        return mode

    def _new_handle(self, conn: Connection, options: int, name: str, q: QueueObject | None,
                    alias: QueueObject | None, input_mode: int, selector: Selector | None = None) -> OpenResult:
        hobj = self._next_hobj
        self._next_hobj += 1
        h = Handle(hobj, conn.hconn, options, name, q, alias, input_mode)
        if q is not None:
            plan = conn.closed_plans.get((name, options))
            if plan is not None and plan.limits.queue is q:  # else another queue's (ObjectQMgrName)
                h.put_plan = plan
        if selector is not None and q is not None:
            h.selection = SelectionView(selector, q.messages)
            q.messages.watchers.append(h.selection)
        conn.handles[hobj] = h
        self.handles[hobj] = h
        if q is not None:
            q.handles.add(hobj)
            if input_mode:
                q.input_count += 1
                q.exclusive = input_mode == C.MQOO_INPUT_EXCLUSIVE
                if q.input_count == 1:
                    self.opened_for_input(q)
            if options & C.MQOO_OUTPUT:
                q.output_count += 1
        resolved = q.name if q is not None else ""
        return OpenResult(hobj, q.name if q is not None and alias is None else name, resolved, self.name)

    def close(self, hconn: int, hobj: int, options: int = C.MQCO_NONE) -> None:
        """MQCLOSE; MQCO_DELETE / DELETE_PURGE delete a permanent dynamic queue.

        Raises:
            MQError: 2046 bad options, 2045 delete of a predefined queue, 2055 not empty, 2042 in use.
        """
        conn = self.state.conn(hconn)
        h = conn.handles.get(hobj)
        if h is None:
            raise failed(C.MQRC_HOBJ_ERROR, f"object handle {hobj} is not open on this connection")
        if options & ~(C.MQCO_DELETE | C.MQCO_DELETE_PURGE | C.MQCO_KEEP_SUB | C.MQCO_REMOVE_SUB | C.MQCO_QUIESCE) \
                or (options & C.MQCO_DELETE and options & C.MQCO_DELETE_PURGE):
            raise failed(C.MQRC_OPTIONS_ERROR, f"MQCLOSE options 0x{options:08X} are not valid")
        if h.subscription is not None:
            self.close_sub(conn, h, options)
            return
        if h.members is not None:  # a distribution list: each destination's handle, then its own
            if options & ~C.MQCO_QUIESCE:
                raise failed(C.MQRC_OPTION_NOT_VALID_FOR_TYPE, "a distribution list closes with MQCO_NONE only")
            for member in h.members:
                if member is not None and member.hobj in conn.handles:
                    self.close(hconn, member.hobj)
            self._release(conn, h)
            return
        q = h.queue
        delete = False
        if options & (C.MQCO_DELETE | C.MQCO_DELETE_PURGE) and not h.deleted:
            if (q is None or h.alias is not None or q.deftype == C.MQQDT_PREDEFINED
                    or q.name.startswith(MANAGED_PREFIX)):
                raise failed(C.MQRC_OPTION_NOT_VALID_FOR_TYPE, f"{h.name} is not a dynamic queue; MQCO_DELETE refused")
            if q.messages.uncommitted or (len(q.messages) and not options & C.MQCO_DELETE_PURGE):
                raise failed(C.MQRC_Q_NOT_EMPTY, f"{q.name} holds {q.messages.depth} messages")
            if len(q.handles) > 1:
                raise failed(C.MQRC_OBJECT_IN_USE, f"{q.name} is open by {len(q.handles) - 1} other handles")
            if q.owner_hobj != hobj and not self.state.authority.is_admin(conn.user):
                # IBM: only the handle whose MQOPEN made the queue deletes it without +dlt.
                self.state.authority.check(conn.user, C.MQOT_Q, q.name, (F.MQAUTH_DELETE,), "delete")
            delete = True
        if q is not None and not h.deleted and q.temporary and q.owner_hobj == hobj:
            delete = True  # a temporary dynamic queue ends when the handle that created it closes
        self._release(conn, h)
        if q is not None and q.name in self.orphans and not q.handles:
            delete = True
            self.orphans.discard(q.name)
        if delete and q is not None and self.objects.find(q.name) is q:
            self._drop_queue(q)

    def release(self, conn: Connection, h: Handle) -> None:
        """Forget a handle (its waits end; what it held on its queue is given back)."""
        self._release(conn, h)

    def _release(self, conn: Connection, h: Handle) -> None:
        self.waits.end_handle_waits(h.hobj)
        del conn.handles[h.hobj]
        self.handles.pop(h.hobj, None)
        q = h.queue
        if q is None or h.deleted:
            return
        plan = h.put_plan
        if plan is not None:
            kept = conn.closed_plans
            if len(kept) >= PLANS_KEPT and (h.name, h.options) not in kept:
                kept.clear()
            kept[h.name, h.options] = plan
        if h.locked is not None:
            h.locked.locked_by = 0
            h.locked = None
            self.waits.wake(q)
        if h.selection is not None:
            q.messages.watchers.remove(h.selection)
        q.handles.discard(h.hobj)
        if h.input_mode:
            q.input_count -= 1
            if not q.input_count:
                q.exclusive = False
        if h.options & C.MQOO_OUTPUT:
            q.output_count -= 1

    def _drop_queue(self, q: QueueObject) -> None:
        """Delete a dynamic queue and its messages; other handles on it see MQRC_Q_DELETED."""
        for hobj in list(q.handles):
            other = self.handles.get(hobj)
            if other is not None:
                other.deleted = True
        q.handles.clear()
        for conn in self.connections.values():
            if conn.uow is not None:
                conn.uow.puts = [(uq, m) for uq, m in conn.uow.puts if uq is not q]
                conn.uow.gets = [(uq, m) for uq, m in conn.uow.gets if uq is not q]
                conn.uow.ahead = {k: g for k, g in conn.uow.ahead.items() if g[0] is not q}
        q.messages.uncommitted = 0
        self.objects.queues.pop(q.name, None)
        if not q.temporary:
            self.state.staging.unpersist_object(q)
