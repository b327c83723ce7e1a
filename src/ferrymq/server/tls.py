"""TLS on the queue manager's side: its key repository, and the server-connection
channel's rules checked when a client's CONNECT names the channel.

``ServerTLS.context()`` is the listener's context, made from the queue manager's SSLKEYR
(blank: ``ssl/key`` in its data directory) and CERTLABL (blank: ``ibmwebspheremq`` and the
queue manager's name in lower case), made again when either attribute or file changes.

``channel_refusal`` applies the channel definition's TLS attributes, as IBM MQ does when a
channel starts (the channel a CONNECT names; a name that is not a SVRCONN channel is held to
SYSTEM.DEF.SVRCONN's rules):

- SSLCIPH blank: the connection must not use TLS; set: it must, with what the CipherSpec
  accepts (``cipherspecs.CipherSpec.accepts``);
- SSLCAUTH(REQUIRED): the client must have sent a certificate (the listener has already
  checked any certificate sent against the signer certificates);
- SSLPEER: the client certificate's subject must match the pattern.

A refusal is answered 2059 (MQRC_Q_MGR_NOT_AVAILABLE), what an IBM MQ client gets when the
queue manager ends the channel at start-up, with the rule in the detail and in the log.
"""

from __future__ import annotations

import ssl
from pathlib import Path

from ferrymq.engine import chlattrs as K
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import cfc as F
from ferrymq.server.chlgate import DEFAULT_SVRCONN
from ferrymq.tls import cipherspecs, names
from ferrymq.tls.keyrepo import ContextCache, KeyRepository, default_label
from ferrymq.tls.names import TLSPeer


class ServerTLS:
    """The TLS settings of one queue manager's server; ``data_dir`` holds the default key
    repository (``ssl/key``)."""

    def __init__(self, qmgr: QueueManager, data_dir: Path | str | None) -> None:
        self.qmgr = qmgr
        self.default_stem = str(Path(data_dir) / "ssl" / "key") if data_dir is not None else ""
        self._cache = ContextCache()

    def repository(self) -> KeyRepository:
        stem = str(self.qmgr.objects.qmgr_status("SSLKEYR")).strip() or self.default_stem
        return KeyRepository.at(stem)

    def label(self) -> str:
        return str(self.qmgr.objects.qmgr_status("CERTLABL")).strip() or default_label(self.qmgr.name)

    def context(self) -> ssl.SSLContext:
        """The listener's context.

        Raises:
            MQError: 2381 or 2393: no usable certificate in the key repository.
        """
        return self._cache.server(self.repository(), self.label())


def channel_refusal(qmgr: QueueManager, channel: str, peer: TLSPeer | None) -> tuple[str, str] | None:
    """(rule, why) when a client connection over ``peer`` (None: plain TCP) may not use
    server-connection channel ``channel``; None when it may."""
    chl = qmgr.state.channels.find(channel.strip() or DEFAULT_SVRCONN)
    if chl is None or chl.chltype != K.SVRCONN:
        chl = qmgr.state.channels.find(DEFAULT_SVRCONN)
    name = chl.name if chl is not None else DEFAULT_SVRCONN
    sslciph = chl.text("SSLCIPH").strip() if chl is not None else ""
    if not sslciph:
        if peer is not None:
            return "SSLCIPH", f"channel {name} does not use TLS (SSLCIPH is blank) but the client connected with TLS"
        return None
    if peer is None:
        return "SSLCIPH", f"channel {name} requires TLS (SSLCIPH({sslciph})) but the client connected without it"
    spec = cipherspecs.lookup(sslciph)
    if spec is None or not spec.accepts(peer.version, peer.suite):
        return "SSLCIPH", (f"channel {name} requires SSLCIPH({sslciph}); the client negotiated "
                           f"{peer.suite} over {peer.version}")
    assert chl is not None
    if not peer.dn and chl.number("SSLCAUTH") == F.MQSCA_REQUIRED:
        return "SSLCAUTH", f"channel {name} requires a client certificate (SSLCAUTH(REQUIRED)); none was sent"
    try:
        pattern = names.parse(chl.text("SSLPEER"))
    except names.PeerNameError as exc:  # a definition from before the rule: it protects nothing
        return "SSLPEER", f"channel {name}: {exc}"
    if pattern is not None and not pattern.matches(list(peer.pairs)):
        return "SSLPEER", (f"channel {name} accepts SSLPEER({chl.text('SSLPEER').strip()}); "
                           f"the client certificate is {peer.dn or 'absent'!r}")
    return None
