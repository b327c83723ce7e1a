"""TLS on the queue manager's side: its key repository, and the server-connection
channel's rules checked when a client's CONNECT names the channel.

``ServerTLS.context()`` is the listener's context, made from the queue manager's SSLKEYR
(blank: ``ssl/key`` in its data directory) and CERTLABL (blank: ``ibmwebspheremq`` and the
queue manager's name in lower case), made again when either attribute or file changes.

``channel_refusal`` applies the channel definition's TLS attributes (``tls.rules``: SSLCIPH,
SSLCAUTH, SSLPEER), as IBM MQ does when a channel starts, to the channel a CONNECT names (a
name that is not a SVRCONN channel is held to SYSTEM.DEF.SVRCONN's rules).

A refusal is answered 2059 (MQRC_Q_MGR_NOT_AVAILABLE), what an IBM MQ client gets when the
queue manager ends the channel at start-up, with the rule in the detail and in the log.
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

from ferrymq.engine.channels import ChannelObject
from ferrymq.engine.qmgr import QueueManager
from ferrymq.tls import ocsp, rules
from ferrymq.tls.cipherspecs import CipherSpec
from ferrymq.tls.keyrepo import ContextCache, KeyRepository, default_label
from ferrymq.tls.names import TLSPeer
from ferrymq.tls.ocsp import OCSPPolicy


class ServerTLS:
    """The TLS settings of one queue manager's server; ``data_dir`` holds the default key
    repository (``ssl/key``)."""

    def __init__(self, qmgr: QueueManager, data_dir: Path | str | None, ocsp: OCSPPolicy | None = None) -> None:
        """``ocsp``: IBM's SSL stanza settings for OCSP (default: IBM's, OCSPCheckExtensions
        YES and OCSPAuthentication REQUIRED)."""
        self.qmgr = qmgr
        self.ocsp = ocsp or OCSPPolicy()
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

    def calling_context(self, spec: CipherSpec, label: str = "") -> ssl.SSLContext:
        """A sender channel's context: ``spec`` offered, the queue manager's certificate (or
        ``label``'s) presented when the repository has it.

        Raises:
            MQError: 2381: no signer certificates, a file that does not load.
        """
        return self._cache.client(self.repository(), label or self.label(), spec, label_required=False)

    async def revocation(self, agreed: ssl.SSLObject) -> ocsp.Outcome | None:
        """The partner certificate's revocation status by OCSP, when it names a responder and
        the queue manager's OCSPCheckExtensions is YES (the look-up on a thread, bounded):
        None to let it on without a word, else what to do (``ocsp.outcome``)."""
        return await _revocation(self, agreed)


async def _revocation(tls: ServerTLS, agreed: ssl.SSLObject) -> ocsp.Outcome | None:
    cert = agreed.getpeercert(binary_form=True)
    policy = tls.ocsp
    if not cert or not policy.check_extensions or not ocsp.may_name_responder(cert):
        return None
    try:
        # Several responders may be tried, each bounded by the policy's time-out.
        verdict = await asyncio.wait_for(asyncio.to_thread(ocsp.check, cert, tls.repository().signers, policy),
                                         policy.timeout * 3)
    except TimeoutError:
        verdict = ocsp.Verdict(ocsp.UNKNOWN, ocsp.X509_V_ERR_OCSP_VERIFY_FAILED, "OCSP look-up timed out", "")
    return ocsp.outcome(verdict, policy)


def channel_refusal(chl: ChannelObject, peer: TLSPeer | None) -> tuple[str, str] | None:
    """(rule, why) when a client connection over ``peer`` (None: plain TCP) may not use
    server-connection channel ``chl`` (``tls.rules``); None when it may."""
    return rules.refusal(chl.name, chl.text("SSLCIPH"), chl.number("SSLCAUTH"), chl.text("SSLPEER"), peer)
