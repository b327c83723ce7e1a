"""TLS at the calling end of a message channel (a sender, and PING CHANNEL): the context
its SSLCIPH asks for, and the receiver's handshake held to the channel's SSLCIPH and
SSLPEER (``tls.rules`` for the responding end's side)."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable

from ferrymq.channels.host import ChannelKeys
from ferrymq.channels.link import ChannelError
from ferrymq.engine.channels import ChannelObject
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.tls import cipherspecs, rules
from ferrymq.tls.names import TLSPeer, peer_of


def calling_context(chl: ChannelObject, keys: ChannelKeys | None) -> ssl.SSLContext | None:
    """The context of a channel with SSLCIPH (None: plain TCP).

    Raises:
        ChannelError: MQRC_CHANNEL_SSL_ERROR: no key repository, or no usable one.
    """
    sslciph = chl.text("SSLCIPH").strip()
    spec = cipherspecs.lookup(sslciph)
    if not sslciph or spec is None:
        return None
    if keys is None:
        raise ChannelError(C.MQRC_CHANNEL_SSL_ERROR, f"SSLCIPH({sslciph}) but this queue manager has no key repository")
    try:
        return keys.calling_context(spec, chl.text("CERTLABL").strip())
    except MQError as exc:
        raise ChannelError(C.MQRC_CHANNEL_SSL_ERROR, exc.detail) from None


def receiver_refusal(chl: ChannelObject, peer: TLSPeer) -> tuple[str, str] | None:
    """(rule, why) when the receiver's handshake does not satisfy the channel: the suite
    against a single CipherSpec, the certificate against SSLPEER; None when it does."""
    spec = cipherspecs.lookup(chl.text("SSLCIPH"))
    if spec is None or not spec.accepts(peer.version, peer.suite):
        return "SSLCIPH", f"SSLCIPH({chl.text('SSLCIPH').strip()}): the receiver negotiated {peer.suite} over {peer.version}"
    return rules.peer_refusal(chl.name, chl.text("SSLPEER"), peer)


def peer_check(chl: ChannelObject) -> Callable[[asyncio.WriteTransport], None]:
    """``open_link``'s check for a calling end that only answers (PING, a requester): the
    receiver's handshake against ``receiver_refusal``, the connection closed and
    ChannelError(MQRC_CHANNEL_SSL_ERROR) raised when it is refused."""
    def check(writer: asyncio.WriteTransport) -> None:
        refused = receiver_refusal(chl, peer_of(writer.get_extra_info("ssl_object")))
        if refused is not None:
            writer.close()
            raise ChannelError(C.MQRC_CHANNEL_SSL_ERROR, f"{refused[0]}: {refused[1]}")
    return check
