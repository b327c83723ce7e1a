"""The channel a client connects on: its channel authentication records (engine.chlauth)
and the user it runs as (MCAUSER), put together with connection authentication
(server.connauth) as IBM's queue manager does for a SVRCONN channel.

The user a client connection runs as, from the weakest to the strongest claim:

1. the user the client asserts (its CONNECT's user);
2. the SVRCONN channel's MCAUSER, when the channel is defined and MCAUSER is not blank;
3. the user whose password was checked, when AUTHINFO's ADOPTCTX is YES;
4. the MCAUSER of the USERSRC(MAP) record that matched (IBM's "early adopt": the record is
   matched against the asserted user, and its mapping wins over the adopted one).

BLOCKUSER is checked against that final user. A local-socket connection (bindings) uses no
channel: none of this applies to it. Only a queue manager whose CHLAUTH attribute is ENABLED
checks records; MCAUSER applies whatever it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from ferrymq.engine import chlauth as X
from ferrymq.engine.authority import Authorities
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import cfc as F

DEFAULT_SVRCONN = "SYSTEM.DEF.SVRCONN"


@dataclass(frozen=True, slots=True)
class Gate:
    """What a client's channel decided: ``partner`` as matched, the channel's MCAUSER,
    the records' decision (``decision.refused``: an MQRQ_CHANNEL_BLOCKED_* qualifier)."""

    partner: X.Partner
    channel_user: str
    decision: X.Decision


def partner_of(channel: str, peer: str, user: str, peer_dn: str = "", issuer_dn: str = "") -> X.Partner:
    """The Partner a client shows: ``peer`` is the handler's "host:port"."""
    address = peer.rpartition(":")[0].strip("[]") if ":" in peer else ""
    return X.Partner(channel.strip() or DEFAULT_SVRCONN, F.MQCHT_SVRCONN, address, user.strip(), "", peer_dn,
                     issuer_dn)


def channel_mcauser(qm: QueueManager, channel: str) -> str:
    """The MCAUSER of SVRCONN channel ``channel`` (blank when not defined or blank)."""
    obj = qm.state.channels.find(channel)
    if obj is None or obj.chltype != "SVRCONN":
        return ""
    return obj.text("MCAUSER").strip()


def enabled(qm: QueueManager) -> bool:
    return bool(qm.state.qmgr_attr("CHLAUTH") == F.MQCHLA_ENABLED)


def record_chckclnt(qm: QueueManager, partner: X.Partner) -> int:
    """The CHCKCLNT of the mapping record that matches ``partner`` (ASQMGR for none)."""
    if not enabled(qm):
        return F.MQCHK_AS_Q_MGR
    rec = X.mapping(qm.state.authority.chlauth.records, partner)
    return rec.chckclnt if rec is not None and rec.type in (X.ADDRESSMAP, X.USERMAP) else F.MQCHK_AS_Q_MGR


def final_user(mapped: str, authenticated: str, adopted: bool, channel_user: str) -> str:
    """The module docstring's order: ``authenticated`` is the connection's user as
    connection authentication decided it; ``adopted``: a password was checked and ADOPTCTX
    is YES."""
    if mapped:
        return mapped
    if adopted or not channel_user:
        return authenticated
    return channel_user


def check(qm: QueueManager, partner: X.Partner, authenticated: str, adopted: bool) -> Gate:
    """The records' decision for ``partner`` and the user it would run as."""
    oam: Authorities = qm.state.authority
    chl_user = channel_mcauser(qm, partner.channel)
    if not enabled(qm):
        return Gate(partner, chl_user, X.Decision())
    decision = X.resolve(oam.chlauth.records, partner, oam.is_admin,
                         lambda mapped: final_user(mapped, authenticated, adopted, chl_user))
    return Gate(partner, chl_user, decision)


BLOCKED_WHY = {F.MQRQ_CHANNEL_BLOCKED_ADDRESS: "address blocked",
               F.MQRQ_CHANNEL_BLOCKED_USERID: "user blocked",
               F.MQRQ_CHANNEL_BLOCKED_NOACCESS: "no access"}
