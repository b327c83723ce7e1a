"""Where a message's properties go: taken out of a put's MQRFH2, and handed to a getter in
its message handle, in an MQRFH2 in the data, or not at all.

At put, properties come through the message handle (the frame's property set) or as
property folders of an MQRFH2 at the start of the data; either way they are stored as the
message's properties and the data keeps only what is not properties (an MQRFH2 holding
just the non-property folders, if any). JMS header fields found there fill MQMD fields the
putter left to the queue manager (priority and persistence "as queue default", no
CorrelId, no ReplyToQ, unlimited expiry), as IBM's JMS mapping lays them out. On a
PROPCTL(V6COMPAT) queue the data is kept exactly as put.

At get, the queue's PROPCTL and the MQGMO_PROPERTIES_* option decide (the seed's rules):

| option / PROPCTL | getter with a handle | getter without |
|---|---|---|
| AS_Q_DEF + COMPAT, or PROPERTIES_COMPATIBILITY | handle | MQRFH2 if any property is in mcd, jms, usr or mqext, else none |
| AS_Q_DEF + NONE | handle | none |
| AS_Q_DEF + ALL | handle | MQRFH2 |
| AS_Q_DEF + FORCE, or PROPERTIES_FORCE_MQRFH2 | MQRFH2 (handle empty) | MQRFH2 |
| AS_Q_DEF + V6COMPAT, every queue the message crossed V6COMPAT | handle-set properties to the handle, the MQRFH2 as put | both in the data |
| PROPERTIES_IN_HANDLE | handle | MQRC_HMSG_ERROR |
| NO_PROPERTIES | none (handle empty) | none |
"""

from __future__ import annotations

from ferrymq.errors import MQError, failed
from ferrymq.mq import constants as C
from ferrymq.properties import rules
from ferrymq.properties.handle import value_length
from ferrymq.properties.model import PropertySet
from ferrymq.properties.rfh2map import absorb, carriable, is_compat_name, with_rfh2
from ferrymq.wire.mqmd import MQMD, NONE_ID

PROPERTY_OPTIONS = (C.MQGMO_PROPERTIES_FORCE_MQRFH2 | C.MQGMO_NO_PROPERTIES | C.MQGMO_PROPERTIES_IN_HANDLE
                    | C.MQGMO_PROPERTIES_COMPATIBILITY)


def check_get(options: int, msg_handle: bool) -> None:
    """The property options of an MQGET, before anything is taken.

    Raises:
        MQError: MQRC_OPTIONS_ERROR for more than one MQGMO_PROPERTIES_* option,
            MQRC_HMSG_ERROR for PROPERTIES_IN_HANDLE without a message handle.
    """
    chosen = options & PROPERTY_OPTIONS
    if chosen & (chosen - 1):
        raise failed(C.MQRC_OPTIONS_ERROR, "at most one MQGMO_PROPERTIES_* option may be given")
    if chosen == C.MQGMO_PROPERTIES_IN_HANDLE and not msg_handle:
        raise failed(C.MQRC_HMSG_ERROR, "MQGMO_PROPERTIES_IN_HANDLE needs a message handle (MQGMO MsgHandle)")


def check_length(props: PropertySet, limit: int) -> None:
    """The queue manager's MAXPROPL: the bytes of every property's name and value (as
    MQINQMP's DataLength counts them) must not exceed it (-1: no limit).

    Raises:
        MQError: MQRC_PROPERTIES_TOO_BIG.
    """
    if limit < 0:
        return
    total = 0
    for name, prop in props.typed_items():
        total += len(name.encode("utf-8", "surrogatepass")) + value_length(prop.type, prop.value)
    if total > limit:
        raise failed(C.MQRC_PROPERTIES_TOO_BIG, f"the message's properties take {total} bytes, more than the queue "
                                                f"manager's MAXPROPL({limit})")


def put_control(target: int, alias: int | None) -> int:
    """The PROPCTL a put obeys: V6COMPAT only when every queue the message is placed on
    through this call (the alias opened, the queue it resolves to) is V6COMPAT — the seed's
    rule — else the target's own value."""
    if target == C.MQPROP_V6COMPAT and alias is not None and alias != C.MQPROP_V6COMPAT:
        return C.MQPROP_COMPATIBILITY
    return target


