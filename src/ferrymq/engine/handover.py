"""Put to a waiting getter: a message handed over without passing through the queue's index.

IBM MQ gives a non-persistent message put outside syncpoint straight to an MQGET that is
waiting for it. Here the same shortcut saves the sorted insert, the search, the identifier
index and the removal of every request and reply of a request/reply exchange. It is taken
only where nothing could tell it from the ordinary path (insert, then ``wake``, which offers
the message to the waits in the order they began, then the COA):

- the queue holds no visible message, so nothing there comes before the new one for any
  getter, and no handle watches the queue (a selection view would see it pass);
- the message is non-persistent, has no expiry, no properties and no MQRFH2 kept for
  PROPCTL(V6COMPAT), so no journal record, expiry scan or property re-forming is involved;
- every wait before the one that takes it is a plain destructive get that simply does not
  match it (no browse, cursor, lock or skip-backout mark, no selection string, no token, group,
  sequence or offset to match, GET allowed), so ``wake`` would have done nothing with them;
- the taker's buffer holds the whole message.

Anything else returns False and the caller places the message the ordinary way. The taker
gets exactly what ``attempt`` would give: the same ``take`` (unit of work, COD, saved
context), the same result, the same Delivery; COA follows, as after ``wake``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferrymq.engine.api import Delivery, GetResult
from ferrymq.engine.message import Message, packed_like
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.putplan import PutPlan
from ferrymq.engine.session import Handle
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.wire.mqmd import NONE_ID

if TYPE_CHECKING:
    from ferrymq.engine.messaging import Messaging

# Get options under which a wait's attempt may do more than take the first match.
_NOT_PLAIN = (C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT | C.MQGMO_BROWSE_MSG_UNDER_CURSOR | C.MQGMO_MSG_UNDER_CURSOR
              | C.MQGMO_LOCK | C.MQGMO_UNLOCK | C.MQGMO_MARK_SKIP_BACKOUT)
# Match options that compare what only the full descriptor or the queue's own index knows.
_RARE_MATCH = C.MQMO_MATCH_GROUP_ID | C.MQMO_MATCH_MSG_SEQ_NUMBER | C.MQMO_MATCH_OFFSET | C.MQMO_MATCH_MSG_TOKEN
_MATCH_MSG_ID, _MATCH_CORREL_ID = C.MQMO_MATCH_MSG_ID, C.MQMO_MATCH_CORREL_ID
_MATCH_IDS = _MATCH_MSG_ID | _MATCH_CORREL_ID
# take puts the message in the getter's unit of work (the message is never persistent here).
_IN_UOW = C.MQGMO_SYNCPOINT
_PERSISTENT, _GET_INHIBITED = C.MQPER_PERSISTENT, C.MQQA_GET_INHIBITED


def hand_over(qm: Messaging, q: QueueObject, msg: Message, via: Handle, now: float, plan: PutPlan | None = None) -> bool:
    """Give ``msg``, just put through ``via`` outside syncpoint to ``q`` at ``now``, to the
    first waiting get that would take it, when that is provably what placing it would do;
    True if it was given (the caller then neither inserts it nor wakes the queue). ``plan``:
    the put plan that made the message's descriptor (its bytes are spliced from the plan's)."""
    messages = q.messages
    if (messages.by_seq or messages.watchers or msg.expires_at is not None or msg.persistence == _PERSISTENT
            or msg.properties or msg.v6):
        return False
    ids = qm.queue_waiters.get(q.name)
    # GET(DISABLED): wake would answer the waits with MQRC_GET_INHIBITED.
    if not ids or q.attrs["GET"] == _GET_INHIBITED:
        return False
    waiters, connections = qm.waiters, qm.connections
    for wid in ids:
        w = waiters.get(wid)
        if w is None:
            return False
        conn = connections.get(w.hconn)
        h = conn.handles.get(w.hobj) if conn is not None else None
        if conn is None or h is None or h.selection is not None:
            return False
        gmo = w.gmo
        opts, mo = gmo.options, gmo.match_options
        if opts & _NOT_PLAIN or (mo & _RARE_MATCH and _matches_rarely(mo, w.md.group_id, gmo.msg_token)):
            return False
        alias = h.alias
        if alias is not None and alias.attrs["GET"] == _GET_INHIBITED:
            return False
        if mo & _MATCH_IDS:
            wmd = w.md
            if ((mo & _MATCH_MSG_ID and wmd.msg_id != NONE_ID and wmd.msg_id != msg.msg_id)
                    or (mo & _MATCH_CORREL_ID and wmd.correl_id != NONE_ID and wmd.correl_id != msg.correl_id)):
                continue  # its search would find nothing: wake goes on to the next wait
        data = msg.data
        buffer_length = w.buffer_length
        if len(data) > buffer_length:
            return False  # truncation: the message stays on the queue, under the getter's cursor
        # What wake and attempt do for the wait that finds it (take: only what applies to a
        # message that was never queued, locked or journaled).
        md = msg.md
        lsn = 0
        if opts & _IN_UOW or h.options & C.MQOO_SAVE_ALL_CONTEXT or md.report & C.MQRO_COD:
            outer, qm._sync_lsn = qm._sync_lsn, 0
            qm.take(conn, h, q, msg, opts, queued=False)
            lsn, qm._sync_lsn = qm._sync_lsn, max(outer, qm._sync_lsn)
        # Its descriptor goes to the getter at once: packed now, from the plan or the putter's last one.
        if plan is not None:
            raw = plan.packed(md)
        else:
            raw, via.last_put_md = packed_like(md, via.last_put_md)
        msg.set_md_bytes(raw)
        q.last_get = now
        found = GetResult(md, data, len(data), msg.token, q.name, C.MQCC_OK, C.MQRC_NONE, msg.seq, msg.queue,
                          PropertySet() if gmo.msg_handle else None, raw)
        qm.end_wait(wid)
        qm.deliveries.append(Delivery(wid, found, None, lsn))
        if md.report & C.MQRO_COA:
            qm.report_arrival(msg)
        return True
    return False


def _matches_rarely(mo: int, group_id: bytes, token: bytes) -> bool:
    """Whether a match option beyond MsgId and CorrelId is in force (search would use it)."""
    return bool((mo & C.MQMO_MATCH_GROUP_ID and group_id != NONE_ID)
                or mo & (C.MQMO_MATCH_MSG_SEQ_NUMBER | C.MQMO_MATCH_OFFSET)
                or (mo & C.MQMO_MATCH_MSG_TOKEN and token != bytes(16)))
