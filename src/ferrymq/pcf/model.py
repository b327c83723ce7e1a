"""The command model every administration route shares: a PCF command code with its
parameters in, a list of responses out.

MQSC is translated to this form by ferrymq.admin, PCF messages by ferrymq.pcf.messages,
and Python callers build it directly; ferrymq.engine.commands.executor runs it. A request's
parameters are keyed by their MQIA_/MQCA_/MQIACF_/MQCACF_/MQBACF_ selector; filters
(WHERE) are kept apart because a selector may be both filtered and asked for.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from ferrymq.errors import MQError, failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C

Value = int | str | bytes | tuple[int, ...] | tuple[str, ...]


class ParameterError(MQError):
    """A command refused because of one parameter: PCF names it in MQIACF_PARAMETER_ID."""

    def __init__(self, reason: int, parameter: int, detail: str) -> None:
        super().__init__(C.MQCC_FAILED, reason, detail)
        self.parameter = parameter


@dataclass(frozen=True, slots=True)
class Filter:
    """WHERE(parameter operator value): an MQCFIF or MQCFSF."""

    parameter: int
    operator: int
    value: int | str

    def matches(self, actual: Value | None) -> bool:
        """Whether an object whose attribute is ``actual`` passes (missing: never)."""
        if actual is None:
            return False
        op = self.operator
        if isinstance(actual, tuple):
            if op in (F.MQCFOP_CONTAINS, F.MQCFOP_EXCLUDES):
                return (self.value in actual) == (op == F.MQCFOP_CONTAINS)
            if op in (F.MQCFOP_CONTAINS_GEN, F.MQCFOP_EXCLUDES_GEN):
                hit = any(fnmatch.fnmatchcase(str(v), str(self.value)) for v in actual)
                return hit == (op == F.MQCFOP_CONTAINS_GEN)
            return False
        if isinstance(actual, bytes):
            actual = actual.hex().upper()
        if op in (F.MQCFOP_LIKE, F.MQCFOP_NOT_LIKE):
            hit = fnmatch.fnmatchcase(str(actual).rstrip(), str(self.value).rstrip())
            return hit == (op == F.MQCFOP_LIKE)
        a: int | str = actual
        b: int | str = self.value
        if isinstance(a, str) or isinstance(b, str):
            a, b = str(a).rstrip(), str(b).rstrip()
        try:
            return {F.MQCFOP_LESS: a < b, F.MQCFOP_NOT_GREATER: a <= b, F.MQCFOP_EQUAL: a == b,  # type: ignore[operator]
                    F.MQCFOP_NOT_EQUAL: a != b, F.MQCFOP_GREATER: a > b, F.MQCFOP_NOT_LESS: a >= b}[op]  # type: ignore[operator]
        except KeyError:
            raise failed(F.MQRCCF_CFIF_OPERATOR_ERROR, f"filter operator {op} is not one IBM defines") from None


@dataclass(slots=True)
class Command:
    """One administration request."""

    command: int
    params: dict[int, Value] = field(default_factory=dict)
    filters: list[Filter] = field(default_factory=list)

    def text(self, selector: int, default: str | None = None) -> str:
        value = self.params.get(selector, default)
        if value is None:
            raise failed(F.MQRCCF_PARM_MISSING, f"command {self.command} requires parameter {selector}")
        if not isinstance(value, str):
            raise failed(F.MQRCCF_CFST_PARM_ID_ERROR, f"parameter {selector} takes a string, not {value!r}")
        return value.rstrip()

    def replacing(self) -> bool:
        """CREATE/COPY with MQIACF_REPLACE MQRP_YES: an existing object is redefined."""
        return self.number(F.MQIACF_REPLACE, F.MQRP_NO) == F.MQRP_YES

    def number(self, selector: int, default: int | None = None) -> int:
        value = self.params.get(selector, default)
        if value is None:
            raise failed(F.MQRCCF_PARM_MISSING, f"command {self.command} requires parameter {selector}")
        if not isinstance(value, int):
            raise failed(F.MQRCCF_CFIN_PARM_ID_ERROR, f"parameter {selector} takes an integer, not {value!r}")
        return value

    def selectors(self, selector: int) -> tuple[int, ...]:
        """The attribute list of an INQUIRE (MQIACF_ALL when absent)."""
        value = self.params.get(selector, (F.MQIACF_ALL,))
        if isinstance(value, int):
            value = (value,)
        if not isinstance(value, tuple) or not all(isinstance(v, int) for v in value):
            raise failed(F.MQRCCF_CFIL_PARM_ID_ERROR, f"parameter {selector} takes an integer list")
        return value  # type: ignore[return-value]


@dataclass(slots=True)
class Response:
    """One response: the object's parameters (selector order kept), or an error."""

    params: dict[int, Value] = field(default_factory=dict)
    comp: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    detail: str = ""
