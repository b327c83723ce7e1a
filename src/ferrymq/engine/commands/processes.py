"""Process administration commands: CREATE/CHANGE/COPY/DELETE/INQUIRE_PROCESS and
INQUIRE_PROCESS_NAMES.

The object rules are the process registry's (engine.processes) and the attribute
catalog's; this module maps PCF parameters to them and processes back to parameters.
"""

from __future__ import annotations

from collections.abc import Iterable

from ferrymq.engine import attrs as A
from ferrymq.engine.commands.params import settable
from ferrymq.engine.commands.verbs import Codes, definition_handlers
from ferrymq.engine.processes import ProcessObject
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Filter, Response, Value

# Parameters a process command reads itself: never treated as process attributes.
_CONTROL = {C.MQCA_PROCESS_NAME, F.MQIACF_REPLACE, F.MQCACF_FROM_PROCESS_NAME, F.MQCACF_TO_PROCESS_NAME,
            F.MQIACF_PROCESS_ATTRS, F.MQIACF_QSG_DISPS, F.MQCACF_COMMAND_SCOPE}


def _attributes(cmd: Command) -> dict[str, object]:
    """Raises: ParameterError, as params.settable."""
    return settable(cmd, A.PROCESS_BY_SELECTOR.get, _CONTROL, "PROCESS")


_VERBS = definition_handlers(lambda qm: qm.state.processes, _attributes, Codes(
    C.MQCA_PROCESS_NAME, F.MQCACF_FROM_PROCESS_NAME, F.MQCACF_TO_PROCESS_NAME, F.MQCMD_CREATE_PROCESS,
    F.MQCMD_COPY_PROCESS, F.MQCMD_CHANGE_PROCESS, F.MQCMD_DELETE_PROCESS))


def process_params(obj: ProcessObject, wanted: Iterable[int]) -> dict[int, Value]:
    """A process as INQUIRE_PROCESS answers: its name, then the asked-for attributes."""
    want = set(wanted)
    every = F.MQIACF_ALL in want
    out: dict[int, Value] = {C.MQCA_PROCESS_NAME: obj.name}
    for attr in A.PROCESS_ATTRS:
        if every or attr.selector in want:
            out[attr.selector] = obj.status(attr.name)
    return out


def _passes(obj: ProcessObject, filters: list[Filter]) -> bool:
    for f in filters:
        attr = A.PROCESS_BY_SELECTOR.get(f.parameter)
        if attr is None:
            raise failed(F.MQRCCF_FILTER_ERROR, f"filter parameter {f.parameter} is not a process attribute")
        if not f.matches(obj.status(attr.name)):
            return False
    return True


def _matching(qm: QueueManager, cmd: Command) -> list[ProcessObject]:
    name = cmd.text(C.MQCA_PROCESS_NAME)
    reg = qm.state.processes
    found = [reg.by_name[n] for n in reg.names(name)]
    if not found and "*" not in name:
        raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"process {name!r} is not defined")
    return found


def _inquire(qm: QueueManager, cmd: Command) -> list[Response]:
    # As IBM: the attribute a filter tests is returned whether or not it was asked for.
    wanted = cmd.selectors(F.MQIACF_PROCESS_ATTRS) + tuple(f.parameter for f in cmd.filters)
    return [Response(process_params(o, wanted)) for o in _matching(qm, cmd) if _passes(o, cmd.filters)]


def _inquire_names(qm: QueueManager, cmd: Command) -> list[Response]:
    return [Response({F.MQCACF_PROCESS_NAMES: tuple(o.name for o in _matching(qm, cmd))})]


HANDLERS = {
    **_VERBS,
    F.MQCMD_INQUIRE_PROCESS: _inquire,
    F.MQCMD_INQUIRE_PROCESS_NAMES: _inquire_names,
}
