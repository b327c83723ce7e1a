"""pymqi's ``MessageHandle``: MQCRTMH, MQSETMP, MQINQMP, MQDLTMP and MQDLTMH (and, as
ferrymq extras, MQMHBUF and MQBUFMH).

Message handles live in the application's process (see ferrymq.properties.handle): the
integer ``msg_handle`` goes into ``GMO.MsgHandle`` or ``PMO.NewMsgHandle`` /
``PMO.OriginalMsgHandle``, and the properties travel with the MQPUT and MQGET that name it.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.properties.buffers import Buffer, BufferTooSmall, buffer_to_handle, handle_to_buffer
from ferrymq.properties.handle import MessageHandleState, ValueTooBig, md_fields_of
from ferrymq.properties.model import Descriptor, PropertySet
from ferrymq.pymqi.errors import MQMIError
from ferrymq.pymqi.structs import CMHO, DMHO, DMPO, IMPO, MD, PD, SMPO, as_bytes

_lock = threading.Lock()
_handles: dict[int, MessageHandleState] = {}
_ids = itertools.count(1)


def state_of(hmsg: int) -> MessageHandleState:
    """The handle behind an MQHMSG value.

    Raises:
        MQMIError: MQRC_HMSG_ERROR — not a handle MQCRTMH returned, or one deleted since.
    """
    with _lock:
        st = _handles.get(hmsg)
    if st is None:
        raise MQMIError(C.MQCC_FAILED, C.MQRC_HMSG_ERROR, detail=f"{hmsg} is not a message handle")
    return st


def outgoing(pmo: Any) -> PropertySet | None:
    """The properties an MQPUT carries: PMO OriginalMsgHandle's, then NewMsgHandle's over them.

    Raises:
        MQMIError: MQRC_HMSG_ERROR for a handle that does not exist.
    """
    if getattr(pmo, "Version", 1) < C.MQPMO_VERSION_3:
        return None
    out = PropertySet()
    for hmsg in (pmo.OriginalMsgHandle, pmo.NewMsgHandle):
        if hmsg != C.MQHM_NONE:
            st = state_of(hmsg)
            out.update_from(st.outgoing())
            st.forget_cursor()
    return out or None


def incoming(gmo: Any) -> MessageHandleState | None:
    """The handle an MQGET fills (GMO version 4 MsgHandle), if any.

    Raises:
        MQMIError: MQRC_HMSG_ERROR for a handle that does not exist.
    """
    if getattr(gmo, "Version", 1) < C.MQGMO_VERSION_4 or gmo.MsgHandle == C.MQHM_NONE:
        return None
    return state_of(gmo.MsgHandle)


def fill(st: MessageHandleState, props: PropertySet | None, md: Any) -> None:
    st.received(props, md_fields_of(md))


def _name(name: str | bytes) -> str:
    return name.decode("utf-8") if isinstance(name, (bytes, bytearray)) else name


def _mqmi(exc: MQError, **extra: Any) -> MQMIError:
    return MQMIError(exc.comp, exc.reason, detail=exc.detail, **extra)


class MessageHandle:
    """A message handle: ``properties`` sets, inquires and deletes its message properties."""

    class _Properties:
        """The properties of one message handle, pymqi style."""

        def __init__(self, conn_handle: int, msg_handle: int) -> None:
            self.conn_handle = conn_handle
            self.msg_handle = msg_handle
            # MQINQMP's Value area: a longer value fails with MQRC_PROPERTY_VALUE_TOO_BIG and
            # the length it needs in the error's data_length, as in pymqi.
            self.default_value_length = 64

        def __getitem__(self, name: str | bytes) -> Any:
            try:
                return self.get(name)
            except MQMIError as exc:
                if exc.reason == C.MQRC_PROPERTY_NOT_AVAILABLE:
                    raise KeyError(f"No such property [{_name(name)}]") from None
                raise

        def __setitem__(self, name: str | bytes, value: Any) -> None:
            self.set(name, value)

        def get(self, name: str | bytes, default: Any = None, max_value_length: int | None = None,
                impo_options: int = C.MQIMPO_INQ_FIRST, impo: IMPO | None = None, pd: PD | int | None = None,
                property_type: int = C.MQTYPE_AS_SET) -> Any:
            """MQINQMP: the value, or ``(value, returned_name)`` when ``name`` has a wildcard.

            Raises:
                MQMIError: e.g. 2471 (MQRC_PROPERTY_NOT_AVAILABLE) with ``value=default``,
                    2469 (MQRC_PROPERTY_VALUE_TOO_BIG, MQCC_WARNING) with ``data_length`` and
                    the truncated ``value``; the property is then under the cursor.
            """
            st = state_of(self.msg_handle)
            if impo is not None and not isinstance(impo, IMPO):
                raise TypeError("impo must be an instance of IMPO")
            options = impo.Options if impo is not None else impo_options | C.MQIMPO_CONVERT_VALUE
            text = _name(name)
            try:
                got = st.inquire(text, options, property_type, max_value_length or self.default_value_length)
            except ValueTooBig as exc:  # a warning: the value truncated, the property under the cursor
                raise _mqmi(exc, value=exc.inquired.value, data_length=exc.data_length) from None
            except MQError as exc:
                raise _mqmi(exc, value=default, data_length=0) from None
            if isinstance(pd, PD):
                pd.Support, pd.Context, pd.CopyOptions = got.pd.support, got.pd.context, got.pd.copy_options
            if impo is not None:
                impo.set_vs("ReturnedName", got.name.encode("utf-8"))
            if "%" in text:
                return got.value, got.name.encode("utf-8")
            return got.value

        def set(self, name: str | bytes, value: Any, property_type: int = C.MQTYPE_STRING,
                value_length: int = C.MQVL_NULL_TERMINATED, pd: PD | None = None, smpo: SMPO | None = None) -> None:
            """MQSETMP (a ``str`` value is a string property unless ``property_type`` says otherwise).

            Raises:
                MQMIError: e.g. 2442 (MQRC_PROPERTY_NAME_ERROR), 2473 (MQRC_PROPERTY_TYPE_ERROR).
            """
            st = state_of(self.msg_handle)
            if property_type == C.MQTYPE_STRING and isinstance(value, (bytes, bytearray)):
                value = bytes(value).split(b"\0", 1)[0].decode("utf-8") if value_length < 0 else \
                    bytes(value[:value_length]).decode("utf-8")
            elif property_type == C.MQTYPE_STRING and isinstance(value, str) and value_length >= 0:
                value = value[:value_length]
            elif property_type == C.MQTYPE_BYTE_STRING and isinstance(value, (bytes, bytearray)) and value_length >= 0:
                value = bytes(value[:value_length])
            if pd is not None and (pd.StrucId != b"PD  " or pd.Version != C.MQPD_VERSION_1):
                raise MQMIError(C.MQCC_FAILED, C.MQRC_PD_ERROR, detail="MQPD StrucId or Version is not valid")
            descriptor = Descriptor() if pd is None else Descriptor(pd.Support, pd.Context, pd.CopyOptions)
            try:
                st.set(_name(name), value, property_type, descriptor,
                       C.MQSMPO_SET_FIRST if smpo is None else smpo.Options)
            except MQError as exc:
                raise _mqmi(exc) from None

        def dlt(self, name: str | bytes, dmpo: DMPO | None = None) -> None:
            """MQDLTMP.

            Raises:
                MQMIError: 2471 (MQRC_PROPERTY_NOT_AVAILABLE, a warning) when there was no such property.
            """
            st = state_of(self.msg_handle)
            try:
                warning = st.delete(_name(name), C.MQDMPO_DEL_FIRST if dmpo is None else dmpo.Options)
            except MQError as exc:
                raise _mqmi(exc) from None
            if warning is not None:
                raise _mqmi(warning)

        def items(self) -> list[tuple[str, Any]]:
            """Every property as (name, value), in the order they were set (a ferrymq extra)."""
            return list(state_of(self.msg_handle).props.items())

    def __init__(self, qmgr: Any = None, cmho: CMHO | None = None) -> None:
        """MQCRTMH.

        Raises:
            MQMIError: 2461 (MQRC_CMHO_ERROR) for options that are not valid.
        """
        self.conn_handle = qmgr.get_handle() if qmgr is not None else C.MQHC_UNASSOCIATED_HCONN
        cmho = cmho if cmho is not None else CMHO()
        try:
            st = MessageHandleState(cmho.Options)
        except MQError as exc:
            raise _mqmi(exc) from None
        with _lock:
            self.msg_handle = next(_ids)
            _handles[self.msg_handle] = st
        self.properties = self._Properties(self.conn_handle, self.msg_handle)

    def dlt(self, dmho: DMHO | None = None) -> None:
        """MQDLTMH: the handle cannot be used afterwards (MQRC_HMSG_ERROR).

        Raises:
            MQMIError: 2462 (MQRC_DMHO_ERROR), 2460 (MQRC_HMSG_ERROR).
        """
        dmho = dmho if dmho is not None else DMHO()
        if dmho.Options != C.MQDMHO_NONE:
            raise MQMIError(C.MQCC_FAILED, C.MQRC_DMHO_ERROR, detail=f"MQDMHO Options {dmho.Options} is not valid")
        with _lock:
            if _handles.pop(self.msg_handle, None) is None:
                raise MQMIError(C.MQCC_FAILED, C.MQRC_HMSG_ERROR, detail="the message handle was deleted already")
        self.properties = self._Properties(C.MQHC_UNUSABLE_HCONN, C.MQHM_UNUSABLE_HMSG)

    def get_handle(self) -> int:
        return self.msg_handle

    def mhbuf(self, name: str | bytes = "%", md: MD | None = None,
              options: int = C.MQMHBO_PROPERTIES_IN_MQRFH2, buffer_length: int = 1 << 20) -> bytes:
        """MQMHBUF (a ferrymq extra: pymqi has none): the properties matching ``name`` as an
        MQRFH2. ``md`` (Format, Encoding, CodedCharSetId) describes what the header is to
        announce, and on return describes the buffer (Format MQHRF2).

        Raises:
            MQMIError: 2046 (MQRC_OPTIONS_ERROR), 2442/2513 (a bad name), 2471
                (MQRC_PROPERTY_NOT_AVAILABLE), 2469 (MQRC_PROPERTY_VALUE_TOO_BIG) with
                ``data_length``.
        """
        md = md if md is not None else MD()
        try:
            out = handle_to_buffer(state_of(self.msg_handle), _name(name), options, _described(md, b""),
                                   buffer_length)
        except BufferTooSmall as exc:
            raise _mqmi(exc, data_length=exc.data_length) from None
        except MQError as exc:
            raise _mqmi(exc) from None
        _describe(md, out)
        return out.data

    def bufmh(self, buffer: bytes, md: MD | None = None, options: int = C.MQBMHO_DELETE_PROPERTIES) -> bytes:
        """MQBUFMH (a ferrymq extra): the MQRFH2 property folders at the start of ``buffer``
        (``md`` says its Format, Encoding, CodedCharSetId) become the handle's properties;
        returns the buffer, without them when ``options`` has MQBMHO_DELETE_PROPERTIES, and
        updates ``md`` to describe it.

        Raises:
            MQMIError: 2046 (MQRC_OPTIONS_ERROR), 2334 (MQRC_RFH_ERROR), 2421 (MQRC_RFH_FORMAT_ERROR).
        """
        md = md if md is not None else MD(Format=as_bytes(C.MQFMT_RF_HEADER_2))
        try:
            out = buffer_to_handle(state_of(self.msg_handle), options, _described(md, bytes(buffer)))
        except MQError as exc:
            raise _mqmi(exc) from None
        _describe(md, out)
        return out.data


def _described(md: MD, data: bytes) -> Buffer:
    fmt = md.Format.decode("ascii", "replace") if isinstance(md.Format, bytes) else str(md.Format)
    return Buffer(data, fmt.ljust(8), md.Encoding, md.CodedCharSetId)


def _describe(md: MD, out: Buffer) -> None:
    md.Format, md.Encoding, md.CodedCharSetId = as_bytes(out.format.ljust(8)), out.encoding, out.coded_char_set_id
