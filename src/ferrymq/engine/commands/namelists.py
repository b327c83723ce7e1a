"""Namelist administration commands: CREATE/CHANGE/COPY/DELETE/INQUIRE_NAMELIST and
INQUIRE_NAMELIST_NAMES.

The object rules are the namelist registry's (engine.namelists) and the attribute
catalog's; this module maps PCF parameters to them and namelists back to parameters.
NAMES travels as an MQCFSL (a tuple of strings), the other attributes as single values.
"""

from __future__ import annotations

from collections.abc import Iterable

from ferrymq.engine import attrs as A
from ferrymq.engine.commands.params import settable
from ferrymq.engine.namelists import NamelistObject
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Filter, ParameterError, Response, Value

# Parameters a namelist command reads itself: never treated as namelist attributes.
_CONTROL = {C.MQCA_NAMELIST_NAME, C.MQCA_NAMES, F.MQIACF_REPLACE, F.MQCACF_FROM_NAMELIST_NAME,
            F.MQCACF_TO_NAMELIST_NAME, F.MQIACF_NAMELIST_ATTRS, F.MQIACF_QSG_DISPS, F.MQCACF_COMMAND_SCOPE}
_NAMELIST_TYPES = (C.MQNT_NONE, C.MQNT_Q, C.MQNT_CLUSTER, C.MQNT_AUTH_INFO, C.MQNT_ALL)


def _attributes(cmd: Command) -> dict[str, object]:
    """The single-valued attributes a CREATE/CHANGE/COPY carries, as catalog names.

    Raises:
        ParameterError: as params.settable.
    """
    return settable(cmd, A.NAMELIST_BY_SELECTOR.get, _CONTROL, "NAMELIST")


def _names(cmd: Command) -> tuple[str, ...] | None:
    """MQCA_NAMES when the command carries it (an MQCFSL; a single MQCFST is one name)."""
    value = cmd.params.get(C.MQCA_NAMES)
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
        raise ParameterError(F.MQRCCF_CFSL_PARM_ID_ERROR, C.MQCA_NAMES, "MQCA_NAMES must be a string list (MQCFSL)")
    return tuple(str(v) for v in value)


def _create(qm: QueueManager, cmd: Command) -> list[Response]:
    qm.state.namelists.define(cmd.text(C.MQCA_NAMELIST_NAME), _attributes(cmd), _names(cmd), replace=cmd.replacing())
    qm.need_sync()
    return [Response()]


def _copy(qm: QueueManager, cmd: Command) -> list[Response]:
    source = qm.state.namelists.require(cmd.text(F.MQCACF_FROM_NAMELIST_NAME))
    qm.state.namelists.define(cmd.text(F.MQCACF_TO_NAMELIST_NAME), _attributes(cmd), _names(cmd), like=source.name,
                              replace=cmd.replacing())
    qm.need_sync()
    return [Response()]


def _change(qm: QueueManager, cmd: Command) -> list[Response]:
    qm.state.namelists.alter(cmd.text(C.MQCA_NAMELIST_NAME), _attributes(cmd), _names(cmd))
    qm.need_sync()
    return [Response()]


def _delete(qm: QueueManager, cmd: Command) -> list[Response]:
    qm.state.namelists.delete(cmd.text(C.MQCA_NAMELIST_NAME))
    qm.need_sync()
    return [Response()]


def namelist_params(obj: NamelistObject, wanted: Iterable[int]) -> dict[int, Value]:
    """A namelist as INQUIRE_NAMELIST answers: its name, then the asked-for attributes."""
    want = set(wanted)
    every = F.MQIACF_ALL in want
    out: dict[int, Value] = {C.MQCA_NAMELIST_NAME: obj.name}
    for attr in A.NAMELIST_ATTRS:
        if every or attr.selector in want:
            out[attr.selector] = obj.status(attr.name)
    return out


def _status_of(obj: NamelistObject, selector: int) -> Value:
    attr = A.NAMELIST_BY_SELECTOR.get(selector)
    if attr is None:
        raise failed(F.MQRCCF_FILTER_ERROR, f"filter parameter {selector} is not a namelist attribute")
    return obj.status(attr.name)


def _passes(obj: NamelistObject, filters: list[Filter]) -> bool:
    return all(f.matches(_status_of(obj, f.parameter)) for f in filters)


def _matching(qm: QueueManager, cmd: Command) -> list[NamelistObject]:
    """The namelists a generic name selects, of MQIA_NAMELIST_TYPE when given."""
    kind = cmd.number(C.MQIA_NAMELIST_TYPE, C.MQNT_ALL)
    if kind not in _NAMELIST_TYPES:
        raise ParameterError(F.MQRCCF_ATTR_VALUE_ERROR, C.MQIA_NAMELIST_TYPE,
                             f"NamelistType {kind} is not MQNT_NONE, MQNT_Q, MQNT_CLUSTER, MQNT_AUTH_INFO or MQNT_ALL")
    name = cmd.text(C.MQCA_NAMELIST_NAME)
    reg = qm.state.namelists
    found = [reg.namelists[n] for n in reg.names(name)]
    if not found and "*" not in name:
        raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"namelist {name!r} is not defined")
    return [o for o in found if kind == C.MQNT_ALL or o.status("NLTYPE") == kind]


def _inquire(qm: QueueManager, cmd: Command) -> list[Response]:
    # As IBM: the attribute a filter tests is returned whether or not it was asked for.
    wanted = cmd.selectors(F.MQIACF_NAMELIST_ATTRS) + tuple(f.parameter for f in cmd.filters)
    return [Response(namelist_params(o, wanted)) for o in _matching(qm, cmd) if _passes(o, cmd.filters)]


def _inquire_names(qm: QueueManager, cmd: Command) -> list[Response]:
    return [Response({F.MQCACF_NAMELIST_NAMES: tuple(o.name for o in _matching(qm, cmd))})]


HANDLERS = {
    F.MQCMD_CREATE_NAMELIST: _create,
    F.MQCMD_COPY_NAMELIST: _copy,
    F.MQCMD_CHANGE_NAMELIST: _change,
    F.MQCMD_DELETE_NAMELIST: _delete,
    F.MQCMD_INQUIRE_NAMELIST: _inquire,
    F.MQCMD_INQUIRE_NAMELIST_NAMES: _inquire_names,
}
