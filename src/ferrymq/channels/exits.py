"""Channel exits: the Python callables a channel definition names, and how agents call them.

MSGEXIT, SENDEXIT, RCVEXIT and SCYEXIT hold ``module:function`` (MSGDATA ... the exit's
32 characters of user data); MSGEXIT, SENDEXIT and RCVEXIT may hold a list, a chain of
exits called in order (engine.chlattrs.exit_list; ``ChannelExits._run`` for where a chain
stops). Where a name may come from is the queue manager's rule, not Python's import path:

- a module of ferrymq's own exits (``BUILTIN_MODULES``: the reference-message exits) is
  always allowed, since it ships with the queue manager;
- any other module is a file under the queue manager's ExitPath (``exit_path`` in its
  config): ``a.b:f`` is ``<ExitPath>/a/b.py``, function ``f``. A name whose file resolves
  outside ExitPath (a symbolic link out of it), a world-writable file, or any name when no
  ExitPath is configured is refused with an ``ExitLoadError`` naming the rule; the channel
  then does not start.

Each exit gets one ``ChannelExitParms`` (IBM's MQCXP) for the life of a channel instance:
ExitId, ExitReason (MQXR_INIT, MQXR_MSG, MQXR_XMIT, MQXR_INIT_SEC, MQXR_SEC_MSG,
MQXR_TERM, MQXR_RETRY), ExitResponse, ExitResponse2, Feedback, ExitUserArea (kept between calls; it
starts as 16 zero bytes and the exit may put any object there), ExitData, the channel
definition, and ``data``: the agent's buffer, which the exit may replace. The exit returns
an MQXCC_* value (or None and sets ``exit_response``); a value the call does not allow, or
an exception, is an ``ExitFailed``: the agent stops the channel (its unit of work backs
out, so no message is lost) and says why in its log and status.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import re
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ferrymq.channels.link import ChannelError
from ferrymq.engine import chlattrs as K
from ferrymq.engine.channels import ChannelObject
from ferrymq.mq import constants as C
from ferrymq.mq import cxc as X
from ferrymq.protocol.channel import ChannelConnection

log = logging.getLogger("ferrymq.channels")

# ferrymq's own exit modules: always allowed, whatever ExitPath says.
BUILTIN_MODULES = frozenset({"ferrymq.channels.refexits"})
_NAME = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*)", re.ASCII)
# The nearest reasons IBM has for a channel exit that cannot be loaded or fails.
LOAD_ERROR = C.MQRC_CLIENT_EXIT_LOAD_ERROR
EXIT_ERROR = C.MQRC_CLIENT_EXIT_ERROR

# The attribute pairs of each kind of exit, and its ExitId.
KINDS = {"MSGEXIT": ("MSGDATA", X.MQXT_CHANNEL_MSG_EXIT), "SENDEXIT": ("SENDDATA", X.MQXT_CHANNEL_SEND_EXIT),
         "RCVEXIT": ("RCVDATA", X.MQXT_CHANNEL_RCV_EXIT), "SCYEXIT": ("SCYDATA", X.MQXT_CHANNEL_SEC_EXIT),
         "MREXIT": ("MRDATA", X.MQXT_CHANNEL_MSG_RETRY_EXIT)}

# The responses each call may give (IBM's MQCXP ExitResponse rules); MQXCC_SUPPRESS_EXIT
# is allowed everywhere but TERM and means "do not call me again in this instance".
_ANY_CALL = frozenset({X.MQXCC_OK, X.MQXCC_SUPPRESS_EXIT, X.MQXCC_CLOSE_CHANNEL})
_SECURITY = frozenset({X.MQXCC_OK, X.MQXCC_SUPPRESS_FUNCTION, X.MQXCC_SEND_SEC_MSG,
                       X.MQXCC_SEND_AND_REQUEST_SEC_MSG, X.MQXCC_CLOSE_CHANNEL, X.MQXCC_SUPPRESS_EXIT})
ALLOWED: dict[tuple[int, int], frozenset[int]] = {
    (X.MQXT_CHANNEL_MSG_EXIT, X.MQXR_MSG): _ANY_CALL | {X.MQXCC_SUPPRESS_FUNCTION},
    (X.MQXT_CHANNEL_SEND_EXIT, X.MQXR_XMIT): _ANY_CALL,
    (X.MQXT_CHANNEL_RCV_EXIT, X.MQXR_XMIT): _ANY_CALL,
    (X.MQXT_CHANNEL_SEC_EXIT, X.MQXR_INIT_SEC): _SECURITY,
    (X.MQXT_CHANNEL_SEC_EXIT, X.MQXR_SEC_MSG): _SECURITY,
    # the message-retry exit: wait MsgRetryInterval and try again, or stop trying
    (X.MQXT_CHANNEL_MSG_RETRY_EXIT, X.MQXR_RETRY): frozenset({X.MQXCC_OK, X.MQXCC_SUPPRESS_FUNCTION,
                                                             X.MQXCC_SUPPRESS_EXIT}),
}


class ExitFailed(ChannelError):
    """An exit raised, answered what its call does not allow, or left ``data`` unusable:
    the channel stops (no retry) until the exit is mended and the channel started."""


class ExitLoadError(ExitFailed):
    """An exit name that does not load (see the module docstring for the rules)."""


class ExitClosed(ChannelError):
    """An exit answered MQXCC_CLOSE_CHANNEL: the channel ends, its batch backs out."""


@dataclass(frozen=True, slots=True)
class ExitSettings:
    """What the queue manager's config gives exits: where user exits may be loaded from,
    and the directory the reference-message exits read and write bulk data under."""

    qmgr_name: str = ""
    exit_path: Path | None = None
    bulk_data_dir: Path | None = None


ExitFunction = Callable[["ChannelExitParms"], int | None]


@dataclass(slots=True)
class ChannelExitParms:
    """IBM's MQCXP for one exit of one channel instance (see the module docstring).
    ``requeue`` is set for a sending channel's message exit: it puts a message (data in
    transmission-queue form, MQXQH first, with the current message's descriptor) on the
    transmission queue inside the batch's unit of work, as an IBM exit does with MQPUT on
    the agent's connection."""

    exit_id: int
    exit_data: str
    channel: ChannelObject
    settings: ExitSettings
    exit_reason: int = X.MQXR_INIT
    exit_response: int = X.MQXCC_OK
    exit_response2: int = X.MQXR2_DEFAULT_CONTINUATION
    feedback: int = C.MQFB_NONE
    exit_user_area: Any = field(default_factory=lambda: bytearray(X.MQXUA_NONE))
    partner_name: str = ""
    max_msg_length: int = 0
    data: bytes = b""
    requeue: Callable[[bytes], None] | None = None
    # The message-retry exit's (MREXIT) MQCXP fields: the failed put's reason, how many times
    # the exit was called for this message, and the wait (ms) it asks for before the next try.
    msg_retry_count: int = 0
    msg_retry_interval: int = 0
    msg_retry_reason: int = C.MQRC_NONE

    @property
    def channel_name(self) -> str:
        return self.channel.name

    @property
    def channel_type(self) -> int:
        """MQCHT_SENDER, MQCHT_RECEIVER ..."""
        return K.CHLTYPES[self.channel.chltype]

    @property
    def sending(self) -> bool:
        """True at the sending end of a message channel (SDR, SVR)."""
        return self.channel.chltype in K.SENDING


