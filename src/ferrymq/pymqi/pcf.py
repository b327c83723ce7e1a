"""pymqi's ``PCFExecute``, ``Filter`` and ``ByteString``: PCF administration as pymqi does it.

    pcf = pymqi.PCFExecute(qmgr)
    pcf.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"APP.IN", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL})
    pcf.MQCMD_CREATE_Q([pymqi.CFST(Parameter=CMQC.MQCA_Q_NAME, String=b"APP.OUT"),
                        pymqi.CFIN(Parameter=CMQC.MQIA_Q_TYPE, Value=CMQC.MQQT_LOCAL)])
    for q in pcf.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"APP.*"}, [pymqi.Filter(CMQC.MQIA_CURRENT_Q_DEPTH).greater(0)]):
        print(q[CMQC.MQCA_Q_NAME].strip(), q[CMQC.MQIA_CURRENT_Q_DEPTH])

Any ``MQCMD_*`` name is a method taking the parameters as a dict (str/bytes -> MQCFST,
int -> MQCFIN, or MQCFIL for an ``*_ATTRS`` selector, list of int -> MQCFIL, list of
str/bytes -> MQCFSL, ByteString -> MQCFBS) or as a list of PCF structures, and optional
filters. As in pymqi, the request is an MQCFT_COMMAND_XR message put to the command queue
with a temporary dynamic reply queue; each response becomes one dict, character values as
the bytes the queue manager sent (blank-padded), so a command that returns no data gives
``[{}]``. A failed response raises MQMIError with its CompCode and Reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pymqi import pcfstructs as S
from ferrymq.pymqi.core import QueueManager
from ferrymq.pymqi.errors import MQMIError, PYIFError
from ferrymq.pymqi.queue import Queue
from ferrymq.pymqi.structs import GMO, MD, OD, PMO, as_bytes

# The *_ATTRS selectors: an int given for one of them is sent as a one-item MQCFIL, as pymqi does.
_ATTR_LISTS = frozenset(v for k, v in vars(F).items()
                        if k.startswith(("MQIACF_", "MQIACH_")) and k.endswith("_ATTRS") and isinstance(v, int))


class ByteString(bytes):
    """A value sent as MQCFBS (a byte string), as pymqi's ByteString marks it."""

    @property
    def value(self) -> bytes:
        return bytes(self)


class Filter:
    """pymqi's filter builder: ``Filter(CMQC.MQIA_CURRENT_Q_DEPTH).greater(5)`` is sent as an
    MQCFIF, ``Filter(CMQC.MQCA_Q_DESC).like(b"IBM MQ*")`` as an MQCFSF."""

    def __init__(self, selector: int) -> None:
        self.selector = selector
        self.operator = 0
        self.value: int | bytes = 0

    def _set(self, operator: int, value: int | str | bytes) -> Filter:
        self.operator = operator
        self.value = value.encode("utf-8") if isinstance(value, str) else value
        return self

    def less(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_LESS, v)
    def less_or_equal(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_NOT_GREATER, v)
    not_greater = less_or_equal
    def equal(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_EQUAL, v)
    def greater_or_equal(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_NOT_LESS, v)
    not_less = greater_or_equal
    def greater(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_GREATER, v)
    def not_equal(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_NOT_EQUAL, v)
    def like(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_LIKE, v)
    def not_like(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_NOT_LIKE, v)
    def contains(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_CONTAINS, v)
    def excludes(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_EXCLUDES, v)
    def contains_gen(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_CONTAINS_GEN, v)
    def excludes_gen(self, v: int | str | bytes) -> Filter: return self._set(F.MQCFOP_EXCLUDES_GEN, v)

    def structure(self) -> S.PCFStructure:
        """The MQCFIF (integer value) or MQCFSF (string value) this filter is sent as."""
        if isinstance(self.value, int):
            return S.CFIF(Parameter=self.selector, Operator=self.operator, FilterValue=self.value)
        return S.CFSF(Parameter=self.selector, Operator=self.operator, FilterValue=self.value)


