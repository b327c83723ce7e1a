"""The attribute catalog of CHANNEL and LISTENER objects (engine.channels owns the objects).

Like engine.attrs, one entry per attribute: MQSC keyword, PCF parameter (MQIACH_/MQCACH_),
kind, range or words, IBM's default, and the channel types that have it. ``REASON`` names
the PCF reason IBM gives when a value is out of range (MQRCCF_BATCH_SIZE_ERROR ...), where
IBM has one; the rest get MQRCCF_ATTR_VALUE_ERROR. ``types`` holds channel types
(SDR, SVR, RCVR, RQSTR, SVRCONN) for channels and LISTENER for listeners.
"""

from __future__ import annotations

from ferrymq.engine.attrs import CHANNEL_MONITOR_WORDS, Attr
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.protocol.channel import MAX_BATCHSZ, MAX_HBINT, MAX_MAXMSGL, MAX_SEQ

CHANNEL = "CHANNEL"
LISTENER = "LISTENER"
CHSTATUS = "CHSTATUS"
LSSTATUS = "LSSTATUS"
SDR, SVR, RCVR, RQSTR, SVRCONN = "SDR", "SVR", "RCVR", "RQSTR", "SVRCONN"
CHLTYPES = {SDR: F.MQCHT_SENDER, SVR: F.MQCHT_SERVER, RCVR: F.MQCHT_RECEIVER, RQSTR: F.MQCHT_REQUESTER,
            SVRCONN: F.MQCHT_SVRCONN}
CHLTYPE_OF = {v: k for k, v in CHLTYPES.items()}
# The sending end of a message channel takes messages from a transmission queue.
SENDING = frozenset({SDR, SVR})
RECEIVING = frozenset({RCVR, RQSTR})
MESSAGE = SENDING | RECEIVING
ALL = MESSAGE | {SVRCONN}


def _int(name: str, sel: int, default: int, types: frozenset[str], low: int, high: int,
         words: dict[str, int] | None = None) -> Attr:
    return Attr(name, sel, "int", default, types, words=words or {}, low=low, high=high)


def _enum(name: str, sel: int, default: int, types: frozenset[str], words: dict[str, int]) -> Attr:
    return Attr(name, sel, "enum", default, types, words=words)


def _str(name: str, sel: int, types: frozenset[str], length: int, default: str = "") -> Attr:
    return Attr(name, sel, "str", default, types, length=length)


_NOT_RCVR = SENDING | {RQSTR}  # who connects out: CONNAME, MCATYPE
UNLIMITED_INSTANCES = 999_999_999  # MAXINST and MAXINSTC default: IBM's "no limit"
_COMPRESS = {"NONE": F.MQCOMPRESS_NONE, "RLE": F.MQCOMPRESS_RLE, "ZLIBFAST": F.MQCOMPRESS_ZLIBFAST,
             "ZLIBHIGH": F.MQCOMPRESS_ZLIBHIGH, "ANY": F.MQCOMPRESS_ANY}
_EXIT = C.MQ_EXIT_NAME_LENGTH
_DATA = C.MQ_EXIT_DATA_LENGTH
# Message, send and receive exits are lists (IBM: MSGEXIT('a','b') MSGDATA('x','y'), called
# in order; PCF carries them as MQCFSL): kind "strings", held as tuples (engine.channels),
# each name at most MQ_EXIT_NAME_LENGTH, each data item MQ_EXIT_DATA_LENGTH, the names and
# the data items together at most MQ_TOTAL_EXIT_NAME_LENGTH / MQ_TOTAL_EXIT_DATA_LENGTH.
EXIT_LISTS = {"MSGEXIT": "MSGDATA", "SENDEXIT": "SENDDATA", "RCVEXIT": "RCVDATA"}


def _list(name: str, sel: int, types: frozenset[str], length: int) -> Attr:
    return Attr(name, sel, "strings", "", types, length=length)


