"""MQSUB, MQSUBRQ and the end of a subscription; the administrative verbs on subscriptions.

``subscribe`` makes, resumes or alters a subscription (MQSO_CREATE, RESUME, ALTER and their
combinations), with IBM's reason for every refusal and nothing changed by a refused call.
The subscription's handle (hsub) is an object handle of the connection; MQCLOSE of it
keeps a durable subscription (MQCO_KEEP_SUB, its default) or removes it (MQCO_REMOVE_SUB,
the only way for a non-durable one, which also ends with its connection). A managed
subscription's queue is made from the topic's MDURMDL or MNDURMDL model (engine.opening)
and deleted with the subscription, its messages with it.

``define``, ``alter`` and ``delete`` are DEFINE/ALTER/DELETE SUB: durable subscriptions
of type ADMIN, with MQSC's attribute names; ``describe`` and ``status`` give what DISPLAY
SUB and DISPLAY SBSTATUS show, and ``topic_status`` DISPLAY TPSTATUS's counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ferrymq.engine import pubtopics
from ferrymq.engine.api import SubDescriptor, SubResult
from ferrymq.engine.opening import MANAGED_PREFIX, Opener
from ferrymq.engine.publishing import Publisher
from ferrymq.engine.pubtopics import TopicView
from ferrymq.engine.retained import RetainedStore
from ferrymq.engine.selector import SelectorError, compile_selector
from ferrymq.engine.session import Connection, Handle
from ferrymq.engine.state import EngineState
from ferrymq.engine.subscriptions import (
    SUBTYPE_ADMIN,
    SUBTYPE_API,
    SUBTYPE_NAMES,
    Subscription,
    SubscriptionRegistry,
    stamp,
)
from ferrymq.errors import MQError, failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C

_ACCESS = C.MQSO_CREATE | C.MQSO_RESUME | C.MQSO_ALTER
_KNOWN_SO = (_ACCESS | C.MQSO_DURABLE | C.MQSO_GROUP_SUB | C.MQSO_MANAGED | C.MQSO_SET_IDENTITY_CONTEXT
             | C.MQSO_NO_MULTICAST | C.MQSO_FIXED_USERID | C.MQSO_ANY_USERID | C.MQSO_PUBLICATIONS_ON_REQUEST
             | C.MQSO_NEW_PUBLICATIONS_ONLY | C.MQSO_FAIL_IF_QUIESCING | C.MQSO_ALTERNATE_USER_AUTHORITY
             | C.MQSO_WILDCARD_CHAR | C.MQSO_WILDCARD_TOPIC | C.MQSO_SET_CORREL_ID | C.MQSO_SCOPE_QMGR
             | C.MQSO_NO_READ_AHEAD | C.MQSO_READ_AHEAD)
_READS = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_INPUT_SHARED | C.MQOO_INPUT_EXCLUSIVE | C.MQOO_BROWSE
_MANAGED_OPEN = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_BROWSE | C.MQOO_INQUIRE
MAX_SUB_NAME = 10240  # MQ_SUB_NAME_LENGTH
MAX_USER_DATA = 10240  # MQ_USER_DATA_LENGTH
MAX_SELECTOR = C.MQ_SELECTOR_LENGTH


def check_options(options: int) -> None:
    """MQSD Options on their own (IBM's "Rules for validating MQI options", MQSUB).

    Raises:
        MQError: MQRC_OPTIONS_ERROR.
    """
    if options < 0 or options & ~_KNOWN_SO & 0xFFFFFFFF:
        raise failed(C.MQRC_OPTIONS_ERROR, f"MQSD Options 0x{options & 0xFFFFFFFF:08X} include unknown bits")
    if not options & _ACCESS:
        raise failed(C.MQRC_OPTIONS_ERROR, "MQSUB needs MQSO_CREATE, MQSO_RESUME or MQSO_ALTER")
    if options & C.MQSO_GROUP_SUB and (options & C.MQSO_MANAGED or not options & C.MQSO_SET_CORREL_ID):
        raise failed(C.MQRC_OPTIONS_ERROR, "MQSO_GROUP_SUB needs MQSO_SET_CORREL_ID and excludes MQSO_MANAGED")
    if options & C.MQSO_ANY_USERID and options & C.MQSO_FIXED_USERID:
        raise failed(C.MQRC_OPTIONS_ERROR, "only one of MQSO_ANY_USERID and MQSO_FIXED_USERID")
    if options & C.MQSO_NEW_PUBLICATIONS_ONLY and (options & C.MQSO_PUBLICATIONS_ON_REQUEST
                                                   or not options & C.MQSO_CREATE):
        raise failed(C.MQRC_OPTIONS_ERROR,
                     "MQSO_NEW_PUBLICATIONS_ONLY needs MQSO_CREATE and excludes MQSO_PUBLICATIONS_ON_REQUEST")
    if options & C.MQSO_WILDCARD_CHAR and options & C.MQSO_WILDCARD_TOPIC:
        raise failed(C.MQRC_OPTIONS_ERROR, "only one of MQSO_WILDCARD_CHAR and MQSO_WILDCARD_TOPIC")
    if options & C.MQSO_READ_AHEAD and options & C.MQSO_NO_READ_AHEAD:
        raise failed(C.MQRC_OPTIONS_ERROR, "MQSO_READ_AHEAD and MQSO_NO_READ_AHEAD together")


class DestinationNotAuthorized(MQError):
    """2035 for a subscription's destination queue (its Not Authorized event is type 18,
    not 17): ``queue`` and the ``open_options`` the check stood for."""

    def __init__(self, exc: MQError, queue: str, open_options: int) -> None:
        super().__init__(exc.comp, exc.reason, exc.detail)
        self.queue, self.open_options = queue, open_options


class Subscriber:
    """Subscriptions of one queue manager's applications and administrators (see the
    module docstring)."""

    def __init__(self, state: EngineState, opener: Opener, publisher: Publisher, registry: SubscriptionRegistry,
                 retained: RetainedStore, topics: TopicView) -> None:
        self.state = state
        self.name, self.clock, self.objects = state.name, state.clock, state.objects
        self.opener, self.publisher, self.registry, self.retained, self.topics = (opener, publisher, registry,
                                                                                   retained, topics)
        opener.close_sub_with(self.close_sub)

    # -- MQSUB -----------------------------------------------------------------------------
    def subscribe(self, hconn: int, sd: SubDescriptor, hobj: int = C.MQHO_NONE) -> SubResult:
        """MQSUB: make, resume or alter the subscription ``sd`` describes. ``hobj``: the
        queue handle publications go to (none with MQSO_MANAGED, or on a resume that
        opens the subscription's own queue).

        Raises:
            MQError: 2046, 2161, 2424, 2440, 2431, 2432, 2428, 2429, 2434, 2509, 2510, 2512,
                2524, 2533, 2085, 2425, 2503, 2436, 2019, 2459/2519/2504 (selectors), 2526,
                2017 ... ; a refused call changes nothing.
        """
        state = self.state
        conn = state.conn(hconn)
        opts = sd.options
        check_options(opts)
        state.check_quiescing(opts, C.MQSO_FAIL_IF_QUIESCING)
        # SubLevel 0 is pymqi's SD default: with no intercepting levels above 1 here, a level-0
        # subscription gets what a level-1 one would (IBM would hold it back only behind a
        # matching level-1 subscription).
        if sd.sub_level not in (0, 1):
            raise failed(C.MQRC_SD_ERROR, f"SubLevel {sd.sub_level}: this queue manager supports SubLevels 0 and 1")
        name = sd.sub_name.rstrip("\0")
        if len(name.encode("utf-8", "surrogatepass")) > MAX_SUB_NAME:
            raise failed(C.MQRC_SUB_NAME_ERROR, f"SubName is longer than {MAX_SUB_NAME} bytes")
        if not name.strip() and (opts & C.MQSO_DURABLE or opts & (C.MQSO_RESUME | C.MQSO_ALTER)):
            raise failed(C.MQRC_SUB_NAME_ERROR, "a durable subscription, and a resume or alter, needs a SubName")
        if len(sd.sub_user_data.encode("utf-8", "surrogatepass")) > MAX_USER_DATA:
            raise failed(C.MQRC_SUB_USER_DATA_ERROR, f"SubUserData is longer than {MAX_USER_DATA} bytes")
        # The handles this call may open (the hsub; a managed or resumed queue's): refused
        # before anything is made, as IBM checks MAXHANDS first.
        limit = state.qmgr_attr("MAXHANDS")
        if len(conn.handles) + (2 if opts & C.MQSO_MANAGED or hobj == C.MQHO_NONE else 1) > limit:
            raise failed(C.MQRC_HANDLE_NOT_AVAILABLE, f"connection holds MAXHANDS({limit}) handles")
        existing = self.registry.find(name) if name else None
        if state.authority.enabled:  # the OAM: +sub on the topic (engine.opening's topic rule)
            topic = existing.topic if existing is not None else self.topics.full_string(sd.object_name,
                                                                                         sd.object_string)
            self.opener.check_topic_authority(conn.user, topic, (F.MQAUTH_SUBSCRIBE,), "subscribe to")
        if existing is None:
            if not opts & C.MQSO_CREATE:
                raise failed(C.MQRC_NO_SUBSCRIPTION, f"there is no subscription named {name!r}")
            return self._create(conn, sd, name, hobj)
        if not opts & (C.MQSO_RESUME | C.MQSO_ALTER):
            raise failed(C.MQRC_SUB_ALREADY_EXISTS, f"subscription {name!r} already exists")
        return self._resume(conn, sd, existing, hobj)

    def _create(self, conn: Connection, sd: SubDescriptor, name: str, hobj: int) -> SubResult:
        opts = sd.options
        topics = self.topics
        topic = topics.full_string(sd.object_name, sd.object_string)
        wildcards = C.MQWS_CHAR if opts & C.MQSO_WILDCARD_CHAR else C.MQWS_TOPIC
        pubtopics.check_pattern(topic, wildcards)
        if topics.effective(topic, "SUB") == C.MQTA_SUB_INHIBITED:
            raise failed(C.MQRC_SUB_INHIBITED, f"topic {topic!r} has SUB(DISABLED)")
        durable = bool(opts & C.MQSO_DURABLE)
        if durable and topics.effective(topic, "DURSUB") != C.MQSUB_DURABLE_ALLOWED:
            raise failed(C.MQRC_DURABILITY_NOT_ALLOWED, f"topic {topic!r} has DURSUB(NO)")
        selector = _compile(sd.selection_string)
        given = None
        if not opts & C.MQSO_MANAGED:
            given = self._given_queue(conn, hobj)
        now = self.clock.now()
        made = stamp(now)
        state = self.state
        sub = Subscription(
            name, state.new_id(), topic, sd.object_name.rstrip(), "", bool(opts & C.MQSO_MANAGED), durable, wildcards,
            self.name, sd.selection_string if selector is not None else "", sd.sub_user_data,
            sd.sub_correl_id if opts & C.MQSO_SET_CORREL_ID else state.new_id(), sd.pub_priority,
            sd.pub_accounting_token if opts & C.MQSO_SET_IDENTITY_CONTEXT else bytes(32),
            sd.pub_appl_identity_data if opts & C.MQSO_SET_IDENTITY_CONTEXT else "",
            bool(opts & C.MQSO_SET_IDENTITY_CONTEXT), sd.sub_expiry, bool(opts & C.MQSO_PUBLICATIONS_ON_REQUEST),
            bool(opts & C.MQSO_ANY_USERID), conn.user, SUBTYPE_API, 1, C.MQTSCOPE_ALL, made, made, now)
        sub.set_expiry(sd.sub_expiry, now)
        sub.selector = selector
        _check_priority(sub.pub_priority)
        # Everything that can refuse the call has been checked: from here on it changes things.
        out_hobj = hobj
        if given is not None:
            sub.destination = given.name
        else:
            model = str(topics.effective(topic, "MDURMDL" if durable else "MNDURMDL"))
            q = self.opener.make_managed_queue(model, durable)
            sub.destination = q.name
            try:
                out_hobj = self.opener.open_queue(conn, q, _MANAGED_OPEN)
            except MQError:
                self.opener.drop_queue(q)
                raise
        hsub = 0
        try:
            hsub = self._hsub(conn, sub, opts, out_hobj if given is None else 0)
            if not opts & (C.MQSO_NEW_PUBLICATIONS_ONLY | C.MQSO_PUBLICATIONS_ON_REQUEST):
                self._send_retained(sub, strict=True)
        except MQError:
            self._undo_create(conn, sub, hsub, out_hobj if given is None else 0)
            raise
        self.registry.add(sub)
        if durable:
            state.staging.need_sync()
        return SubResult(hsub, out_hobj, sub.destination, topic, sub.correl_id)

    def _undo_create(self, conn: Connection, sub: Subscription, hsub: int, managed_hobj: int) -> None:
        h = conn.handles.get(hsub) if hsub else None
        if h is not None:
            self.opener.release(conn, h)
        if managed_hobj:
            self.opener.close(conn.hconn, managed_hobj)
            q = self.objects.find(sub.destination)
            if q is not None:
                self.opener.drop_queue(q)

    def _given_queue(self, conn: Connection, hobj: int) -> Any:
        """The queue an application's handle names for publications.

        Raises:
            MQError: MQRC_HOBJ_ERROR (none, not a queue, not open to get or browse).
        """
        h = conn.handles.get(hobj) if hobj != C.MQHO_NONE else None
        if h is None:
            raise failed(C.MQRC_HOBJ_ERROR, "MQSUB without MQSO_MANAGED needs the handle of an open queue")
        if h.queue is None or h.deleted or not h.options & _READS:
            raise failed(C.MQRC_HOBJ_ERROR,
                         f"handle {hobj} is not a queue opened with MQOO_INPUT_* or MQOO_BROWSE")
        self._destination_authority(conn, h.queue.name, (F.MQAUTH_OUTPUT,), C.MQOO_OUTPUT)
        return h.queue

    def _destination_authority(self, conn: Connection, queue: str, needed: tuple[int, ...], open_options: int) -> None:
        """IBM's rule for a subscription's own (non-managed) queue: +put to have publications
        put there, and +put, +get, +browse for a resume that hands the queue back.

        Raises:
            DestinationNotAuthorized: 2035.
        """
        oam = self.state.authority
        if not oam.enabled or oam.is_admin(conn.user):
            return
        try:
            oam.check(conn.user, C.MQOT_Q, queue, needed, "receive publications on")
        except MQError as exc:
            raise DestinationNotAuthorized(exc, queue, open_options) from None

    def _hsub(self, conn: Connection, sub: Subscription, options: int, managed_hobj: int) -> int:
        # No MQOO options: an hsub is not open for MQINQ, MQSET, MQGET or MQPUT (MQSO bits
        # would read as MQOO ones).
        h = self.opener.add_handle(conn, Handle(0, conn.hconn, 0, sub.key, None, subscription=sub))
        sub.hsub, sub.hconn = h.hobj, conn.hconn
        sub.resumed = stamp(self.clock.now())
        return h.hobj

    def _resume(self, conn: Connection, sd: SubDescriptor, sub: Subscription, hobj: int) -> SubResult:
        opts = sd.options
        if sub.hsub:
            raise failed(C.MQRC_SUBSCRIPTION_IN_USE, f"subscription {sub.key} is in use by another handle")
        if not sub.any_user and sub.user and sub.user != conn.user and sub.sub_type == SUBTYPE_API:
            raise failed(C.MQRC_IDENTITY_MISMATCH, f"subscription {sub.key} belongs to user {sub.user!r}")
        changes: dict[str, Any] = {}
        given = None
        if opts & C.MQSO_ALTER:
            changes = self._alterations(conn, sd, sub)
            if not opts & C.MQSO_MANAGED and hobj != C.MQHO_NONE:
                given = self._given_queue(conn, hobj)
        out_hobj = hobj
        opened = 0
        if (given is None and hobj == C.MQHO_NONE) or opts & C.MQSO_MANAGED:
            q = self.objects.find(sub.destination)
            if q is None or not q.is_local:
                raise failed(C.MQRC_INVALID_DESTINATION, f"the subscription's queue {sub.destination} cannot be opened")
            if not sub.managed:
                self._destination_authority(conn, q.name, (F.MQAUTH_OUTPUT, F.MQAUTH_INPUT, F.MQAUTH_BROWSE),
                                            C.MQOO_INPUT_AS_Q_DEF | C.MQOO_BROWSE | C.MQOO_INQUIRE)
            out_hobj = opened = self.opener.open_queue(conn, q, C.MQOO_INPUT_AS_Q_DEF | C.MQOO_BROWSE | C.MQOO_INQUIRE)
        elif given is None:
            self._given_queue(conn, hobj)  # a handle given on a resume must still be one
        try:
            hsub = self._hsub(conn, sub, opts, opened)
        except MQError:
            if opened:
                self.opener.close(conn.hconn, opened)
            raise
        if changes or given is not None:
            for attr, value in changes.items():
                setattr(sub, attr, value)
            if "expiry" in changes:
                sub.set_expiry(sub.expiry, self.clock.now())
            if given is not None:
                sub.destination = given.name
            sub.altered = stamp(self.clock.now())
            self.registry.changed(sub)
            if sub.durable:
                self.state.staging.need_sync()
        return SubResult(hsub, out_hobj, sub.destination, sub.topic, sub.correl_id,
                         descriptor=written_back(sub, opts))

    def _alterations(self, conn: Connection, sd: SubDescriptor, sub: Subscription) -> dict[str, Any]:
        """What MQSO_ALTER changes; refuses what IBM does not let it change."""
        opts = sd.options
        if bool(opts & C.MQSO_DURABLE) != sub.durable:
            raise failed(C.MQRC_DURABILITY_NOT_ALTERABLE, f"subscription {sub.key}'s durability cannot change")
        if (sd.object_name.strip() or sd.object_string) \
                and self.topics.full_string(sd.object_name, sd.object_string) != sub.topic:
            raise failed(C.MQRC_TOPIC_NOT_ALTERABLE, f"subscription {sub.key}'s topic cannot change")
        wildcards = C.MQWS_CHAR if opts & C.MQSO_WILDCARD_CHAR else C.MQWS_TOPIC
        if wildcards != sub.wildcards:
            raise failed(C.MQRC_TOPIC_NOT_ALTERABLE, f"subscription {sub.key}'s wildcard scheme cannot change")
        if sd.selection_string.strip() != sub.selector_text.strip():
            raise failed(C.MQRC_SELECTOR_NOT_ALTERABLE, f"subscription {sub.key}'s selection string cannot change")
        if bool(opts & C.MQSO_MANAGED) != sub.managed:
            raise failed(C.MQRC_DEST_CLASS_NOT_ALTERABLE, f"subscription {sub.key}'s destination class cannot change")
        _check_priority(sd.pub_priority)
        changes: dict[str, Any] = {"user_data": sd.sub_user_data, "pub_priority": sd.pub_priority,
                                   "expiry": sd.sub_expiry, "on_request": bool(opts & C.MQSO_PUBLICATIONS_ON_REQUEST),
                                   "any_user": bool(opts & C.MQSO_ANY_USERID)}
        if opts & C.MQSO_SET_CORREL_ID:
            changes["correl_id"] = sd.sub_correl_id
        if opts & C.MQSO_SET_IDENTITY_CONTEXT:
            changes.update(pub_accounting_token=sd.pub_accounting_token,
                           pub_appl_identity_data=sd.pub_appl_identity_data, set_identity=True)
        return {k: v for k, v in changes.items() if getattr(sub, k) != v}

    # -- MQCLOSE of a subscription handle --------------------------------------------------
    def close_sub(self, conn: Connection, h: Handle, options: int) -> None:
        """MQCLOSE of an hsub: MQCO_KEEP_SUB (durable only; their default) or MQCO_REMOVE_SUB
        (non-durable ones' only way).

        Raises:
            MQError: MQRC_OPTIONS_ERROR (both), MQRC_OPTION_NOT_VALID_FOR_TYPE (KEEP_SUB on a
                non-durable subscription; MQCO_DELETE on a subscription).
        """
        sub = h.subscription
        assert sub is not None
        keep, remove = options & C.MQCO_KEEP_SUB, options & C.MQCO_REMOVE_SUB
        if keep and remove:
            raise failed(C.MQRC_OPTIONS_ERROR, "MQCO_KEEP_SUB and MQCO_REMOVE_SUB together")
        if options & (C.MQCO_DELETE | C.MQCO_DELETE_PURGE):
            raise failed(C.MQRC_OPTION_NOT_VALID_FOR_TYPE, "MQCO_DELETE closes a dynamic queue, not a subscription")
        if keep and not sub.durable:
            raise failed(C.MQRC_OPTION_NOT_VALID_FOR_TYPE, f"subscription {sub.key} is not durable: it cannot be kept")
        oam = self.state.authority
        if remove and oam.enabled and not oam.is_admin(conn.user):
            # IBM: MQCO_REMOVE_SUB by its creator, with +sub on its topic still.
            if sub.user and sub.user != conn.user:
                raise failed(C.MQRC_NOT_AUTHORIZED, f"user {conn.user!r} may not remove subscription {sub.key} "
                             f"of user {sub.user!r}")
            self.opener.check_topic_authority(conn.user, sub.topic, (F.MQAUTH_SUBSCRIBE,), "remove a subscription on")
        self.opener.release(conn, h)
        if sub.hsub == h.hobj:
            sub.hsub = sub.hconn = 0
        if remove or not sub.durable or sub.expired(self.clock.now()):
            self.remove(sub, drain=True)

    def expire(self, now: float) -> int:
        """Remove the subscriptions whose SubExpiry has passed and that no handle holds
        (one that is held ends when its handle closes); how many."""
        ended = [s for s in self.registry if s.expired(now) and not s.hsub]
        for sub in ended:
            self.remove(sub)
        return len(ended)

    def remove(self, sub: Subscription, *, drain: bool = False) -> None:
        """End a subscription: its record, and its managed queue with what waits there —
        at once, or with ``drain`` (MQCLOSE of its hsub) when the last handle open on the
        queue closes, so that what was published before can still be got (IBM)."""
        self.registry.remove(sub)
        if sub.durable:
            self.state.staging.need_sync()
        if sub.managed:
            q = self.objects.find(sub.destination)
            if q is not None:
                self.opener.drop_queue(q, when_closed=drain)
        if sub.hsub:  # removed by an administrator while open: the handle no longer names it
            h = self.state.handles.get(sub.hsub)
            if h is not None:
                h.deleted = True

    # -- MQSUBRQ ---------------------------------------------------------------------------
    def sub_request(self, hconn: int, hsub: int, action: int = C.MQSR_ACTION_PUBLICATION,
                    options: int = C.MQSRO_NONE) -> int:
        """MQSUBRQ: send the subscription the retained publications its topic matches;
        the number sent.

        Raises:
            MQError: MQRC_HOBJ_ERROR (not a subscription handle), MQRC_ACTION_ERROR,
                MQRC_OPTIONS_ERROR, MQRC_Q_MGR_QUIESCING, MQRC_NO_RETAINED_MSG.
        """
        state = self.state
        conn = state.conn(hconn)
        h = conn.handles.get(hsub)
        if h is None or h.subscription is None or h.deleted:
            raise failed(C.MQRC_HOBJ_ERROR, f"handle {hsub} is not a subscription of this connection")
        if action != C.MQSR_ACTION_PUBLICATION:
            raise failed(C.MQRC_ACTION_ERROR, f"MQSUBRQ action {action} is not MQSR_ACTION_PUBLICATION")
        if options & ~C.MQSRO_FAIL_IF_QUIESCING:
            raise failed(C.MQRC_OPTIONS_ERROR, f"MQSRO options 0x{options & 0xFFFFFFFF:08X} are not valid")
        state.check_quiescing(options, C.MQSRO_FAIL_IF_QUIESCING)
        sent = self._send_retained(h.subscription, strict=False)
        if not sent:
            raise failed(C.MQRC_NO_RETAINED_MSG, f"no retained publication matches {h.subscription.topic!r}")
        return sent

    def _send_retained(self, sub: Subscription, *, strict: bool) -> int:
        pubs = self.retained.matching(lambda t: self.topics.receives(sub.topic, t, sub.wildcards))
        if sub.selector is not None:
            pubs = [p for p in pubs if self.publisher.selects(sub, p)]
        return self.publisher.send_retained(sub, pubs, strict=strict) if pubs else 0

    def drop_orphaned_queues(self) -> int:
        """After a restart: delete the managed queues no subscription names (their
        subscription was removed while a handle held them, then the process ended)."""
        wanted = {s.destination for s in self.registry if s.managed}
        orphans = [q for name, q in list(self.objects.queues.items())
                   if name.startswith(MANAGED_PREFIX) and name not in wanted]
        for q in orphans:
            self.opener.drop_queue(q)
        return len(orphans)

    def recovered(self, sub: Subscription) -> None:
        """A durable subscription read back at restart: its selector compiled again, and
        identifiers made from now on later than its SUBID and the CorrelId made with it."""
        self.state.recovered_id(int.from_bytes(sub.sub_id[16:], "big") + 1)
        if sub.selector_text:
            try:
                sub.selector = _compile(sub.selector_text)
            except MQError:
                sub.selector = None
        self.registry.load(sub)

    # -- administration (DEFINE/ALTER/DELETE/DISPLAY SUB) ----------------------------------
    def define(self, name: str, attrs: Mapping[str, object], *, replace: bool = False) -> Subscription:
        """DEFINE SUB(name): a durable administrative subscription. ``attrs``: MQSC names
        (TOPICSTR, TOPICOBJ, DEST, DESTQMGR, DESTCLAS, DESTCORL, PUBPRTY, PUBACCT,
        PUBAPPID, EXPIRY, SELECTOR, USERDATA, WSCHEMA, REQONLY, VARUSER, SUBSCOPE,
        SUBLEVEL, SUBUSER) with MQ constants or MQSC words as values.

        Raises:
            MQError: MQRC_SUB_ALREADY_EXISTS (without REPLACE), MQRC_SUB_NAME_ERROR,
                MQRC_UNKNOWN_OBJECT_NAME (TOPICOBJ, DEST), MQRC_TOPIC_STRING_ERROR,
                MQRC_SUB_INHIBITED, MQRC_DURABILITY_NOT_ALLOWED, selector reasons,
                MQRC_UNKNOWN_OBJECT_NAME for an unknown attribute.
        """
        name = name.strip()
        if not name or len(name) > MAX_SUB_NAME:
            raise failed(C.MQRC_SUB_NAME_ERROR, "DEFINE SUB needs a subscription name")
        old = self.registry.find(name)
        if old is not None and not replace:
            raise failed(C.MQRC_SUB_ALREADY_EXISTS, f"subscription {name!r} already exists")
        if old is not None:
            return self.alter(name, attrs)
        values = _admin_values(attrs)
        topics = self.topics
        topic = topics.full_string(str(values.get("TOPICOBJ", "")), str(values.get("TOPICSTR", "")))
        if topics.effective(topic, "SUB") == C.MQTA_SUB_INHIBITED:
            raise failed(C.MQRC_SUB_INHIBITED, f"topic {topic!r} has SUB(DISABLED)")
        if topics.effective(topic, "DURSUB") != C.MQSUB_DURABLE_ALLOWED:
            raise failed(C.MQRC_DURABILITY_NOT_ALLOWED, f"topic {topic!r} has DURSUB(NO)")
        selector_text = str(values.get("SELECTOR", ""))
        selector = _compile(selector_text)
        managed = int(values.get("DESTCLAS", C.MQDC_PROVIDED)) == C.MQDC_MANAGED
        dest = str(values.get("DEST", "")).strip()
        if not managed:
            q = self.objects.find(dest) if dest else None
            if q is None or not q.is_local:
                raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"DEST({dest}) is not a local queue")
        now = self.clock.now()
        made = stamp(now)
        state = self.state
        correl = values.get("DESTCORL")
        sub = Subscription(
            name, state.new_id(), topic, str(values.get("TOPICOBJ", "")), dest, managed, True,
            int(values.get("WSCHEMA", C.MQWS_TOPIC)), str(values.get("DESTQMGR", "")) or self.name,
            selector_text if selector is not None else "", str(values.get("USERDATA", "")),
            correl if isinstance(correl, bytes) else state.new_id(),
            int(values.get("PUBPRTY", C.MQPRI_PRIORITY_AS_PUBLISHED)),
            _acct(values.get("PUBACCT")), str(values.get("PUBAPPID", "")), False,
            int(values.get("EXPIRY", C.MQEI_UNLIMITED)), bool(values.get("REQONLY", False)),
            int(values.get("VARUSER", C.MQVU_ANY_USER)) == C.MQVU_ANY_USER, str(values.get("SUBUSER", "")),
            SUBTYPE_ADMIN, int(values.get("SUBLEVEL", 1)), int(values.get("SUBSCOPE", C.MQTSCOPE_ALL)), made, made,
            now)
        sub.set_expiry(sub.expiry, now)
        sub.selector = selector
        _check_priority(sub.pub_priority)
        if sub.sub_level != 1:
            raise failed(C.MQRC_SD_ERROR, "SUBLEVEL: this queue manager supports 1 only")
        if managed:
            q = self.opener.make_managed_queue(str(topics.effective(topic, "MDURMDL")), True)
            sub.destination = q.name
        self.registry.add(sub)
        state.staging.need_sync()
        if not sub.on_request:
            self._send_retained(sub, strict=False)
        return sub

    def alter(self, name: str, attrs: Mapping[str, object]) -> Subscription:
        """ALTER SUB(name): what IBM lets an administrator change.

        Raises:
            MQError: MQRC_NO_SUBSCRIPTION, MQRC_TOPIC_NOT_ALTERABLE, MQRC_SELECTOR_NOT_ALTERABLE,
                MQRC_DEST_CLASS_NOT_ALTERABLE, MQRC_SUBLEVEL_NOT_ALTERABLE, MQRC_UNKNOWN_OBJECT_NAME.
        """
        sub = self.registry.find(name.strip())
        if sub is None:
            raise failed(C.MQRC_NO_SUBSCRIPTION, f"there is no subscription named {name.strip()!r}")
        values = _admin_values(attrs)
        fixed = {"TOPICSTR": (C.MQRC_TOPIC_NOT_ALTERABLE, sub.topic), "TOPICOBJ": (C.MQRC_TOPIC_NOT_ALTERABLE,
                                                                                 sub.topic_object),
                 "SELECTOR": (C.MQRC_SELECTOR_NOT_ALTERABLE, sub.selector_text),
                 "DESTCLAS": (C.MQRC_DEST_CLASS_NOT_ALTERABLE, C.MQDC_MANAGED if sub.managed else C.MQDC_PROVIDED),
                 "SUBLEVEL": (C.MQRC_SUBLEVEL_NOT_ALTERABLE, sub.sub_level),
                 "WSCHEMA": (C.MQRC_TOPIC_NOT_ALTERABLE, sub.wildcards)}
        for key, (reason, current) in fixed.items():
            if key in values and values[key] != current:
                raise failed(reason, f"{key} of subscription {sub.key} cannot change")
        changes: dict[str, Any] = {}
        if "DEST" in values and str(values["DEST"]).strip() != sub.destination:
            dest = str(values["DEST"]).strip()
            q = self.objects.find(dest)
            if sub.managed or q is None or not q.is_local:
                raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"DEST({dest}) is not a local queue for this subscription")
            changes["destination"] = dest
        simple = {"USERDATA": "user_data", "PUBAPPID": "pub_appl_identity_data", "SUBUSER": "user",
                  "DESTQMGR": "dest_qmgr"}
        for key, attr in simple.items():
            if key in values:
                changes[attr] = str(values[key])
        if "PUBPRTY" in values:
            _check_priority(int(values["PUBPRTY"]))
            changes["pub_priority"] = int(values["PUBPRTY"])
        if "PUBACCT" in values:
            changes["pub_accounting_token"] = _acct(values["PUBACCT"])
        if "DESTCORL" in values and isinstance(values["DESTCORL"], bytes):
            changes["correl_id"] = values["DESTCORL"]
        if "REQONLY" in values:
            changes["on_request"] = bool(values["REQONLY"])
        if "VARUSER" in values:
            changes["any_user"] = int(values["VARUSER"]) == C.MQVU_ANY_USER
        for attr, value in changes.items():
            setattr(sub, attr, value)
        if "EXPIRY" in values:
            sub.set_expiry(int(values["EXPIRY"]), self.clock.now())
        sub.altered = stamp(self.clock.now())
        self.registry.changed(sub)
        self.state.staging.need_sync()
        return sub

    def delete(self, name: str = "", sub_id: bytes = b"") -> None:
        """DELETE SUB(name) / SUBID(id): a durable subscription ends, its managed queue's
        messages with it (an open handle to it no longer works).

        Raises:
            MQError: MQRC_NO_SUBSCRIPTION (none by that name or identifier, both given and
                naming different ones, or a non-durable one: DELETE SUB sees durable ones only).
        """
        sub = self.registry.find(name.strip()) if name.strip() else None
        if sub_id:
            by_id = self.registry.find_id(sub_id)
            sub = by_id if sub is None and not name.strip() else sub if sub is by_id else None
        if sub is None or not sub.durable:
            raise failed(C.MQRC_NO_SUBSCRIPTION, f"there is no durable subscription {name.strip() or sub_id.hex()!r}")
        self.remove(sub)

    def describe(self, sub: Subscription) -> dict[str, int | str]:
        """DISPLAY SUB's attributes of ``sub``, MQSC names to values."""
        return {
            "SUB": sub.key, "SUBID": sub.sub_id.hex().upper(), "TOPICSTR": sub.topic, "TOPICOBJ": sub.topic_object,
            "DEST": sub.destination, "DESTQMGR": sub.dest_qmgr,
            "DESTCLAS": C.MQDC_MANAGED if sub.managed else C.MQDC_PROVIDED,
            "DURABLE": C.MQSUB_DURABLE_YES if sub.durable else C.MQSUB_DURABLE_NO, "SELECTOR": sub.selector_text,
            "USERDATA": sub.user_data, "DESTCORL": sub.correl_id.hex().upper(), "PUBPRTY": sub.pub_priority,
            "PUBACCT": sub.pub_accounting_token.hex().upper(), "PUBAPPID": sub.pub_appl_identity_data,
            "EXPIRY": sub.expiry, "WSCHEMA": sub.wildcards,
            "REQONLY": C.MQRU_PUBLISH_ON_REQUEST if sub.on_request else C.MQRU_PUBLISH_ALL,
            "VARUSER": C.MQVU_ANY_USER if sub.any_user else C.MQVU_FIXED_USER, "SUBSCOPE": sub.sub_scope,
            "SUBLEVEL": sub.sub_level, "SUBTYPE": sub.sub_type, "SUBTYPENAME": SUBTYPE_NAMES[sub.sub_type],
            "SUBUSER": sub.user, "CRDATE": sub.created[0], "CRTIME": sub.created[1], "ALTDATE": sub.altered[0],
            "ALTTIME": sub.altered[1],
        }

    def status(self, sub: Subscription) -> dict[str, int | str]:
        """DISPLAY SBSTATUS's attributes of ``sub``."""
        return {
            "SUB": sub.key, "SUBID": sub.sub_id.hex().upper(), "ACTCONN": _conn_id(self.name, sub.hconn),
            "DURABLE": C.MQSUB_DURABLE_YES if sub.durable else C.MQSUB_DURABLE_NO, "SUBTYPE": sub.sub_type,
            "RESMDATE": sub.resumed[0], "RESMTIME": sub.resumed[1], "LMSGDATE": sub.last_msg[0],
            "LMSGTIME": sub.last_msg[1], "NUMMSGS": sub.delivered, "TOPICSTR": sub.topic, "SUBUSER": sub.user,
        }

    def topic_status(self, topic: str) -> dict[str, int | str]:
        """DISPLAY TPSTATUS's counts for ``topic``: SUBCOUNT (subscriptions made to it),
        PUBCOUNT (handles open to publish on it), RETAINED (YES when it holds one)."""
        publishers = sum(1 for h in self.state.handles.values() if h.topic == topic)
        return {"TOPICSTR": topic, "SUBCOUNT": len(self.registry.on_topic(topic)), "PUBCOUNT": publishers,
                "RETAINED": "YES" if self.retained.get(topic) is not None else "NO"}

    def clear_retained(self, topic: str) -> bool:
        """CLEAR TOPICSTR(topic) CLRTYPE(RETAINED): False when it held none."""
        return self.retained.clear(topic)


def _compile(text: str) -> Any:
    if not text.strip():
        return None
    if len(text.encode("utf-8")) > MAX_SELECTOR:
        raise failed(C.MQRC_SELECTION_STRING_ERROR, f"SelectionString is longer than {MAX_SELECTOR} bytes")
    try:
        return compile_selector(text)
    except SelectorError as exc:
        raise failed(exc.reason, f"SelectionString: {exc}") from None


def _check_priority(priority: int) -> None:
    if not (0 <= priority <= 9 or priority in (C.MQPRI_PRIORITY_AS_PUBLISHED, C.MQPRI_PRIORITY_AS_Q_DEF)):
        raise failed(C.MQRC_PRIORITY_ERROR, f"PubPriority {priority} is not 0..9, AS_PUBLISHED or AS_Q_DEF")


def _acct(value: object) -> bytes:
    if isinstance(value, bytes):
        return value[:32].ljust(32, b"\0")
    if isinstance(value, str) and value:
        return bytes.fromhex(value)[:32].ljust(32, b"\0")
    return bytes(32)


def _conn_id(qmgr: str, hconn: int) -> str:
    return "" if not hconn else f"{qmgr[:12]:<12}{hconn:016X}"


_WORDS: dict[str, dict[str, int]] = {
    "DESTCLAS": {"MANAGED": C.MQDC_MANAGED, "PROVIDED": C.MQDC_PROVIDED},
    "WSCHEMA": {"CHAR": C.MQWS_CHAR, "TOPIC": C.MQWS_TOPIC},
    "REQONLY": {"YES": 1, "NO": 0},
    "VARUSER": {"ANY": C.MQVU_ANY_USER, "FIXED": C.MQVU_FIXED_USER},
    "SUBSCOPE": {"ALL": C.MQTSCOPE_ALL, "QMGR": C.MQTSCOPE_QMGR},
    "PUBPRTY": {"ASPUB": C.MQPRI_PRIORITY_AS_PUBLISHED, "ASQDEF": C.MQPRI_PRIORITY_AS_Q_DEF},
    "EXPIRY": {"UNLIMITED": C.MQEI_UNLIMITED},
}
_ADMIN_KEYS = {"TOPICSTR", "TOPICOBJ", "DEST", "DESTQMGR", "DESTCLAS", "DESTCORL", "PUBPRTY", "PUBACCT", "PUBAPPID",
               "EXPIRY", "SELECTOR", "USERDATA", "WSCHEMA", "REQONLY", "VARUSER", "SUBSCOPE", "SUBLEVEL", "SUBUSER",
               "PSPROP", "DESTCORLID"}


def _admin_values(attrs: Mapping[str, object]) -> dict[str, Any]:
    """MQSC attribute words as the registry keeps them (MQ constants, bytes for DESTCORL)."""
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        k = key.upper()
        if k not in _ADMIN_KEYS:
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"{key} is not a subscription attribute")
        if k == "DESTCORLID":
            k = "DESTCORL"
        words = _WORDS.get(k)
        if words is not None and isinstance(value, str) and value.upper() in words:
            value = words[value.upper()]
        elif k == "REQONLY" and isinstance(value, int):
            value = value == C.MQRU_PUBLISH_ON_REQUEST
        elif k == "DESTCORL" and isinstance(value, str):
            value = bytes.fromhex(value)[:24].ljust(24, b"\0") if value.strip() else None
        elif k in ("DESTCLAS", "WSCHEMA", "VARUSER", "SUBSCOPE", "SUBLEVEL", "PUBPRTY", "EXPIRY") \
                and isinstance(value, str):
            try:
                value = int(value)
            except ValueError:
                raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"{key}({value}) is not a value it takes") from None
        if value is not None:
            out[k] = value
    return out


