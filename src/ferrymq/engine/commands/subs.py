"""Subscription administration commands: CREATE/CHANGE/COPY/DELETE_SUBSCRIPTION,
INQUIRE_SUBSCRIPTION (DISPLAY SUB) and INQUIRE_SUB_STATUS (DISPLAY SBSTATUS).

The subscription rules are engine.subscribing's (``Subscriber.define/alter/delete``, which
take MQSC attribute names); this module maps PCF parameters to those names through the
catalog (attrs.SUB_ATTRS) and subscriptions back to parameters.
"""

from __future__ import annotations

import fnmatch

from ferrymq.engine import attrs as A
from ferrymq.engine.commands.params import settable
from ferrymq.engine.qmgr import QueueManager
from ferrymq.engine.session import connection_id
from ferrymq.engine.subscriptions import Subscription
from ferrymq.errors import failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, ParameterError, Response, Value

_CONTROL = {F.MQCACF_SUB_NAME, F.MQBACF_SUB_ID, F.MQIACF_REPLACE, F.MQCACF_FROM_SUB_NAME, F.MQCACF_TO_SUB_NAME,
            F.MQIACF_SUB_ATTRS, F.MQIACF_SUB_STATUS_ATTRS, F.MQIACF_DURABLE_SUBSCRIPTION, F.MQIACF_SUB_TYPE,
            F.MQCACF_COMMAND_SCOPE, F.MQIACF_SUB_SUMMARY}
# MQIACF_SUB_TYPE selections of an inquire (IBM's MQSUBTYPE_ALL and _USER).
_SUBTYPE_ALL = -1
_SUBTYPE_USER = -2


def sub_attributes(cmd: Command) -> dict[str, object]:
    """The attributes a CREATE/CHANGE/COPY_SUBSCRIPTION carries, by MQSC name.

    Raises:
        ParameterError: a parameter that is not a subscription attribute, or a value of the
            wrong type or out of range (MQRCCF_ATTR_VALUE_ERROR).
    """
    out = settable(cmd, A.SUB_BY_SELECTOR.get, _CONTROL, "a subscription")
    if out.get("TOPICSTR") == "":
        del out["TOPICSTR"]
    if out.get("TOPICOBJ") == "":
        del out["TOPICOBJ"]
    return out


def _target(qm: QueueManager, cmd: Command) -> Subscription:
    """The subscription a command names by MQCACF_SUB_NAME or MQBACF_SUB_ID.

    Raises:
        MQError: MQRCCF_PARM_MISSING when neither is given, MQRC_NO_SUBSCRIPTION (2428).
    """
    sub_id = cmd.params.get(F.MQBACF_SUB_ID)
    if isinstance(sub_id, bytes) and sub_id.strip(b"\0"):
        sub = qm.subscriptions.find_id(sub_id)
    elif F.MQCACF_SUB_NAME in cmd.params:
        sub = qm.subscriptions.find(cmd.text(F.MQCACF_SUB_NAME))
    else:
        raise failed(F.MQRCCF_PARM_MISSING, "the command needs SubName (MQCACF_SUB_NAME) or SubId (MQBACF_SUB_ID)")
    if sub is None:
        raise failed(C.MQRC_NO_SUBSCRIPTION, "there is no such subscription")
    return sub


def _create(qm: QueueManager, cmd: Command) -> list[Response]:
    name = cmd.text(F.MQCACF_SUB_NAME)
    qm.subscriber.define(name, sub_attributes(cmd), replace=cmd.replacing())
    qm.need_sync()
    return [Response()]


def _copy(qm: QueueManager, cmd: Command) -> list[Response]:
    """COPY_SUBSCRIPTION: a new subscription with the source's attributes but those given."""
    source = qm.subscriptions.find(cmd.text(F.MQCACF_FROM_SUB_NAME))
    if source is None:
        raise failed(C.MQRC_NO_SUBSCRIPTION, "the FromSubscriptionName subscription does not exist")
    attrs: dict[str, object] = {
        "TOPICSTR": source.topic, "DESTCLAS": C.MQDC_MANAGED if source.managed else C.MQDC_PROVIDED,
        "DESTQMGR": source.dest_qmgr, "PUBPRTY": source.pub_priority, "PUBACCT": source.pub_accounting_token,
        "PUBAPPID": source.pub_appl_identity_data, "EXPIRY": source.expiry, "SELECTOR": source.selector_text,
        "USERDATA": source.user_data, "WSCHEMA": source.wildcards,
        "REQONLY": C.MQRU_PUBLISH_ON_REQUEST if source.on_request else C.MQRU_PUBLISH_ALL,
        "VARUSER": C.MQVU_ANY_USER if source.any_user else C.MQVU_FIXED_USER, "SUBSCOPE": source.sub_scope,
        "SUBLEVEL": source.sub_level, "SUBUSER": source.user,
    }
    if not source.managed:
        attrs["DEST"] = source.destination
    given = sub_attributes(cmd)
    if "TOPICOBJ" in given:
        attrs.pop("TOPICSTR")
    attrs.update(given)
    qm.subscriber.define(cmd.text(F.MQCACF_TO_SUB_NAME), attrs, replace=cmd.replacing())
    qm.need_sync()
    return [Response()]


def _change(qm: QueueManager, cmd: Command) -> list[Response]:
    sub = _target(qm, cmd)
    qm.subscriber.alter(sub.key, sub_attributes(cmd))
    qm.need_sync()
    return [Response()]