CHANNEL_ATTRS: tuple[Attr, ...] = (
    _enum("CHLTYPE", F.MQIACH_CHANNEL_TYPE, F.MQCHT_SENDER, ALL, dict(CHLTYPES)),
    _enum("TRPTYPE", F.MQIACH_XMIT_PROTOCOL_TYPE, F.MQXPT_TCP, ALL,
          {"TCP": F.MQXPT_TCP, "LU62": F.MQXPT_LU62, "NETBIOS": F.MQXPT_NETBIOS, "SPX": F.MQXPT_SPX}),
    _str("DESCR", F.MQCACH_DESC, ALL, C.MQ_CHANNEL_DESC_LENGTH),
    _str("CONNAME", F.MQCACH_CONNECTION_NAME, _NOT_RCVR, C.MQ_CONN_NAME_LENGTH),
    _str("XMITQ", F.MQCACH_XMIT_Q_NAME, SENDING, C.MQ_Q_NAME_LENGTH),
    _int("BATCHSZ", F.MQIACH_BATCH_SIZE, 50, MESSAGE, 1, MAX_BATCHSZ),
    _int("BATCHINT", F.MQIACH_BATCH_INTERVAL, 0, SENDING, 0, 999_999_999),
    _int("BATCHHB", F.MQIACH_BATCH_HB, 0, SENDING, 0, 999_999),
    _int("BATCHLIM", F.MQIACH_BATCH_DATA_LIMIT, 5000, SENDING, 0, 999_999),
    _int("DISCINT", F.MQIACH_DISC_INTERVAL, 6000, SENDING | {SVRCONN}, 0, 999_999),
    _int("HBINT", F.MQIACH_HB_INTERVAL, 300, ALL, 0, MAX_HBINT),
    _int("SHORTRTY", F.MQIACH_SHORT_RETRY, 10, SENDING, 0, 999_999_999),
    _int("SHORTTMR", F.MQIACH_SHORT_TIMER, 60, SENDING, 0, 999_999_999),
    _int("LONGRTY", F.MQIACH_LONG_RETRY, 999_999_999, SENDING, 0, 999_999_999),
    _int("LONGTMR", F.MQIACH_LONG_TIMER, 1200, SENDING, 0, 999_999_999),
    _enum("NPMSPEED", F.MQIACH_NPM_SPEED, F.MQNPMS_FAST, MESSAGE, {"FAST": F.MQNPMS_FAST, "NORMAL": F.MQNPMS_NORMAL}),
    _int("MAXMSGL", F.MQIACH_MAX_MSG_LENGTH, 4_194_304, ALL, 0, MAX_MAXMSGL),
    _int("SEQWRAP", F.MQIACH_SEQUENCE_NUMBER_WRAP, 999_999_999, MESSAGE, 100, MAX_SEQ),
    _str("MCAUSER", F.MQCACH_MCA_USER_ID, ALL, C.MQ_MCA_USER_ID_LENGTH),
    _enum("MCATYPE", F.MQIACH_MCA_TYPE, F.MQMCAT_PROCESS, _NOT_RCVR,
          {"PROCESS": F.MQMCAT_PROCESS, "THREAD": F.MQMCAT_THREAD}),
    _enum("PUTAUT", F.MQIACH_PUT_AUTHORITY, F.MQPA_DEFAULT, RECEIVING,
          {"DEF": F.MQPA_DEFAULT, "CTX": F.MQPA_CONTEXT, "ONLYMCA": F.MQPA_ONLY_MCA,
           "ALTMCA": F.MQPA_ALTERNATE_OR_MCA}),
    _enum("CONVERT", F.MQIACH_DATA_CONVERSION, F.MQCDC_NO_SENDER_CONVERSION, SENDING,
          {"NO": F.MQCDC_NO_SENDER_CONVERSION, "YES": F.MQCDC_SENDER_CONVERSION}),
    _enum("COMPMSG", F.MQIACH_MSG_COMPRESSION, F.MQCOMPRESS_NONE, ALL, _COMPRESS),
    _enum("COMPHDR", F.MQIACH_HDR_COMPRESSION, F.MQCOMPRESS_NONE, ALL,
          {"NONE": F.MQCOMPRESS_NONE, "SYSTEM": F.MQCOMPRESS_SYSTEM}),
    # Channel statistics (engine.monitoring): QMGR follows the queue manager's STATCHL.
    _enum("STATCHL", C.MQIA_STATISTICS_CHANNEL, C.MQMON_Q_MGR, MESSAGE,
          {"QMGR": C.MQMON_Q_MGR, **CHANNEL_MONITOR_WORDS}),
    _int("MRRTY", F.MQIACH_MR_COUNT, 10, RECEIVING, 0, 999_999_999),
    _int("MRTMR", F.MQIACH_MR_INTERVAL, 1000, RECEIVING, 0, 999_999_999),
    _str("MREXIT", F.MQCACH_MR_EXIT_NAME, RECEIVING, _EXIT),
    _str("MRDATA", F.MQCACH_MR_EXIT_USER_DATA, RECEIVING, _DATA),
    _list("MSGEXIT", F.MQCACH_MSG_EXIT_NAME, MESSAGE, _EXIT),
    _list("MSGDATA", F.MQCACH_MSG_EXIT_USER_DATA, MESSAGE, _DATA),
    _list("SENDEXIT", F.MQCACH_SEND_EXIT_NAME, ALL, _EXIT),
    _list("SENDDATA", F.MQCACH_SEND_EXIT_USER_DATA, ALL, _DATA),
    _list("RCVEXIT", F.MQCACH_RCV_EXIT_NAME, ALL, _EXIT),
    _list("RCVDATA", F.MQCACH_RCV_EXIT_USER_DATA, ALL, _DATA),
    _str("SCYEXIT", F.MQCACH_SEC_EXIT_NAME, ALL, _EXIT),
    _str("SCYDATA", F.MQCACH_SEC_EXIT_USER_DATA, ALL, _DATA),
    _int("SHARECNV", F.MQIACH_SHARING_CONVERSATIONS, 10, frozenset({SVRCONN}), 0, 999_999_999),
    _int("MAXINST", F.MQIACH_MAX_INSTANCES, UNLIMITED_INSTANCES, frozenset({SVRCONN}), 0, UNLIMITED_INSTANCES),
    _int("MAXINSTC", F.MQIACH_MAX_INSTS_PER_CLIENT, UNLIMITED_INSTANCES, frozenset({SVRCONN}), 0, UNLIMITED_INSTANCES),
    # TLS (docs/security.md): the CipherSpec both ends must agree on (blank: no TLS), whether
    # the responding end requires the caller's certificate, the peer's DN pattern, and the
    # certificate this end presents (blank: the queue manager's CERTLABL).
    _str("SSLCIPH", F.MQCACH_SSL_CIPHER_SPEC, ALL, C.MQ_SSL_CIPHER_SPEC_LENGTH),
    _enum("SSLCAUTH", F.MQIACH_SSL_CLIENT_AUTH, F.MQSCA_REQUIRED, ALL,
          {"REQUIRED": F.MQSCA_REQUIRED, "OPTIONAL": F.MQSCA_OPTIONAL}),
    _str("SSLPEER", F.MQCACH_SSL_PEER_NAME, ALL, C.MQ_SSL_PEER_NAME_LENGTH),
    _str("CERTLABL", C.MQCA_CERT_LABEL, ALL, C.MQ_CERT_LABEL_LENGTH),
)
CHANNEL_STATUS_ATTRS: tuple[Attr, ...] = (
    Attr("ALTDATE", C.MQCA_ALTERATION_DATE, "str", "", ALL, length=12, readonly=True),
    Attr("ALTTIME", C.MQCA_ALTERATION_TIME, "str", "", ALL, length=8, readonly=True),
)
CHANNEL_BY_NAME = {a.name: a for a in CHANNEL_ATTRS + CHANNEL_STATUS_ATTRS}
CHANNEL_BY_SELECTOR = {a.selector: a for a in CHANNEL_ATTRS + CHANNEL_STATUS_ATTRS}

