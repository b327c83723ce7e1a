"""The security exits' exchange (SCYEXIT) at the start of a channel, after HELLO/HELLO_ACK.

HELLO and HELLO_ACK say which ends have a security exit; without one at either end there
is no exchange. Each end that has one owns a phase, the receiving end's first (as IBM
calls the responder's exit first), then the sending end's. The owner's exit is called
with MQXR_INIT_SEC; then the ends take strict turns, each turn one SECURITY frame made
from its exit's answer to what the partner sent (MQXR_SEC_MSG):

| the exit answers                 | the frame             | the partner's turn                            |
|----------------------------------|-----------------------|-----------------------------------------------|
| MQXCC_SEND_AND_REQUEST_SEC_MSG   | SEC_REQUEST + data    | its exit must answer; without one: refused    |
| MQXCC_SEND_SEC_MSG               | SEC_SEND + data       | its exit sees it; without one: SEC_DONE       |
| MQXCC_OK, MQXCC_SUPPRESS_EXIT    | SEC_DONE              | its exit sees an empty message and may still refuse or go on |
| MQXCC_SUPPRESS_FUNCTION, _CLOSE_CHANNEL | CLOSE 2063 (MQRC_SECURITY_ERROR) | the channel ends                   |

The phase ends when a SEC_DONE answers a SEC_DONE: both exits accepted. A refusal by
either exit ends the channel with reason 2063 at both ends and the sending end STOPPED
(a retry would be refused the same way).
"""

from __future__ import annotations

from ferrymq.channels.exits import ChannelExit, ChannelExits, ExitClosed
from ferrymq.channels.link import ChannelError, Link
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.mq import cxc as X
from ferrymq.protocol import channel as P

REFUSED = C.MQRC_SECURITY_ERROR


class Refused(ExitClosed):
    """This end's security exit (or its absence) refused the channel: the partner is told."""


def _answer(ex: ChannelExit | None, reason: int, data: bytes, requested: bool) -> P.Security:
    if ex is None:
        if requested:
            raise Refused(REFUSED, "the partner's security exit asked for a reply and this end has no SCYEXIT")
        return P.Security(P.SEC_DONE)
    response = ex.call(reason, data)
    out, ex.parms.data = ex.parms.data, b""
    if response in (X.MQXCC_OK, X.MQXCC_SUPPRESS_EXIT):
        return P.Security(P.SEC_DONE)
    if response in (X.MQXCC_SEND_SEC_MSG, X.MQXCC_SEND_AND_REQUEST_SEC_MSG):
        step = P.SEC_SEND if response == X.MQXCC_SEND_SEC_MSG else P.SEC_REQUEST
        return P.Security(step, bytes(out))
    raise Refused(REFUSED, f"SCYEXIT({ex.name}) refused the channel (ExitResponse {response})")


async def _next(link: Link, timeout: float) -> P.Security:
    while True:
        ev = await link.next_event(timeout)
        if isinstance(ev, P.Security):
            return ev
        if isinstance(ev, P.Close):
            if ev.reason == REFUSED:
                raise ExitClosed(REFUSED, f"the partner refused the channel in the security exchange: {ev.text}")
            raise ChannelError(ev.reason or C.MQRC_CONNECTION_BROKEN, f"the partner closed the channel: {ev.text}")
        if not isinstance(ev, P.Heartbeat):
            raise ChannelError(F.MQRCCF_RECEIVED_DATA_ERROR, f"expected SECURITY, got {type(ev).__name__}")


async def _send(link: Link, step: P.Security) -> None:
    link.write(step)
    await link.flush()


async def _phase(link: Link, ex: ChannelExit | None, owner: bool, timeout: float) -> None:
    said_done = False
    if owner:
        first = _answer(ex, X.MQXR_INIT_SEC, b"", False)
        await _send(link, first)
        said_done = first.step == P.SEC_DONE
    while True:
        got = await _next(link, timeout)
        if got.step == P.SEC_DONE and said_done:
            return
        reply = _answer(ex, X.MQXR_SEC_MSG, got.data, got.step == P.SEC_REQUEST)
        await _send(link, reply)
        if reply.step == P.SEC_DONE and got.step == P.SEC_DONE:
            return
        said_done = reply.step == P.SEC_DONE


async def exchange(link: Link, exits: ChannelExits, *, receiver: bool, partner_has_exit: bool,
                   timeout: float) -> None:
    """Both phases (see the module docstring), from this end's side.

    Raises:
        ExitClosed: an exit refused (reason 2063), ExitFailed, ChannelError, TimeoutError.
    """
    ex = exits.get("SCYEXIT")
    mine = ex is not None
    receiver_has, sender_has = (mine, partner_has_exit) if receiver else (partner_has_exit, mine)
    try:
        for owner_is_receiver, has in ((True, receiver_has), (False, sender_has)):
            if has:
                await _phase(link, ex, owner_is_receiver == receiver, timeout)
    except Refused as exc:
        link.write(P.Close(REFUSED, str(exc)))
        await link.flush()
        raise