def _delete(qm: QueueManager, cmd: Command) -> list[Response]:
    sub = _target(qm, cmd)
    qm.subscriber.delete(sub.key)
    qm.need_sync()
    return [Response()]


def describe(qm: QueueManager, sub: Subscription) -> dict[str, int | str | bytes]:
    """A subscription's attributes, MQSC names to the values PCF carries (bytes for
    SUBID, DESTCORL, PUBACCT)."""
    values: dict[str, int | str | bytes] = {}
    for name, value in qm.subscriber.describe(sub).items():
        if name in A.SUB_BY_NAME:
            values[name] = value
    values.update({"SUBID": sub.sub_id, "DESTCORL": sub.correl_id, "PUBACCT": sub.pub_accounting_token,
                   "SUB": sub.key, "PSPROP": C.MQPSPROP_MSGPROP})
    return values


def sub_status(qm: QueueManager, sub: Subscription) -> dict[str, int | str | bytes]:
    """DISPLAY SBSTATUS's values of a subscription."""
    values: dict[str, int | str | bytes] = {}
    for name, value in qm.subscriber.status(sub).items():
        if name in A.SUB_BY_NAME:
            values[name] = value
    values.update({"SUBID": sub.sub_id, "SUB": sub.key,
                   "ACTCONN": connection_id(qm.name, sub.hconn) if sub.hconn else bytes(24)})
    return values


def _selected(qm: QueueManager, cmd: Command) -> list[Subscription]:
    """The subscriptions an inquire names (a generic SubName or a SubId), of the asked-for
    durability and type, in name order."""
    sub_id = cmd.params.get(F.MQBACF_SUB_ID)
    if isinstance(sub_id, bytes) and sub_id.strip(b"\0"):
        found = qm.subscriptions.find_id(sub_id)
        subs = [] if found is None else [found]
    else:
        pattern = cmd.text(F.MQCACF_SUB_NAME, "*") or "*"
        subs = sorted((s for s in qm.subscriptions if fnmatch.fnmatchcase(s.key, pattern)), key=lambda s: s.key)
    durable = cmd.number(F.MQIACF_DURABLE_SUBSCRIPTION, C.MQSUB_DURABLE_ALL)
    if durable == C.MQSUB_DURABLE_YES:
        subs = [s for s in subs if s.durable]
    elif durable == C.MQSUB_DURABLE_NO:
        subs = [s for s in subs if not s.durable]
    elif durable != C.MQSUB_DURABLE_ALL:
        raise ParameterError(F.MQRCCF_PARM_VALUE_ERROR, F.MQIACF_DURABLE_SUBSCRIPTION, f"Durable {durable} is not ALL, YES or NO")
    kind = cmd.number(F.MQIACF_SUB_TYPE, _SUBTYPE_USER)
    if kind == _SUBTYPE_USER:
        subs = [s for s in subs if s.sub_type in (1, 2)]  # API and ADMIN
    elif kind != _SUBTYPE_ALL:
        subs = [s for s in subs if s.sub_type == kind]
    if not subs and "*" not in str(cmd.params.get(F.MQCACF_SUB_NAME, "*")):
        raise failed(C.MQRC_NO_SUBSCRIPTION, "there is no such subscription")
    return subs


def _params(values: dict[str, int | str | bytes], kind: str, wanted: tuple[int, ...]) -> dict[int, Value]:
    every = F.MQIACF_ALL in wanted
    out: dict[int, Value] = {F.MQCACF_SUB_NAME: values["SUB"], F.MQBACF_SUB_ID: values["SUBID"]}
    for attr in A.SUB_ATTRS + A.SUB_STATUS_ATTRS:
        if kind in attr.types and attr.name in values and attr.selector not in out \
                and (every or attr.selector in wanted):
            out[attr.selector] = values[attr.name]
    return out


def _inquire(qm: QueueManager, cmd: Command) -> list[Response]:
    wanted = cmd.selectors(F.MQIACF_SUB_ATTRS) + tuple(f.parameter for f in cmd.filters)
    out = []
    for sub in _selected(qm, cmd):
        values = describe(qm, sub)
        every = _params(values, A.SUB, (F.MQIACF_ALL,))
        if all(f.matches(every.get(f.parameter)) for f in cmd.filters):
            out.append(Response(_params(values, A.SUB, wanted)))
    return out


def _inquire_status(qm: QueueManager, cmd: Command) -> list[Response]:
    wanted = cmd.selectors(F.MQIACF_SUB_STATUS_ATTRS) + tuple(f.parameter for f in cmd.filters)
    out = []
    for sub in _selected(qm, cmd):
        values = sub_status(qm, sub)
        every = _params(values, A.SBSTATUS, (F.MQIACF_ALL,))
        if all(f.matches(every.get(f.parameter)) for f in cmd.filters):
            out.append(Response(_params(values, A.SBSTATUS, wanted)))
    return out


HANDLERS = {
    F.MQCMD_CREATE_SUBSCRIPTION: _create,
    F.MQCMD_COPY_SUBSCRIPTION: _copy,
    F.MQCMD_CHANGE_SUBSCRIPTION: _change,
    F.MQCMD_DELETE_SUBSCRIPTION: _delete,
    F.MQCMD_INQUIRE_SUBSCRIPTION: _inquire,
    F.MQCMD_INQUIRE_SUB_STATUS: _inquire_status,
}