# The reason IBM gives for a value out of range, by attribute.
REASON = {"CHLTYPE": F.MQRCCF_CHANNEL_TYPE_ERROR, "TRPTYPE": F.MQRCCF_XMIT_PROTOCOL_TYPE_ERR,
          "BATCHSZ": F.MQRCCF_BATCH_SIZE_ERROR, "DISCINT": F.MQRCCF_DISC_INT_ERROR,
          "SHORTRTY": F.MQRCCF_SHORT_RETRY_ERROR, "SHORTTMR": F.MQRCCF_SHORT_TIMER_ERROR,
          "LONGRTY": F.MQRCCF_LONG_RETRY_ERROR, "LONGTMR": F.MQRCCF_LONG_TIMER_ERROR,
          "SEQWRAP": F.MQRCCF_SEQ_NUMBER_WRAP_ERROR, "MAXMSGL": F.MQRCCF_MAX_MSG_LENGTH_ERROR,
          "PUTAUT": F.MQRCCF_PUT_AUTH_ERROR, "NPMSPEED": F.MQRCCF_NPM_SPEED_ERROR,
          "HBINT": F.MQRCCF_HB_INTERVAL_ERROR, "BATCHINT": F.MQRCCF_BATCH_INT_ERROR,
          "MCATYPE": F.MQRCCF_MCA_TYPE_ERROR, "CONVERT": F.MQRCCF_DATA_CONV_VALUE_ERROR,
          "XMITQ": F.MQRCCF_XMIT_Q_NAME_ERROR, "CONNAME": F.MQRCCF_CONN_NAME_ERROR,
          "SSLCIPH": F.MQRCCF_SSL_CIPHER_SPEC_ERROR, "SSLPEER": F.MQRCCF_SSL_PEER_NAME_ERROR,
          "SSLCAUTH": F.MQRCCF_SSL_CLIENT_AUTH_ERROR}

