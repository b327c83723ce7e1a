"""pymqi's ``PCFExecute``, ``Filter`` and ``ByteString``: PCF administration as pymqi does it.

    pcf = pymqi.PCFExecute(qmgr)
    pcf.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"APP.IN", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL})
    for q in pcf.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"APP.*"}):
        print(q[CMQC.MQCA_Q_NAME], q[CMQC.MQIA_CURRENT_Q_DEPTH])

Any ``MQCMD_*`` name is a method taking the parameters as a dict (str/bytes -> MQCFST,
int -> MQCFIN, list of int -> MQCFIL, list of str/bytes -> MQCFSL, ByteString -> MQCFBS)
and optional filters; it returns one dict per response, strings as bytes (or str with
``convert=True``). A failed command raises MQMIError with the response's CompCode and
Reason. The request travels as PCF through the queue manager's command server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ferrymq.admin.pcfclient import CommandClient
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Value
from ferrymq.pcf.model import Filter as ModelFilter
from ferrymq.pymqi.core import QueueManager
from ferrymq.pymqi.errors import MQMIError, PYIFError, from_mq_error
from ferrymq.pymqi.structs import text as _name


class ByteString(bytes):
    """A value sent as MQCFBS (a byte string), as pymqi's ByteString marks it."""


class Filter:
    """pymqi's filter builder: ``Filter(CMQC.MQIA_CURRENT_Q_DEPTH).greater(5)``."""

    def __init__(self, selector: int) -> None:
        self.selector = selector
        self.operator = 0
        self.value: int | str = 0

    def _set(self, operator: int, value: int | str | bytes) -> Filter:
        self.operator = operator
        self.value = text(value) if isinstance(value, bytes) else value
        return self

    def less(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_LESS, v)
    def less_or_equal(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_NOT_GREATER, v)
    def equal(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_EQUAL, v)
    def greater_or_equal(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_NOT_LESS, v)
    def greater(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_GREATER, v)
    def not_equal(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_NOT_EQUAL, v)
    def like(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_LIKE, v)
    def not_like(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_NOT_LIKE, v)
    def contains(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_CONTAINS, v)
    def excludes(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_EXCLUDES, v)
    def contains_gen(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_CONTAINS_GEN, v)
    def excludes_gen(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_EXCLUDES_GEN, v)


def text(value: bytes | str) -> str:
    """A PCF string from pymqi's bytes (UTF-8, trailing blanks and NULs dropped)."""
    return value.decode("utf-8", "replace").rstrip(" \0") if isinstance(value, bytes) else value.rstrip()


def _param(key: int, value: Any) -> Value:
    if isinstance(value, ByteString):
        return bytes(value)
    if isinstance(value, (bytes, str)):
        return text(value) if isinstance(value, bytes) else value
    if isinstance(value, bool) or not isinstance(value, (int, list, tuple)):
        raise PYIFError(f"PCF parameter {key}: unsupported value {value!r}")
    if isinstance(value, int):
        return value
    if all(isinstance(v, int) for v in value):
        return tuple(int(v) for v in value)
    return tuple(text(v) if isinstance(v, bytes) else str(v) for v in value)


class PCFExecute:
    """Runs PCF commands against a connected ``QueueManager`` (or a queue manager name)."""

    def __init__(self, name: QueueManager | str | bytes, disconnect_on_exit: bool = True,
                 model_queue_name: str | bytes = b"SYSTEM.DEFAULT.MODEL.QUEUE",
                 dynamic_queue_name: str | bytes = b"PYMQPCF.*",
                 command_queue_name: str | bytes = b"SYSTEM.ADMIN.COMMAND.QUEUE",
                 response_wait_interval: int = 5000, convert: bool = False) -> None:
        self.qmgr = name if isinstance(name, QueueManager) else QueueManager(_name(name))
        self._owns = not isinstance(name, QueueManager)
        self.disconnect_on_exit = disconnect_on_exit
        self.convert = convert
        try:
            self._admin = CommandClient(self.qmgr.get_handle(), model_queue=text(model_queue_name),
                                        dynamic_queue=text(dynamic_queue_name), command_queue=text(command_queue_name),
                                        wait=response_wait_interval / 1000)
        except MQError as exc:
            raise from_mq_error(exc) from None

    def __getattr__(self, name: str) -> Callable[..., list[dict[int, Any]]]:
        code = getattr(F, name, None) if name.startswith("MQCMD_") else None
        if not isinstance(code, int):
            raise AttributeError(name)

        def call(args: Mapping[int, Any] | None = None, filters: Sequence[Filter] | None = None) -> list[dict[int, Any]]:
            return self.execute(code, args or {}, filters or ())

        return call

    def execute(self, command: int, args: Mapping[int, Any], filters: Sequence[Filter] = ()) -> list[dict[int, Any]]:
        """One command; the responses as pymqi returns them.

        Raises:
            MQMIError: the command failed (CompCode and Reason of its response), or the
                command server did not answer within response_wait_interval.
        """
        cmd = Command(command, {int(k): _param(int(k), v) for k, v in args.items()},
                      [ModelFilter(f.selector, f.operator, f.value) for f in filters])
        try:
            responses = self._admin.run(cmd)
        except MQError as exc:
            raise from_mq_error(exc) from None
        for r in responses:
            if r.comp != C.MQCC_OK:
                raise MQMIError(r.comp, r.reason, detail=r.detail)
        return [{k: self._out(v) for k, v in r.params.items()} for r in responses if r.params]

    def _out(self, value: Value) -> Any:
        if isinstance(value, str):
            return value if self.convert else value.encode("utf-8")
        if isinstance(value, tuple):
            return [self._out(v) for v in value]
        return value

    def disconnect(self) -> None:
        self._admin.close()
        if self._owns and self.disconnect_on_exit and self.qmgr.is_connected:
            self.qmgr.disconnect()

    def __enter__(self) -> PCFExecute:
        return self

    def __exit__(self, *exc: object) -> None:
        self.disconnect()
