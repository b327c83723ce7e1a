"""The two halves of a requester's start (CHLTYPE RQSTR), as IBM pairs them.

``request``, at the requester: connect to CONNAME and send REQUEST naming the channel;
the conversation then goes on with this end as the receiver (channels.receiver), once
the partner's HELLO arrives on it.

``refusal``, at the partner that took the connection: the reason a REQUEST is refused
(MQRCCF_UNKNOWN_REMOTE_CHANNEL when the channel is not defined there;
MQRCCF_CHANNEL_TYPE_ERROR when it is not a SVR or SDR, the only types a requester pairs
with; MQRCCF_CHANNEL_DISABLED when STOP CHANNEL left it stopped; MQRCCF_CHANNEL_IN_USE
when its sending end runs already; MQRC_CHANNEL_SSL_ERROR when its TLS rules refuse the
connection), else 0. A SVR then sends over this connection; a SDR calls back (its own
connection to its CONNAME), the requester's CLOSE with reason 0 saying so.
"""

from __future__ import annotations

import ssl

from ferrymq.channels import calltls
from ferrymq.channels.host import ChannelKeys
from ferrymq.channels.link import ChannelError, Link, open_link
from ferrymq.engine import chlattrs as K
from ferrymq.engine.channels import ChannelObject
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.protocol import channel as P
from ferrymq.tls import names, rules

TIMEOUT = 30.0  # seconds for the connection


async def request(chl: ChannelObject, qmgr: str, keys: ChannelKeys | None) -> tuple[Link, str]:
    """The requester's connection, REQUEST sent, and the partner's address.

    Raises:
        ChannelError: MQRCCF_HOST_NOT_AVAILABLE when no CONNAME address answers,
            MQRC_CHANNEL_SSL_ERROR when the TLS handshake fails or its peer is refused.
    """
    conname = chl.text("CONNAME")

    try:
        link, where = await open_link(conname, TIMEOUT, calltls.calling_context(chl, keys), calltls.peer_check(chl), sender=False)
    except ssl.SSLError as exc:
        raise ChannelError(C.MQRC_CHANNEL_SSL_ERROR, f"the TLS handshake with CONNAME({conname}) failed: {exc}") from None
    except (OSError, TimeoutError) as exc:
        raise ChannelError(F.MQRCCF_HOST_NOT_AVAILABLE,
                           f"no address of CONNAME({conname}) answered: {exc or 'timed out'}") from None
    link.write(P.Request(chl.name, qmgr))
    await link.flush()
    return link, where


def refusal(chl: ChannelObject | None, name: str, qmgr: str, *, stopped: bool, running: bool,
            tls_peer: names.TLSPeer | None) -> tuple[int, str]:
    """Why ``qmgr``'s requester may not start ``name`` here ((0, "") when it may)."""
    if chl is None:
        return F.MQRCCF_UNKNOWN_REMOTE_CHANNEL, f"channel {name} is not defined at the partner of {qmgr}'s requester"
    if chl.chltype not in K.SENDING:
        return F.MQRCCF_CHANNEL_TYPE_ERROR, (f"channel {name} is a {chl.chltype} here: a requester pairs with a "
                                             "SVR or SDR only")
    refused = rules.refusal(chl.name, chl.text("SSLCIPH"), chl.number("SSLCAUTH"), chl.text("SSLPEER"), tls_peer)
    if refused is not None:
        return C.MQRC_CHANNEL_SSL_ERROR, f"{refused[0]}: {refused[1]}"
    if stopped:
        return F.MQRCCF_CHANNEL_DISABLED, f"channel {name} is stopped"
    if running:
        return F.MQRCCF_CHANNEL_IN_USE, f"channel {name} is running already"
    return 0, ""