# DISPLAY CHSTATUS (INQUIRE_CHANNEL_STATUS): what a running channel reports.
_CS = frozenset({CHSTATUS})
CHSTATUS_ATTRS: tuple[Attr, ...] = (
    _enum("STATUS", F.MQIACH_CHANNEL_STATUS, F.MQCHS_INACTIVE, _CS,
          {"INACTIVE": F.MQCHS_INACTIVE, "BINDING": F.MQCHS_BINDING, "STARTING": F.MQCHS_STARTING,
           "RUNNING": F.MQCHS_RUNNING, "STOPPING": F.MQCHS_STOPPING, "RETRYING": F.MQCHS_RETRYING,
           "STOPPED": F.MQCHS_STOPPED, "REQUESTING": F.MQCHS_REQUESTING, "PAUSED": F.MQCHS_PAUSED,
           "INITIALIZING": F.MQCHS_INITIALIZING}),
    _enum("SUBSTATE", F.MQIACH_CHANNEL_SUBSTATE, F.MQCHSSTATE_OTHER, _CS,
          {"": F.MQCHSSTATE_OTHER, "ENDBATCH": F.MQCHSSTATE_END_OF_BATCH, "SEND": F.MQCHSSTATE_SENDING,
           "RECEIVE": F.MQCHSSTATE_RECEIVING, "RESYNCH": F.MQCHSSTATE_RESYNCHING,
           "HEARTBEAT": F.MQCHSSTATE_HEARTBEATING, "NETCONNECT": F.MQCHSSTATE_NET_CONNECTING,
           "MQPUT": F.MQCHSSTATE_IN_MQPUT, "MQGET": F.MQCHSSTATE_IN_MQGET}),
    _enum("CHLTYPE", F.MQIACH_CHANNEL_TYPE, F.MQCHT_SENDER, _CS, dict(CHLTYPES)),
    _str("CONNAME", F.MQCACH_CONNECTION_NAME, _CS, C.MQ_CONN_NAME_LENGTH),
    _str("XMITQ", F.MQCACH_XMIT_Q_NAME, _CS, C.MQ_Q_NAME_LENGTH),
    _str("RQMNAME", C.MQCA_REMOTE_Q_MGR_NAME, _CS, C.MQ_Q_MGR_NAME_LENGTH),
    _int("MSGS", F.MQIACH_MSGS, 0, _CS, 0, 2**31 - 1),
    _int("BATCHES", F.MQIACH_BATCHES, 0, _CS, 0, 2**31 - 1),
    _int("BYTSSENT", F.MQIACH_BYTES_SENT, 0, _CS, 0, 2**31 - 1),
    _int("BYTSRCVD", F.MQIACH_BYTES_RECEIVED, 0, _CS, 0, 2**31 - 1),
    _int("XQMSGSA", F.MQIACH_XMITQ_MSGS_AVAILABLE, 0, _CS, 0, 2**31 - 1),
    _enum("INDOUBT", F.MQIACH_INDOUBT_STATUS, F.MQCHIDS_NOT_INDOUBT, _CS,
          {"NO": F.MQCHIDS_NOT_INDOUBT, "YES": F.MQCHIDS_INDOUBT}),
    _int("CURMSGS", F.MQIACH_CURRENT_MSGS, 0, _CS, 0, 2**31 - 1),
    _int("CURSEQNO", F.MQIACH_CURRENT_SEQ_NUMBER, 0, _CS, 0, 999_999_999),
    _int("LSTSEQNO", F.MQIACH_LAST_SEQ_NUMBER, 0, _CS, 0, 999_999_999),
    _str("LSTMSGDA", F.MQCACH_LAST_MSG_DATE, _CS, 12),
    _str("LSTMSGTI", F.MQCACH_LAST_MSG_TIME, _CS, 8),
    _str("CHSTADA", F.MQCACH_CHANNEL_START_DATE, _CS, 12),
    _str("CHSTATI", F.MQCACH_CHANNEL_START_TIME, _CS, 8),
    _int("BATCHSZ", F.MQIACH_BATCH_SIZE, 0, _CS, 0, MAX_BATCHSZ),
    _int("HBINT", F.MQIACH_HB_INTERVAL, 0, _CS, 0, MAX_HBINT),
    _int("MAXMSGL", F.MQIACH_MAX_MSG_LENGTH, 0, _CS, 0, 104_857_600),
    _enum("NPMSPEED", F.MQIACH_NPM_SPEED, F.MQNPMS_NORMAL, _CS, {"FAST": F.MQNPMS_FAST, "NORMAL": F.MQNPMS_NORMAL}),
    _int("SHORTRTS", F.MQIACH_SHORT_RETRIES_LEFT, 0, _CS, 0, 999_999_999),
    _int("LONGRTS", F.MQIACH_LONG_RETRIES_LEFT, 0, _CS, 0, 999_999_999),
    _enum("STOPREQ", F.MQIACH_STOP_REQUESTED, 0, _CS, {"NO": 0, "YES": 1}),
    # A client connection's conversations on its socket, and how many it may carry.
    _int("CURSHCNV", F.MQIACH_CURRENT_SHARING_CONVS, 0, _CS, 0, 999_999_999),
    _int("MAXSHCNV", F.MQIACH_MAX_SHARING_CONVS, 0, _CS, 0, 999_999_999),
    # A TLS instance's partner: its certificate's subject and issuer DNs, the CipherSpec and
    # protocol agreed (blank, NONE over plain TCP).
    _str("SSLPEER", F.MQCACH_SSL_SHORT_PEER_NAME, _CS, 256),
    _str("SSLCERTI", F.MQCACH_SSL_CERT_ISSUER_NAME, _CS, 256),
    _str("SSLCIPH", F.MQCACH_SSL_CIPHER_SPEC, _CS, C.MQ_SSL_CIPHER_SPEC_LENGTH),
    _enum("SECPROT", F.MQIACH_SECURITY_PROTOCOL, F.MQSECPROT_NONE, _CS,
          {"NONE": F.MQSECPROT_NONE, "TLSV12": F.MQSECPROT_TLSV12, "TLSV13": F.MQSECPROT_TLSV13}),
)
CHSTATUS_BY_NAME = {a.name: a for a in CHSTATUS_ATTRS}
CHSTATUS_BY_SELECTOR = {a.selector: a for a in CHSTATUS_ATTRS}