def _parameter(key: int, value: Any, encoding: str) -> S.PCFStructure:
    """The PCF structure for one dict item (pymqi's rules; see the module docstring)."""
    if isinstance(value, ByteString):
        return S.CFBS(Parameter=key, String=bytes(value))
    if isinstance(value, (str, bytes)):
        return S.CFST(Parameter=key, String=value.encode(encoding) if isinstance(value, str) else value)
    if isinstance(value, int) and not isinstance(value, bool):
        return S.CFIL(Parameter=key, Values=[value]) if key in _ATTR_LISTS else S.CFIN(Parameter=key, Value=value)
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, int) for v in value):
            return S.CFIL(Parameter=key, Values=list(value))
        if all(isinstance(v, (str, bytes)) for v in value):
            return S.CFSL(Parameter=key, Strings=[v.encode(encoding) if isinstance(v, str) else v for v in value])
    raise PYIFError(f"PCF parameter {key}: unsupported value {value!r}")


def _order(encoding: int) -> str:
    return "<" if encoding & C.MQENC_INTEGER_MASK == C.MQENC_INTEGER_REVERSED else ">"


class PCFExecute(QueueManager):
    """Runs PCF commands through a connected ``QueueManager`` (or connects by name itself)."""

    def __init__(self, name: QueueManager | str | bytes | None = None, disconnect_on_exit: bool = True,
                 model_queue_name: str | bytes = b"SYSTEM.DEFAULT.MODEL.QUEUE",
                 dynamic_queue_name: str | bytes = b"PYMQPCF.*",
                 command_queue_name: str | bytes = b"SYSTEM.ADMIN.COMMAND.QUEUE",
                 response_wait_interval: int = 5000, convert: bool = False) -> None:
        if isinstance(name, QueueManager):
            super().__init__(None, disconnect_on_exit)
            self.qm: QueueManager = name
        else:
            super().__init__(name, disconnect_on_exit)
            self.qm = self
        self.bytes_encoding = self.qm.bytes_encoding
        self._command_queue_name = as_bytes(command_queue_name)
        self._response_wait_interval = response_wait_interval
        self._convert = convert
        od = OD(ObjectName=as_bytes(model_queue_name), DynamicQName=as_bytes(dynamic_queue_name))
        self._reply_queue: Queue | None = Queue(self.qm, od, C.MQOO_INPUT_EXCLUSIVE)
        self._reply_queue_name: bytes | None = as_bytes(od.ObjectName).strip()

    @property
    def command_queue_name(self) -> bytes:
        return self._command_queue_name

    @property
    def convert(self) -> bool:
        return self._convert

    @property
    def reply_queue(self) -> Queue | None:
        return self._reply_queue

    @property
    def reply_queue_name(self) -> bytes | None:
        return self._reply_queue_name

    @property
    def response_wait_interval(self) -> int:
        return self._response_wait_interval

    @property
    def is_connected(self) -> bool:
        """Whether commands can run: the connection is up and the reply queue open."""
        return self._reply_queue is not None and self.qm._client is not None and not self.qm._client.closed

    def __getattr__(self, name: str) -> Callable[..., list[dict[int, Any]]]:
        code = getattr(F, name, None) if name.startswith("MQCMD_") else None
        if not isinstance(code, int):
            raise AttributeError(name)

        def call(args: Mapping[int, Any] | Sequence[S.PCFStructure] | None = None,
                 filters: Sequence[Filter | S.PCFStructure] | None = None) -> list[dict[int, Any]]:
            return self.execute(code, args or {}, filters or ())

        return call

    def execute(self, command: int, args: Mapping[int, Any] | Sequence[S.PCFStructure],
                filters: Sequence[Filter | S.PCFStructure] = ()) -> list[dict[int, Any]]:
        """One command; one dict per response.

        Raises:
            MQMIError: a response's CompCode and Reason, or 2033 (MQRC_NO_MSG_AVAILABLE)
                when the command server did not answer within response_wait_interval.
            PYIFError: disconnected, or a parameter value PCF cannot carry.
        """
        if self._reply_queue is None or self._reply_queue_name is None:
            raise PYIFError("PCFExecute is disconnected")
        self.qm.get_handle()
        params = ([_parameter(int(k), v, self.bytes_encoding) for k, v in args.items()]
                  if isinstance(args, Mapping) else list(args))
        params += [f.structure() if isinstance(f, Filter) else f for f in filters]
        header = S.CFH(Version=F.MQCFH_VERSION_3, Command=command, Type=F.MQCFT_COMMAND_XR,
                       ParameterCount=len(params))
        message = header.pack() + b"".join(p.pack() for p in params)
        put_md = MD(Format=as_bytes(C.MQFMT_ADMIN), MsgType=C.MQMT_REQUEST, ReplyToQ=self._reply_queue_name,
                    Feedback=C.MQFB_NONE, Expiry=self._response_wait_interval // 100,
                    Report=C.MQRO_PASS_DISCARD_AND_EXPIRY | C.MQRO_DISCARD_MSG)
        self.qm.put1(self._command_queue_name, message, put_md, PMO(Options=C.MQPMO_NO_SYNCPOINT))
        options = C.MQGMO_NO_SYNCPOINT | C.MQGMO_FAIL_IF_QUIESCING | C.MQGMO_WAIT
        gmo = GMO(Options=options | (C.MQGMO_CONVERT if self._convert else 0), Version=C.MQGMO_VERSION_2,
                  MatchOptions=C.MQMO_MATCH_CORREL_ID, WaitInterval=self._response_wait_interval)
        get_md = MD(CorrelId=put_md.MsgId)
        out: list[dict[int, Any]] = []
        while True:
            reply = self._reply_queue.get(None, get_md, gmo)
            values, response = S.unpack(reply, _order(get_md.Encoding))
            out.append({k: self._out(v) for k, v in values.items()} if self._convert else values)
            if response.Control == F.MQCFC_LAST:
                return out

    def _out(self, value: Any) -> Any:
        # convert=True (a ferrymq extra beyond pymqi's MQGMO_CONVERT): character values as str.
        if isinstance(value, bytes):
            return value.decode(self.bytes_encoding, "replace")
        if isinstance(value, list):
            return [self._out(v) for v in value]
        return value

    @staticmethod
    def unpack(message: bytes) -> tuple[dict[int, Any], S.CFH]:
        """A PCF message (little-endian, as this machine writes it) as ``(dict, CFH)``.

        Raises:
            MQMIError: the header carries a failed CompCode.
        """
        return S.unpack(message)

    @staticmethod
    def stringify_keys(raw: Mapping[int, Any]) -> dict[int | str, Any]:
        """A copy of ``raw`` with each key replaced by its MQCA_/MQIA_ name where there is one."""
        names = _attribute_names()
        out: dict[int | str, Any] = {}
        for key, value in raw.items():
            if isinstance(value, str):
                raise TypeError(f'In Python 3 use bytes, not str (found "{key}":"{value}")')
            out[names[isinstance(value, bytes)].get(key, key)] = value
        return out

    stringifyKeys = stringify_keys

    def disconnect(self) -> None:
        """Close the reply queue (and the connection, when this object made it)."""
        queue, self._reply_queue, self._reply_queue_name = self._reply_queue, None, None
        try:
            if queue is not None and queue.get_handle():
                queue.close()
        except MQMIError:
            pass
        if self.qm is self and self._client is not None and self.disconnect_on_exit:
            QueueManager.disconnect(self)

    def __enter__(self) -> PCFExecute:
        return self

    def __exit__(self, *exc: object) -> None:
        self.disconnect()


_NAMES: list[dict[int, str]] = []


def _attribute_names() -> list[dict[int, str]]:
    """[MQIA_ names by value, MQCA_ names by value], built once."""
    if not _NAMES:
        for prefix in ("MQIA_", "MQCA_"):
            table: dict[int, str] = {}
            for name, value in vars(C).items():
                if name.startswith(prefix) and isinstance(value, int):
                    table.setdefault(value, name)
            _NAMES.append(table)
    return _NAMES