_AS_SUBSCRIBED = (C.MQSO_DURABLE | C.MQSO_MANAGED | C.MQSO_WILDCARD_CHAR | C.MQSO_WILDCARD_TOPIC
                  | C.MQSO_PUBLICATIONS_ON_REQUEST | C.MQSO_ANY_USERID | C.MQSO_FIXED_USERID)


def written_back(sub: Subscription, options: int) -> SubDescriptor:
    """What a resume writes back into the caller's MQSD: the subscription as it is (IBM fills
    the MQSD's fields on return, so that it can be passed to MQSO_ALTER as it is)."""
    as_made = (C.MQSO_DURABLE if sub.durable else 0) | (C.MQSO_MANAGED if sub.managed else 0) \
        | (C.MQSO_WILDCARD_CHAR if sub.wildcards == C.MQWS_CHAR else C.MQSO_WILDCARD_TOPIC) \
        | (C.MQSO_PUBLICATIONS_ON_REQUEST if sub.on_request else 0) \
        | (C.MQSO_ANY_USERID if sub.any_user else C.MQSO_FIXED_USERID)
    return SubDescriptor(options & ~_AS_SUBSCRIBED | as_made, sub.topic_object, "", sub.name, sub.user_data,
                         sub.correl_id, sub.pub_priority, sub.pub_accounting_token, sub.pub_appl_identity_data,
                         sub.selector_text, sub.expiry, sub.sub_level)
