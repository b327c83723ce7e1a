"""MQSC for channels and listeners: DEFINE/ALTER/DELETE/DISPLAY CHANNEL and LISTENER,
DISPLAY CHSTATUS and LSSTATUS, START/STOP CHANNEL and LISTENER, RESET, RESOLVE and PING CHANNEL,
parsed into the PCF commands of engine.commands.channels (admin.mqsc routes them here).
"""

from __future__ import annotations

import re

from ferrymq.admin import Keyword, single
from ferrymq.engine import chlattrs as K
from ferrymq.engine.attrs import Attr
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Filter, Value

CHANNEL, LISTENER, CHSTATUS, LSSTATUS = K.CHANNEL, K.LISTENER, K.CHSTATUS, K.LSSTATUS
TYPES = {"CHANNEL": CHANNEL, "CHL": CHANNEL, "LISTENER": LISTENER, "LSTR": LISTENER, "CHSTATUS": CHSTATUS,
         "CHS": CHSTATUS, "LSSTATUS": LSSTATUS, "LSS": LSSTATUS}
VERBS = {"START": "START", "STA": "START", "STOP": "STOP", "RESET": "RESET", "RESOLVE": "RESOLVE"}
ALLOWED = {"DEFINE": (CHANNEL, LISTENER), "ALTER": (CHANNEL, LISTENER), "DELETE": (CHANNEL, LISTENER),
           "DISPLAY": (CHANNEL, CHSTATUS, LISTENER, LSSTATUS), "START": (CHANNEL, LISTENER),
           "STOP": (CHANNEL, LISTENER), "RESET": (CHANNEL,), "RESOLVE": (CHANNEL,), "PING": (CHANNEL,)}
PING_DATALEN = 16  # MQSC's DATALEN default (PCF's DataCount default is 64)
_NUMBER = re.compile(r"[+-]?[0-9]+")
_MODES = {"QUIESCE": F.MQMODE_QUIESCE, "FORCE": F.MQMODE_FORCE, "TERMINATE": F.MQMODE_TERMINATE}
_STOP_STATUS = {"STOPPED": F.MQCHS_STOPPED, "INACTIVE": F.MQCHS_INACTIVE}
_STOP_FILTERS = {"CONNAME": F.MQCACH_CONNECTION_NAME, "QMNAME": C.MQCA_Q_MGR_NAME, "CLIENTID": F.MQCACH_CLIENT_ID}
_ACTIONS = {"COMMIT": F.MQIDO_COMMIT, "BACKOUT": F.MQIDO_BACKOUT}
# DISPLAY CHSTATUS without attribute names shows these, as runmqsc does.
_CHSTATUS_SHOWN = ("CHLTYPE", "CONNAME", "RQMNAME", "STATUS", "SUBSTATE", "XMITQ")


class ChannelSyntaxError(ValueError):
    """Raised where admin.mqsc raises MqscSyntaxError (it converts)."""


def table(objtype: str) -> dict[str, Attr]:
    return {CHANNEL: K.CHANNEL_BY_NAME, LISTENER: K.LISTENER_BY_NAME, CHSTATUS: K.CHSTATUS_BY_NAME,
            LSSTATUS: K.LSSTATUS_BY_NAME}[objtype]


def by_selector(objtype: str) -> dict[int, Attr]:
    return {CHANNEL: K.CHANNEL_BY_SELECTOR, LISTENER: K.LISTENER_BY_SELECTOR, CHSTATUS: K.CHSTATUS_BY_SELECTOR,
            LSSTATUS: K.LSSTATUS_BY_SELECTOR}[objtype]


def _value(attr: Attr, word: str, value: str | tuple[str, ...]) -> Value:
    """A value as the PCF command carries it: an exit list (kind "strings") as a tuple of
    its items, or one item (MSGDATA('a,b') is one item, commas and all)."""
    if attr.kind == "strings":
        return value
    value = single(word, value) or ""
    if attr.kind == "str":
        return value
    if value in attr.words:
        return attr.words[value]
    if not _NUMBER.fullmatch(value):
        raise ChannelSyntaxError(f"{word}({value}) must be {'|'.join(attr.words) or f'{attr.low}..{attr.high}'}")
    number = int(value)
    if not -(2**31) <= number < 2**31:
        raise ChannelSyntaxError(f"{word}({value}) is outside the MQLONG range")
    return number


def _number(word: str, value: str | None) -> int:
    if value is None or not _NUMBER.fullmatch(value):
        raise ChannelSyntaxError(f"{word} takes a number in parentheses")
    return int(value)


def _choice(word: str, value: str | None, choices: dict[str, int]) -> int:
    if value not in choices:
        raise ChannelSyntaxError(f"{word} takes {'|'.join(choices)}")
    return choices[value]


