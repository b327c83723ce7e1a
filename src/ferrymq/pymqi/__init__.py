"""L4: a pymqi-compatible API, so pymqi programs run on ferrymq by changing one import.

    import ferrymq.pymqi as pymqi

    qmgr = pymqi.connect("QM1", "DEV.APP.SVRCONN", "localhost(1414)")
    queue = pymqi.Queue(qmgr, "DEV.QUEUE.1")
    queue.put(b"Hello")
    md, gmo = pymqi.MD(), pymqi.GMO(Options=pymqi.CMQC.MQGMO_WAIT, WaitInterval=5000)
    print(queue.get(None, md, gmo), md.MsgId)

See docs/pymqi.md for what is supported and how it differs from pymqi.
"""

from ferrymq.pymqi import CMQC, CMQCFC, CMQXC
from ferrymq.pymqi.core import QueueManager, connect, register_bindings, unregister_bindings
from ferrymq.pymqi.errors import Error, MQMIError, PYIFError
from ferrymq.pymqi.handles import MessageHandle
from ferrymq.pymqi.pcf import ByteString, Filter, PCFExecute
from ferrymq.pymqi.queue import Queue
from ferrymq.pymqi.replies import reply_md, report_md
from ferrymq.pymqi.rfh2 import RFH2
from ferrymq.pymqi.structs import CD, CMHO, CNO, DMHO, DMPO, GMO, IMPO, MD, OD, PD, PMO, SCO, SMPO, MQOpts

__all__ = [
    "CD", "CMHO", "CMQC", "CMQCFC", "CMQXC", "CNO", "DMHO", "DMPO", "GMO", "IMPO", "MD", "PD", "RFH2", "SMPO",
    "ByteString", "Filter", "MQMIError", "MQOpts", "MessageHandle", "OD", "PCFExecute", "PMO", "PYIFError", "SCO",
    "Error", "Queue", "QueueManager", "connect", "register_bindings", "reply_md", "report_md", "unregister_bindings",
]