def leave_v6(md: MQMD, data: bytes, props: PropertySet | None) -> tuple[MQMD, bytes, PropertySet | None]:
    """A V6COMPAT message moving onto a queue that is not V6COMPAT: from there on it is an
    ordinary message, its MQRFH2 read as an ordinary put would have read it. An MQRFH2 that
    does not parse stays in the data as it is (the message was accepted; it is not lost)."""
    try:
        return _absorbed(md, data, props)
    except MQError:
        return md, data, props


def _read_kept(md: MQMD, data: bytes, props: PropertySet | None) -> tuple[MQMD, bytes, PropertySet | None, bool]:
    """A message whose MQRFH2 was kept as put, read as an ordinary put would have stored it
    (``leave_v6``), and whether its headers as put carry every one of its properties (then
    they are what a getter taking an MQRFH2 receives, byte for byte)."""
    try:
        split = absorb(data, md.format, md.encoding, md.coded_char_set_id)
    except MQError:
        split = None
    carried = split is not None and bool(split.props) and all(
        split.props.find(name) == prop for name, prop in (props or PropertySet()).typed_items())
    md, data, props = leave_v6(md, data, props)
    return md, data, props, carried


def check_count(props: PropertySet) -> None:
    """At most rules.MAX_MESSAGE_PROPERTIES properties a message.

    Raises:
        MQError: MQRC_PROPERTIES_TOO_BIG.
    """
    if len(props) > rules.MAX_MESSAGE_PROPERTIES:
        raise failed(C.MQRC_PROPERTIES_TOO_BIG, f"a message carries at most {rules.MAX_MESSAGE_PROPERTIES} "
                                                f"properties, not {len(props)}")


def on_put(md: MQMD, data: bytes, props: PropertySet | None, propctl: int,
           keep_as_put: bool = True) -> tuple[MQMD, bytes, PropertySet | None, bool]:
    """The descriptor, data and properties a put stores, and whether the data is kept as put.
    ``keep_as_put=False``: the property folders are always taken out (a publication, whose
    copies gain properties of their own).

    Raises:
        MQError: MQRC_RFH_ERROR / MQRC_RFH_FORMAT_ERROR for an MQRFH2 that does not parse;
            for the handle's properties (``props``) MQRC_PROPERTIES_TOO_BIG (too many, or
            too many with the MQRFH2's) and what rules.check_carried refuses.
    """
    if props:
        check_count(props)
        for name, prop in props.typed_items():
            rules.check_carried(name, prop)
    if propctl == C.MQPROP_V6COMPAT:
        return md, data, props or None, md.format.rstrip() == "MQHRF2"
    if keep_as_put and not props and md.format.rstrip() == "MQHRF2":
        # The MQRFH2 says everything about the properties: the data is kept as put (IBM
        # returns a putter's headers byte for byte to a getter that takes them as MQRFH2;
        # ``on_get`` takes the property folders out for one that does not).
        split = absorb(data, md.format, md.encoding, md.coded_char_set_id)
        assert split is not None
        return _jms_into_md(md, split.props), data, split.props or None, True
    md, data, props = _absorbed(md, data, props)
    return md, data, props, False


def _absorbed(md: MQMD, data: bytes, props: PropertySet | None) -> tuple[MQMD, bytes, PropertySet | None]:
    """The property folders of the data's MQRFH2 taken out into the properties (the
    handle's ``props`` win), the descriptor saying what the data now starts with.

    Raises:
        MQError: as ``on_put``.
    """
    split = absorb(data, md.format, md.encoding, md.coded_char_set_id)
    if split is None:
        return md, data, props or None
    merged = split.props
    if props:
        merged.update_from(props)  # the handle's value wins over the MQRFH2's
        check_count(merged)
    md = md.replace(format=split.format, encoding=split.encoding, coded_char_set_id=split.ccsid)
    return _jms_into_md(md, merged), split.data, merged or None


