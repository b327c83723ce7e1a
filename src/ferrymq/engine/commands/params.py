"""Reading an object's definition attributes out of a CREATE/CHANGE/COPY command: the one
loop every object type's commands share (queues, the queue manager, topics,
subscriptions, namelists). Each attribute's rule is the catalog's (engine.attrs); what
this adds is naming the PCF parameter that broke it, as IBM's MQIACF_PARAMETER_ID does.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from ferrymq.engine import attrs as A
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.pcf.model import Command, ParameterError


def settable(cmd: Command, lookup: Callable[[int], A.Attr | None], control: Collection[int],
             what: str) -> dict[str, object]:
    """The attributes ``cmd`` sets, by catalog name, each checked by its catalog rule.
    ``lookup`` gives the attribute a parameter sets (None: not one of ``what``'s);
    parameters in ``control`` are the command's own (names, REPLACE ...) and skipped.

    Raises:
        ParameterError: MQRCCF_CFIN_PARM_ID_ERROR / MQRCCF_CFST_PARM_ID_ERROR for a
            parameter that is not a settable attribute, MQRCCF_ATTR_VALUE_ERROR for a
            value its rule refuses; each names the parameter.
    """
    out: dict[str, object] = {}
    for sel, value in cmd.params.items():
        if sel in control:
            continue
        attr = lookup(sel)
        if attr is None or attr.readonly:
            raise ParameterError(F.MQRCCF_CFIN_PARM_ID_ERROR if isinstance(value, int) else F.MQRCCF_CFST_PARM_ID_ERROR,
                                 sel, f"parameter {sel} is not a settable attribute of {what}")
        if attr.kind == "bytes":  # an identifier (a subscription's DESTCORL ...): padded with nulls
            if not isinstance(value, bytes) or len(value) > attr.length:
                raise ParameterError(F.MQRCCF_ATTR_VALUE_ERROR, sel, f"{attr.name} takes up to {attr.length} bytes")
            out[attr.name] = value.ljust(attr.length, b"\0")
            continue
        try:
            out[attr.name] = attr.check(value)
        except MQError as exc:
            raise ParameterError(F.MQRCCF_ATTR_VALUE_ERROR, sel, exc.detail) from None
    return out