# -- loading ----------------------------------------------------------------------------------
_loaded: dict[tuple[Path, int], ModuleType] = {}


def _user_module(module: str, exit_path: Path | None, name: str) -> ModuleType:
    if exit_path is None:
        raise ExitLoadError(LOAD_ERROR, f"exit {name!r}: no ExitPath is configured for this queue manager, so only "
                                        f"ferrymq's own exits ({', '.join(sorted(BUILTIN_MODULES))}) may be named")
    root = exit_path.resolve()
    file = root.joinpath(*module.split(".")).with_suffix(".py")
    real = file.resolve()
    if not real.is_relative_to(root):
        raise ExitLoadError(LOAD_ERROR, f"exit {name!r}: {file} resolves to {real}, outside ExitPath {root}")
    try:
        st = real.stat()
    except OSError:
        raise ExitLoadError(LOAD_ERROR, f"exit {name!r}: no file {file} under ExitPath {root}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ExitLoadError(LOAD_ERROR, f"exit {name!r}: {real} is not a regular file")
    if st.st_mode & stat.S_IWOTH:
        raise ExitLoadError(LOAD_ERROR, f"exit {name!r}: {real} is writable by every user (mode "
                                        f"{stat.S_IMODE(st.st_mode):o}); an exit runs inside the queue manager")
    key = (real, st.st_mtime_ns)
    cached = _loaded.get(key)
    if cached is not None:
        return cached
    spec = importlib.util.spec_from_file_location(f"_ferrymq_exits.{module}", real)
    if spec is None or spec.loader is None:
        raise ExitLoadError(LOAD_ERROR, f"exit {name!r}: {real} cannot be loaded as Python")
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:  # the exit's own code: any failure is its load error
        raise ExitLoadError(LOAD_ERROR, f"exit {name!r}: loading {real} raised {type(exc).__name__}: {exc}") from exc
    _loaded[key] = mod
    return mod


def load_exit(name: str, exit_path: Path | None) -> ExitFunction:
    """The callable named ``module:function`` (see the module docstring for the rules).

    Raises:
        ExitLoadError: a malformed name, no ExitPath, a file outside it or missing, a module
            that raises while loading, no such callable.
    """
    name = name.strip()
    m = _NAME.fullmatch(name)
    if m is None:
        raise ExitLoadError(LOAD_ERROR, f"exit {name!r} is not module:function (Python identifiers)")
    module, function = m.group(1), m.group(2)
    if module in BUILTIN_MODULES:
        mod = sys.modules.get(module) or importlib.import_module(module)
    elif module == "ferrymq" or module.startswith("ferrymq."):
        raise ExitLoadError(LOAD_ERROR, f"exit {name!r}: {module} is not one of ferrymq's exit modules "
                                        f"({', '.join(sorted(BUILTIN_MODULES))})")
    else:
        mod = _user_module(module, exit_path, name)
    fn = getattr(mod, function, None)
    if not callable(fn):
        raise ExitLoadError(LOAD_ERROR, f"exit {name!r}: {module} has no callable {function}")
    return fn  # type: ignore[no-any-return]


# -- calling ----------------------------------------------------------------------------------
class ChannelExit:
    """One loaded exit and its MQCXP (see the module docstring)."""

    def __init__(self, kind: str, name: str, fn: ExitFunction, parms: ChannelExitParms) -> None:
        self.kind, self.name, self.fn, self.parms = kind, name, fn, parms
        self.suppressed = False

    def call(self, reason: int, data: bytes = b"") -> int:
        """Call the exit for ``reason`` with ``data`` in its buffer; its ExitResponse (the
        new buffer is ``parms.data``). A suppressed exit is not called: MQXCC_OK.

        Raises:
            ExitFailed: it raised, or answered what ``reason`` does not allow.
        """
        p = self.parms
        if self.suppressed:
            p.data = data
            return X.MQXCC_OK
        p.exit_reason, p.exit_response, p.exit_response2 = reason, X.MQXCC_OK, X.MQXR2_DEFAULT_CONTINUATION
        p.feedback, p.data = C.MQFB_NONE, data
        try:
            result = self.fn(p)
        except Exception as exc:  # the exit's defect, reported as the channel's error
            raise ExitFailed(EXIT_ERROR, f"{self.kind}({self.name}) raised {type(exc).__name__}: {exc} "
                                         f"(ExitReason {reason})") from exc
        if result is not None:
            if not isinstance(result, int) or isinstance(result, bool):
                raise ExitFailed(EXIT_ERROR, f"{self.kind}({self.name}) returned {result!r}, not an MQXCC_ value")
            p.exit_response = result
        if not isinstance(p.data, bytes | bytearray | memoryview):
            raise ExitFailed(EXIT_ERROR, f"{self.kind}({self.name}) left data as {type(p.data).__name__}, not bytes")
        response = p.exit_response
        if reason == X.MQXR_TERM:
            return X.MQXCC_OK
        allowed = ALLOWED.get((p.exit_id, reason), _ANY_CALL)
        if response not in allowed:
            raise ExitFailed(EXIT_ERROR, f"{self.kind}({self.name}) answered ExitResponse {response}, which "
                                         f"ExitReason {reason} does not allow (allowed: {sorted(allowed)})")
        if response == X.MQXCC_SUPPRESS_EXIT:
            self.suppressed = True
        return response


class ChannelExits:
    """The exits of one channel instance, by MQSC keyword (MSGEXIT ...): for each kind the
    chain of exits in calling order (several message, send and receive exits; one
    security and one message-retry exit)."""

    def __init__(self, exits: dict[str, list[ChannelExit]]) -> None:
        self.chains = exits
        self.started = False  # MQXR_INIT was given: MQXR_TERM is owed

    @classmethod
    def load(cls, chl: ChannelObject, settings: ExitSettings) -> ChannelExits:
        """The exits ``chl`` names.

        Raises:
            ExitLoadError: one of them does not load.
        """
        out: dict[str, list[ChannelExit]] = {}
        for kind, (data_attr, exit_id) in KINDS.items():
            if kind in K.EXIT_LISTS:
                chain = K.exit_list(chl.items(kind), chl.items(data_attr))
            else:
                name = chl.text(kind).strip()
                chain = [(name, chl.text(data_attr))] * bool(name)
            if chain:
                out[kind] = [ChannelExit(kind, name, load_exit(name, settings.exit_path),
                                         ChannelExitParms(exit_id, exit_data, chl, settings))
                             for name, exit_data in chain]
        return cls(out)

    def get(self, kind: str) -> ChannelExit | None:
        """The first exit of ``kind`` (the only one, but for MSGEXIT, SENDEXIT, RCVEXIT)."""
        chain = self.chains.get(kind)
        return chain[0] if chain else None

    def _every(self) -> list[ChannelExit]:
        return [ex for chain in self.chains.values() for ex in chain]

    def init(self, partner: str, max_msg_length: int) -> None:
        """MQXR_INIT to every exit once the partner and MAXMSGL are known.

        Raises:
            ExitFailed; ExitClosed when one answers MQXCC_CLOSE_CHANNEL.
        """
        self.started = True
        for ex in self._every():
            ex.parms.partner_name, ex.parms.max_msg_length = partner, max_msg_length
            if ex.call(X.MQXR_INIT) == X.MQXCC_CLOSE_CHANNEL:
                raise ExitClosed(EXIT_ERROR, f"{ex.kind}({ex.name}) closed the channel at MQXR_INIT")

    def term(self) -> None:
        """MQXR_TERM to every exit that was initialised; a failure here is only logged."""
        if not self.started:
            return
        self.started = False
        for ex in self._every():
            try:
                ex.call(X.MQXR_TERM)
            except ExitFailed as exc:
                log.error("event=channel_exit_failed channel=%s reason=%d error=%s", ex.parms.channel_name,
                          exc.reason, exc)

    def transmission(self, kind: str) -> Callable[[bytes], bytes] | None:
        """SENDEXIT or RCVEXIT as the channel machine's outbound or inbound transform: the
        exits get each frame's payload (MQXR_XMIT) in turn, each the one the previous
        returned, and the last one's is the payload to go on with.

        The transform raises ExitFailed, or ExitClosed for MQXCC_CLOSE_CHANNEL."""
        chain = self.chains.get(kind)
        if not chain:
            return None

        def through(payload: bytes) -> bytes:
            return self._run(chain, X.MQXR_XMIT, payload)[2]
        return through

    def attach(self, conn: ChannelConnection) -> None:
        """Put SENDEXIT and RCVEXIT between ``conn`` and the network (after the handshake)."""
        conn.outbound, conn.inbound = self.transmission("SENDEXIT"), self.transmission("RCVEXIT")

    def retries(self) -> bool:
        """Whether a message-retry exit (MREXIT) decides the retries of a failed put (IBM:
        then MRRTY and MRTMR do not, and every reason is offered to it)."""
        ex = self.get("MREXIT")
        return ex is not None and not ex.suppressed

    def retry(self, data: bytes, count: int, reason: int, interval: int) -> int | None:
        """MREXIT for a put that failed (``data``: MQXQH and message; ``count``: this
        message's calls so far, this one included; ``interval``: MRTMR as the exit's
        default): the milliseconds to wait before trying again, or None to stop trying
        (MQXCC_SUPPRESS_FUNCTION, or MQXCC_SUPPRESS_EXIT: then never called again).

        Raises:
            ExitFailed: as any exit call, or a MsgRetryInterval outside 0..999999999.
        """
        ex = self.chains["MREXIT"][0]
        p = ex.parms
        p.msg_retry_count, p.msg_retry_reason, p.msg_retry_interval = count, reason, interval
        try:
            response = ex.call(X.MQXR_RETRY, data)
        finally:
            p.data = b""  # not kept between messages: memory stays bounded
        if response != X.MQXCC_OK:
            return None
        wait = p.msg_retry_interval
        if not isinstance(wait, int) or isinstance(wait, bool) or not 0 <= wait <= 999_999_999:
            raise ExitFailed(EXIT_ERROR, f"{ex.kind}({ex.name}) set MsgRetryInterval {wait!r}, not 0..999999999 ms")
        return wait

    def message(self, data: bytes, requeue: Callable[[bytes], None] | None = None) -> tuple[int, bytes, int]:
        """MSGEXIT for one message, through the chain: its ExitResponse, the data to go on
        with, and the Feedback to dead-letter it with (MQFB_STOPPED_BY_MSG_EXIT when the
        exit that suppressed it left none).

        Raises:
            ExitFailed.
        """
        chain = self.chains.get("MSGEXIT")
        if not chain:
            return X.MQXCC_OK, data, C.MQFB_NONE
        for ex in chain:
            ex.parms.requeue = requeue
        try:
            response, last, out = self._run(chain, X.MQXR_MSG, data, closing=False)
        finally:
            for ex in chain:
                ex.parms.requeue = None
        return response, out, last.parms.feedback or C.MQFB_STOPPED_BY_MSG_EXIT

    @staticmethod
    def _run(chain: list[ChannelExit], reason: int, data: bytes, *,
             closing: bool = True) -> tuple[int, ChannelExit, bytes]:
        """Call ``chain`` in order, each exit given the data the one before it returned, as
        IBM's chains run (MQCXP ExitResponse2): under MQXR2_DEFAULT_CONTINUATION an exit
        answering MQXCC_SUPPRESS_FUNCTION or MQXCC_CLOSE_CHANNEL is the last called;
        MQXR2_SUPPRESS_CHAIN ends the chain after this exit, MQXR2_CONTINUE_CHAIN goes on
        even after MQXCC_SUPPRESS_FUNCTION. The outcome: the ExitResponse of the exit that
        decided it (a suppressing one, else the last called), that exit (its Feedback), and
        the data to go on with. The buffer is not kept between calls: memory stays bounded.

        Raises:
            ExitFailed; ExitClosed when one answers MQXCC_CLOSE_CHANNEL and ``closing``.
        """
        suppressed: tuple[int, ChannelExit] | None = None
        response, ex = X.MQXCC_OK, chain[0]
        for ex in chain:
            response = ex.call(reason, data)
            out, ex.parms.data = ex.parms.data, b""
            data = out if isinstance(out, bytes) else bytes(out)
            if response == X.MQXCC_CLOSE_CHANNEL:
                if closing:
                    raise ExitClosed(0, f"{ex.kind}({ex.name}) closed the channel (MQXCC_CLOSE_CHANNEL)")
                return response, ex, data
            if response == X.MQXCC_SUPPRESS_FUNCTION:
                suppressed = response, ex
            flow = ex.parms.exit_response2 if not ex.suppressed else X.MQXR2_DEFAULT_CONTINUATION
            if flow & X.MQXR2_SUPPRESS_CHAIN or (response == X.MQXCC_SUPPRESS_FUNCTION
                                                 and not flow & X.MQXR2_CONTINUE_CHAIN):
                break
        return (*suppressed, data) if suppressed is not None else (response, ex, data)