def _jms_into_md(md: MQMD, props: PropertySet) -> MQMD:
    changes: dict[str, object] = {}
    pri, dlv, cid, rto = props.get("jms.Pri"), props.get("jms.Dlv"), props.get("jms.Cid"), props.get("jms.Rto")
    if md.priority == C.MQPRI_PRIORITY_AS_Q_DEF and _int(pri) is not None and 0 <= _int(pri) <= 9:  # type: ignore[operator]
        changes["priority"] = _int(pri)
    if md.persistence == C.MQPER_PERSISTENCE_AS_Q_DEF and _int(dlv) in (1, 2):
        changes["persistence"] = C.MQPER_PERSISTENT if _int(dlv) == 2 else C.MQPER_NOT_PERSISTENT
    if md.correl_id == NONE_ID and isinstance(cid, str) and cid and not cid.startswith("ID:"):
        raw = cid.encode("utf-8")
        if len(raw) <= 24:
            changes["correl_id"] = raw.ljust(24, b"\0")
    if not md.reply_to_q.strip() and isinstance(rto, str) and rto.startswith("queue://"):
        qmgr, _, queue = rto[len("queue://"):].partition("?")[0].partition("/")
        if queue and len(queue) <= 48 and len(qmgr) <= 48:
            changes["reply_to_q"] = queue
            if qmgr:
                changes["reply_to_q_mgr"] = qmgr
    return md.replace(**changes) if changes else md


def _destination(chosen: int, propctl: int, msg_handle: bool) -> str:
    """Where on_get puts a message's properties: "rfh2", "none", "handle", or "compat"
    (an MQRFH2 when one of them has a compatibility name, else none)."""
    if chosen == C.MQGMO_PROPERTIES_FORCE_MQRFH2 or (chosen == 0 and propctl == C.MQPROP_FORCE_MQRFH2):
        return "rfh2"
    if chosen == C.MQGMO_NO_PROPERTIES:
        return "none"
    if chosen == C.MQGMO_PROPERTIES_IN_HANDLE or msg_handle:
        return "handle"
    if chosen == C.MQGMO_PROPERTIES_COMPATIBILITY or propctl in (C.MQPROP_COMPATIBILITY, C.MQPROP_V6COMPAT):
        return "compat"
    return "rfh2" if propctl == C.MQPROP_ALL else "none"


def in_handle_as_stored(propctl: int, options: int, msg_handle: bool) -> bool:
    """Whether on_get gives a message with properties (not one kept as put under V6COMPAT)
    as it is stored, its properties (a copy) in the getter's handle: what a get may take
    without calling on_get."""
    return msg_handle and _destination(options & PROPERTY_OPTIONS, propctl, msg_handle) == "handle"


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def on_get(md: MQMD, data: bytes, props: PropertySet | None, v6: bool, propctl: int, options: int,
           msg_handle: bool) -> tuple[MQMD, bytes, PropertySet | None, int]:
    """What the getter receives: the descriptor, the data, the handle's properties (None
    when the getter has no handle) and the warning reason the get completes with (0: none).
    ``check_get`` has accepted the options.

    A message stored before puts refused what an MQRFH2 cannot carry may still hold it;
    its MQRFH2 is written as ``rfh2map.carriable`` says, with that warning
    (MQRC_PROP_VALUE_NOT_CONVERTED or MQRC_PROP_NAME_NOT_CONVERTED), and the get takes
    the message as any other: no message stays first on a queue because of what it holds."""
    chosen = options & PROPERTY_OPTIONS
    if v6:
        if chosen == 0 and propctl == C.MQPROP_V6COMPAT:
            if msg_handle:
                return md, data, props.copy() if props else PropertySet(), C.MQRC_NONE
            if props:
                # A header of their own in front: the putter's MQRFH2 stays exactly as put.
                written, warning = carriable(props)
                body, fmt = with_rfh2(written, data, md.format, md.encoding, md.coded_char_set_id, merge=False)
                return md.replace(format=fmt), body, None, warning
            return md, data, None, C.MQRC_NONE
        # Any other rule reads the MQRFH2 as a put to an ordinary queue would have; where the
        # headers as put already carry every property, a getter taking an MQRFH2 gets them so.
        as_put = md, data
        md, data, props, carried = _read_kept(md, data, props)
    else:
        as_put, carried = None, False
    all_props = props or PropertySet()
    dest = _destination(chosen, propctl, msg_handle)
    if dest == "compat":
        dest = "rfh2" if any(is_compat_name(n) for n in all_props) else "none"
    handle = (all_props.copy() if dest == "handle" else PropertySet()) if msg_handle else None
    if dest == "rfh2" and as_put is not None and carried:
        return as_put[0], as_put[1], handle, C.MQRC_NONE
    if dest == "rfh2" and all_props:
        written, warning = carriable(all_props)
        body, fmt = with_rfh2(written, data, md.format, md.encoding, md.coded_char_set_id)
        return md.replace(format=fmt), body, handle, warning
    return md, data, handle, C.MQRC_NONE
