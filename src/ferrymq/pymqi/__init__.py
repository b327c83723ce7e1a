"""L4: a pymqi-compatible API, so pymqi programs run on ferrymq by changing one import.

    import ferrymq.pymqi as pymqi

    qmgr = pymqi.connect("QM1", "DEV.APP.SVRCONN", "localhost(1414)")
    queue = pymqi.Queue(qmgr, "DEV.QUEUE.1")
    queue.put(b"Hello")
    md, gmo = pymqi.MD(), pymqi.GMO(Options=pymqi.CMQC.MQGMO_WAIT, WaitInterval=5000)
    print(queue.get(None, md, gmo), md.MsgId)

See docs/pymqi.md for what is supported and how it differs from pymqi.
"""

from typing import Any

from ferrymq.pymqi import CMQC, CMQCFC, CMQXC, CMQZC
from ferrymq.pymqi.core import QueueManager, connect, register_bindings, unregister_bindings
from ferrymq.pymqi.core import ensure_not_str as ensure_not_unicode
from ferrymq.pymqi.distlist import OR, PMR, RR, DistributionList
from ferrymq.pymqi.errors import Error, MQMIError, PYIFError
from ferrymq.pymqi.handles import MessageHandle
from ferrymq.pymqi.pcf import ByteString, Filter, PCFExecute
from ferrymq.pymqi.pcfstructs import (
    CFBF,
    CFBS,
    CFGR,
    CFH,
    CFIF,
    CFIL,
    CFIL64,
    CFIN,
    CFIN64,
    CFSF,
    CFSL,
    CFST,
    padded_count,
)
from ferrymq.pymqi.pubsub import Subscription, Topic
from ferrymq.pymqi.queue import Queue
from ferrymq.pymqi.replies import reply_md, report_md
from ferrymq.pymqi.rfh2 import RFH2
from ferrymq.pymqi.structs import CD, CMHO, CNO, DMHO, DMPO, GMO, IMPO, MD, OD, PD, PMO, SCO, SD, SMPO, SRO, STS, MQOpts

# The release of pymqi whose API this follows, and what pymqi reports about its build:
# ferrymq is always a client of a queue manager in another process (or embedded).
__version__ = "1.12.11"
__mqbuild__ = "client"
__mqlevels__ = ("5.0", "5.1", "5.2", "5.3", "6.0", "7.0", "7.1", "8.0.0", "9.1.0")

# pymqi's lower-case names from before its PEP 8 transition.
gmo, pmo, od, md, cd, sco, sd = GMO, PMO, OD, MD, CD, SCO, SD


def is_unicode(s: Any) -> bool:
    """Whether ``s`` is a ``str`` (pymqi's test for text that must become bytes)."""
    return isinstance(s, str)


def ensure_bytes(s: Any, encoding: str = "ascii") -> Any:
    """``s`` encoded when it is a ``str``, else ``s`` itself (pymqi's helper)."""
    return s.encode(encoding) if isinstance(s, str) else s


__all__ = [
    "CD", "CFBF", "CFBS", "CFGR", "CFH", "CFIF", "CFIL", "CFIL64", "CFIN", "CFIN64", "CFSF", "CFSL", "CFST", "CMHO",
    "CMQC", "CMQCFC", "CMQXC", "CMQZC", "CNO", "DMHO", "DMPO", "GMO", "IMPO", "MD", "PD", "RFH2", "SMPO",
    "ByteString", "DistributionList", "Filter", "MQMIError", "MQOpts", "MessageHandle", "OD", "OR", "PMR", "PCFExecute", "PMO", "PYIFError", "RR", "SCO",
    "SD", "SRO", "STS", "Subscription", "Topic", "Error", "Queue", "QueueManager", "cd", "connect", "ensure_bytes",
    "ensure_not_unicode", "gmo", "is_unicode", "md", "od", "padded_count", "pmo", "sd", "register_bindings",
    "reply_md", "report_md", "sco", "unregister_bindings",
]