# LISTENER objects. PORT(0) is ferrymq's "any free port" (DISPLAY LSSTATUS shows the
# bound one), as ``ferrymq create --port 0`` is; IPADDR blank listens on 127.0.0.1.
_L = frozenset({LISTENER})
LISTENER_ATTRS: tuple[Attr, ...] = (
    _enum("TRPTYPE", F.MQIACH_XMIT_PROTOCOL_TYPE, F.MQXPT_TCP, _L, {"TCP": F.MQXPT_TCP}),
    _str("DESCR", F.MQCACH_LISTENER_DESC, _L, C.MQ_LISTENER_DESC_LENGTH),
    _int("PORT", F.MQIACH_PORT, 1414, _L, 0, 65535),
    _str("IPADDR", F.MQCACH_IP_ADDRESS, _L, 48),
    _enum("CONTROL", F.MQIACH_LISTENER_CONTROL, C.MQSVC_CONTROL_MANUAL, _L,
          {"MANUAL": C.MQSVC_CONTROL_MANUAL, "QMGR": C.MQSVC_CONTROL_Q_MGR,
           "STARTONLY": C.MQSVC_CONTROL_Q_MGR_START}),
    _int("BACKLOG", F.MQIACH_BACKLOG, 0, _L, 0, 999_999_999),
    Attr("ALTDATE", C.MQCA_ALTERATION_DATE, "str", "", _L, length=12, readonly=True),
    Attr("ALTTIME", C.MQCA_ALTERATION_TIME, "str", "", _L, length=8, readonly=True),
)
LISTENER_BY_NAME = {a.name: a for a in LISTENER_ATTRS}
LISTENER_BY_SELECTOR = {a.selector: a for a in LISTENER_ATTRS}
_LS = frozenset({LSSTATUS})
LSSTATUS_ATTRS: tuple[Attr, ...] = (
    _enum("STATUS", F.MQIACH_LISTENER_STATUS, C.MQSVC_STATUS_STOPPED, _LS,
          {"STOPPED": C.MQSVC_STATUS_STOPPED, "STARTING": C.MQSVC_STATUS_STARTING,
           "RUNNING": C.MQSVC_STATUS_RUNNING, "STOPPING": C.MQSVC_STATUS_STOPPING,
           "RETRYING": C.MQSVC_STATUS_RETRYING}),
    _int("PORT", F.MQIACH_PORT, 0, _LS, 0, 65535),
    _str("IPADDR", F.MQCACH_IP_ADDRESS, _LS, 48),
    _int("BACKLOG", F.MQIACH_BACKLOG, 0, _LS, 0, 999_999_999),
    _str("STARTDA", F.MQCACH_LISTENER_START_DATE, _LS, 12),
    _str("STARTTI", F.MQCACH_LISTENER_START_TIME, _LS, 8),
)
LSSTATUS_BY_NAME = {a.name: a for a in LSSTATUS_ATTRS}
LSSTATUS_BY_SELECTOR = {a.selector: a for a in LSSTATUS_ATTRS}