def to_command(verb: str, objtype: str, name: str, keywords: list[Keyword]) -> Command:
    """The PCF command of one channel or listener MQSC command.

    Raises:
        ChannelSyntaxError: a keyword or value the command does not take.
    """
    if verb == "DISPLAY":
        return _display(objtype, name, [(w, single(w, v)) for w, v in keywords])
    if objtype == LISTENER:
        return _listener(verb, name, [(w, single(w, v)) for w, v in keywords])
    params: dict[int, Value] = {F.MQCACH_CHANNEL_NAME: name}
    if verb == "PING":
        params[F.MQIACH_DATA_COUNT] = PING_DATALEN
        for word, value in ((w, single(w, v)) for w, v in keywords):
            if word != "DATALEN":
                raise ChannelSyntaxError(f"PING CHANNEL does not take {word}")
            params[F.MQIACH_DATA_COUNT] = _number(word, value)
        return Command(F.MQCMD_PING_CHANNEL, params)
    if verb in ("START", "STOP", "RESET", "RESOLVE"):
        command = {"START": F.MQCMD_START_CHANNEL, "STOP": F.MQCMD_STOP_CHANNEL, "RESET": F.MQCMD_RESET_CHANNEL,
                   "RESOLVE": F.MQCMD_RESOLVE_CHANNEL}[verb]
        for word, value in ((w, single(w, v)) for w, v in keywords):
            if verb == "STOP" and word == "MODE":
                params[F.MQIACF_MODE] = _choice(word, value, _MODES)
            elif verb == "STOP" and word == "STATUS":
                params[F.MQIACH_CHANNEL_STATUS] = _choice(word, value, _STOP_STATUS)
            elif verb == "STOP" and word in _STOP_FILTERS and value:
                params[_STOP_FILTERS[word]] = value
            elif verb == "RESET" and word == "SEQNUM":
                params[F.MQIACH_MSG_SEQUENCE_NUMBER] = _number(word, value)
            elif verb == "RESOLVE" and word == "ACTION":
                params[F.MQIACH_IN_DOUBT] = _choice(word, value, _ACTIONS)
            else:
                raise ChannelSyntaxError(f"{verb} CHANNEL does not take {word}")
        if verb == "RESOLVE" and F.MQIACH_IN_DOUBT not in params:
            raise ChannelSyntaxError("RESOLVE CHANNEL needs ACTION(COMMIT|BACKOUT)")
        return Command(command, params)
    command = {"DEFINE": F.MQCMD_CREATE_CHANNEL, "ALTER": F.MQCMD_CHANGE_CHANNEL,
               "DELETE": F.MQCMD_DELETE_CHANNEL}[verb]
    for word, given in keywords:
        if word == "CHLTYPE" and given is not None and verb != "DELETE":
            params[F.MQIACH_CHANNEL_TYPE] = _choice(word, single(word, given), K.CHLTYPES)
        elif verb == "DEFINE" and word in ("REPLACE", "NOREPLACE") and given is None:
            params[F.MQIACF_REPLACE] = F.MQRP_YES if word == "REPLACE" else F.MQRP_NO
        elif verb == "DEFINE" and word == "LIKE" and given:
            command = F.MQCMD_COPY_CHANNEL
            params[F.MQCACF_FROM_CHANNEL_NAME] = single(word, given) or ""
        elif verb == "DELETE" or given is None:
            raise ChannelSyntaxError(f"{verb} CHANNEL does not take {word}" + ("" if verb == "DELETE" else " without a given"))
        else:
            attr = K.CHANNEL_BY_NAME.get(word)
            if attr is None or attr.readonly:
                raise ChannelSyntaxError(f"{word} is not an attribute of CHANNEL")
            params[attr.selector] = _value(attr, word, given)
    if verb == "DEFINE" and F.MQIACH_CHANNEL_TYPE not in params:
        raise ChannelSyntaxError("DEFINE CHANNEL needs CHLTYPE(SDR|SVR|RCVR|RQSTR|SVRCONN)")
    if verb == "ALTER" and F.MQIACH_CHANNEL_TYPE not in params:
        raise ChannelSyntaxError("ALTER CHANNEL needs CHLTYPE, the channel's type")
    if command == F.MQCMD_COPY_CHANNEL:
        params[F.MQCACF_TO_CHANNEL_NAME] = params.pop(F.MQCACH_CHANNEL_NAME)
    return Command(command, params)


