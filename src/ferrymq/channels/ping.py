"""PING CHANNEL, the sending end: connect to the channel's partner, send PING with data of
the length asked, and check that the PING_ACK brings the same data back.

Nothing moves from the transmission queue and nothing is journaled: it tests the
definition, the address, the network and the partner's definition (IBM's use of it). The
result is an MQRCCF_ reason (0: the ping completed) and a text for the reply.
"""

from __future__ import annotations

import os
import ssl

from ferrymq.channels import calltls
from ferrymq.channels.host import ChannelKeys
from ferrymq.channels.link import ChannelError, open_link
from ferrymq.engine.channels import ChannelObject
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.protocol import channel as P
from ferrymq.protocol.errors import RemoteProtocolError

TIMEOUT = 10.0  # seconds for the connection, and again for the answer (a PCF reply waits 30 s)


async def ping(chl: ChannelObject, qmgr: str, length: int, keys: ChannelKeys | None = None) -> tuple[int, str]:
    """(reason, detail): MQRCCF_HOST_NOT_AVAILABLE when no CONNAME address answers, the
    partner's reason when it refuses (MQRCCF_UNKNOWN_REMOTE_CHANNEL ...), MQRCCF_CONNECTION_CLOSED
    or MQRCCF_RECEIVE_FAILED when it ends the conversation or does not answer in time,
    MQRCCF_PING_DATA_COMPARE_ERROR when the data differs. A channel with SSLCIPH pings over
    TLS as its sender would run (``keys``: the queue manager's key repository), and any TLS
    failure at either end is MQRC_CHANNEL_SSL_ERROR (2371) with the rule in the detail."""
    data = os.urandom(length)
    conname = chl.text("CONNAME")

    try:
        link, where = await open_link(conname, TIMEOUT, calltls.calling_context(chl, keys), calltls.peer_check(chl))
    except ChannelError as exc:
        return exc.reason, str(exc)
    except ssl.SSLError as exc:
        return C.MQRC_CHANNEL_SSL_ERROR, f"the TLS handshake with CONNAME({conname}) failed: {exc}"
    except (OSError, TimeoutError) as exc:
        return F.MQRCCF_HOST_NOT_AVAILABLE, f"no address of CONNAME({conname}) answered: {exc or 'timed out'}"
    try:
        link.write(P.Ping(chl.name, qmgr, data))
        await link.flush()
        answer = await link.next_event(TIMEOUT)
    except TimeoutError:
        return F.MQRCCF_RECEIVE_FAILED, f"{where} did not answer the ping in {TIMEOUT:g} s"
    except (OSError, ChannelError, RemoteProtocolError) as exc:
        return F.MQRCCF_CONNECTION_CLOSED, f"{where} ended the conversation: {exc}"
    finally:
        link.close()
    if isinstance(answer, P.Close):
        return answer.reason or F.MQRCCF_CONNECTION_CLOSED, f"{where} closed the ping: {answer.text}"
    if not isinstance(answer, P.PingAck):
        return F.MQRCCF_RECEIVED_DATA_ERROR, f"{where} answered the ping with {type(answer).__name__}"
    if answer.reason:
        return answer.reason, f"{answer.qmgr or where} refused the ping of {chl.name}"
    if answer.data != data:
        return F.MQRCCF_PING_DATA_COMPARE_ERROR, f"{where} sent back other data than the ping's {length} bytes"
    return 0, f"ping of {chl.name} to {answer.qmgr} at {where} complete ({length} bytes)"