EXIT_ITEMS = frozenset(EXIT_LISTS) | frozenset(EXIT_LISTS.values())
# The most characters a list holds, its items together (IBM's MQCD bounds).
EXIT_TOTAL = {**dict.fromkeys(EXIT_LISTS, C.MQ_TOTAL_EXIT_NAME_LENGTH),
              **dict.fromkeys(EXIT_LISTS.values(), C.MQ_TOTAL_EXIT_DATA_LENGTH)}


def exit_list(names: tuple[str, ...], data: tuple[str, ...]) -> list[tuple[str, str]]:
    """The exits a MSGEXIT, SENDEXIT or RCVEXIT list names, in calling order, each with its
    exit data: data item i goes with exit i, as IBM pairs them; a data list shorter than
    the exit list leaves the rest blank, items beyond it are ignored."""
    return [(n, data[i] if i < len(data) else "") for i, n in enumerate(names)]


def legacy_exit_lists(attrs: dict[str, object]) -> dict[str, tuple[str, ...]]:
    """The exit lists of a definition written before they were lists: MSGEXIT ... held the
    MQSC text, items joined by commas. Split once, as they were read then: the exit names at
    every comma; the data at every comma only where there were several exits (one exit took
    the whole text as its data)."""
    out: dict[str, tuple[str, ...]] = {}
    for exit_attr, data_attr in EXIT_LISTS.items():
        names, data = attrs.get(exit_attr, ""), attrs.get(data_attr, "")
        called = tuple(n.strip() for n in names.split(",")) if isinstance(names, str) and names.strip() else ()
        text = data if isinstance(data, str) else ""
        out[exit_attr] = called
        out[data_attr] = (tuple(d.strip() for d in text.split(",")) if len(called) > 1
                          else (text.strip(),) if text.strip() else ())
    return out