def _listener(verb: str, name: str, keywords: list[tuple[str, str | None]]) -> Command:
    command = {"DEFINE": F.MQCMD_CREATE_LISTENER, "ALTER": F.MQCMD_CHANGE_LISTENER, "DELETE": F.MQCMD_DELETE_LISTENER,
               "START": F.MQCMD_START_CHANNEL_LISTENER, "STOP": F.MQCMD_STOP_CHANNEL_LISTENER}[verb]
    params: dict[int, Value] = {F.MQCACH_LISTENER_NAME: name}
    for word, value in keywords:
        if verb == "DEFINE" and word in ("REPLACE", "NOREPLACE") and value is None:
            params[F.MQIACF_REPLACE] = F.MQRP_YES if word == "REPLACE" else F.MQRP_NO
        elif verb == "DEFINE" and word == "LIKE" and value:
            command = F.MQCMD_COPY_LISTENER
            params[F.MQCACF_FROM_LISTENER_NAME] = value
        elif verb not in ("DEFINE", "ALTER") or value is None:
            raise ChannelSyntaxError(f"{verb} LISTENER does not take {word}")
        else:
            attr = K.LISTENER_BY_NAME.get(word)
            if attr is None or attr.readonly:
                raise ChannelSyntaxError(f"{word} is not an attribute of LISTENER")
            params[attr.selector] = _value(attr, word, value)
    if command == F.MQCMD_COPY_LISTENER:
        params[F.MQCACF_TO_LISTENER_NAME] = params.pop(F.MQCACH_LISTENER_NAME)
    return Command(command, params)


def _display(objtype: str, name: str, keywords: list[tuple[str, str | None]]) -> Command:
    names = table(objtype)
    wanted: list[int] = []
    filters: list[Filter] = []
    params: dict[int, Value] = {}
    for word, value in keywords:
        if word == "ALL" and value is None:
            wanted.append(F.MQIACF_ALL)
        elif objtype == CHANNEL and word == "TYPE" and value is not None:
            params[F.MQIACH_CHANNEL_TYPE] = F.MQCHT_ALL if value == "ALL" else _choice(word, value, K.CHLTYPES)
        elif objtype == CHSTATUS and word in ("CURRENT", "SAVED") and value is None:
            params[F.MQIACH_CHANNEL_INSTANCE_TYPE] = (C.MQOT_CURRENT_CHANNEL if word == "CURRENT"
                                                      else C.MQOT_SAVED_CHANNEL)
        elif word == "WHERE" and value is not None:
            filters.append(_where(objtype, value))
        elif value is None and word in names:
            wanted.append(names[word].selector)
        else:
            raise ChannelSyntaxError(f"DISPLAY {objtype} does not take {word}")
    if objtype == CHANNEL:
        params.update({F.MQCACH_CHANNEL_NAME: name, F.MQIACF_CHANNEL_ATTRS: tuple(wanted) or (F.MQIACH_CHANNEL_TYPE,)})
        return Command(F.MQCMD_INQUIRE_CHANNEL, params, filters)
    if objtype == CHSTATUS:
        shown = tuple(wanted) or tuple(K.CHSTATUS_BY_NAME[k].selector for k in _CHSTATUS_SHOWN)
        params.update({F.MQCACH_CHANNEL_NAME: name, F.MQIACH_CHANNEL_INSTANCE_ATTRS: shown})
        return Command(F.MQCMD_INQUIRE_CHANNEL_STATUS, params, filters)
    if objtype == LISTENER:
        return Command(F.MQCMD_INQUIRE_LISTENER, {F.MQCACH_LISTENER_NAME: name,
                                                  F.MQIACF_LISTENER_ATTRS: tuple(wanted) or (F.MQIACF_ALL,)}, filters)
    return Command(F.MQCMD_INQUIRE_LISTENER_STATUS, {F.MQCACH_LISTENER_NAME: name,
                                                     F.MQIACF_LISTENER_STATUS_ATTRS: tuple(wanted) or (F.MQIACF_ALL,)},
                   filters)


_OPERATORS = {"LT": F.MQCFOP_LESS, "GT": F.MQCFOP_GREATER, "EQ": F.MQCFOP_EQUAL, "NE": F.MQCFOP_NOT_EQUAL,
              "LE": F.MQCFOP_NOT_GREATER, "GE": F.MQCFOP_NOT_LESS, "LK": F.MQCFOP_LIKE, "NL": F.MQCFOP_NOT_LIKE}


def _where(objtype: str, value: str) -> Filter:
    m = re.fullmatch(r"\s*([A-Z0-9]+)\s+([A-Z]+)\s+(.+?)\s*", value)
    if m is None or m.group(2) not in _OPERATORS or m.group(1) not in table(objtype):
        raise ChannelSyntaxError("WHERE takes (attribute operator value)")
    attr = table(objtype)[m.group(1)]
    wanted = _value(attr, attr.name, m.group(3).strip("'"))
    if not isinstance(wanted, (int, str)):
        raise ChannelSyntaxError(f"WHERE does not compare {attr.name}, a list")
    return Filter(attr.selector, _OPERATORS[m.group(2)], wanted)
