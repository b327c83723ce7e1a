"""Checks of MQI call arguments that need no queue state: IBM's reason for each mistake.

Each function raises MQError(MQCC_FAILED, reason) naming the rule broken, or returns
normally; none changes anything, so a refused call leaves the queue manager as it was.
"""

from __future__ import annotations

from ferrymq.errors import failed
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

_INPUT = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_INPUT_SHARED | C.MQOO_INPUT_EXCLUSIVE
_ACCESS = _INPUT | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE | C.MQOO_SET
_KNOWN_OO = (
    _ACCESS | C.MQOO_SAVE_ALL_CONTEXT | C.MQOO_PASS_IDENTITY_CONTEXT | C.MQOO_PASS_ALL_CONTEXT
    | C.MQOO_SET_IDENTITY_CONTEXT | C.MQOO_SET_ALL_CONTEXT | C.MQOO_ALTERNATE_USER_AUTHORITY
    | C.MQOO_FAIL_IF_QUIESCING | C.MQOO_BIND_ON_OPEN | C.MQOO_BIND_NOT_FIXED | C.MQOO_BIND_ON_GROUP
    | C.MQOO_CO_OP | C.MQOO_NO_READ_AHEAD | C.MQOO_READ_AHEAD | C.MQOO_NO_MULTICAST | C.MQOO_RESOLVE_LOCAL_Q
    | C.MQOO_RESOLVE_NAMES
)
_CONTEXT_PMO = (C.MQPMO_NO_CONTEXT, C.MQPMO_DEFAULT_CONTEXT, C.MQPMO_PASS_IDENTITY_CONTEXT,
                C.MQPMO_PASS_ALL_CONTEXT, C.MQPMO_SET_IDENTITY_CONTEXT, C.MQPMO_SET_ALL_CONTEXT)
_KNOWN_PMO = (
    C.MQPMO_SYNCPOINT | C.MQPMO_NO_SYNCPOINT | C.MQPMO_NEW_MSG_ID | C.MQPMO_NEW_CORREL_ID
    | C.MQPMO_ALTERNATE_USER_AUTHORITY | C.MQPMO_FAIL_IF_QUIESCING | C.MQPMO_LOGICAL_ORDER
    | C.MQPMO_ASYNC_RESPONSE | C.MQPMO_SYNC_RESPONSE | C.MQPMO_RESOLVE_LOCAL_Q | C.MQPMO_WARN_IF_NO_SUBS_MATCHED
    | C.MQPMO_RETAIN | C.MQPMO_MD_FOR_OUTPUT_ONLY | C.MQPMO_SCOPE_QMGR | C.MQPMO_SUPPRESS_REPLYTO
    | C.MQPMO_NOT_OWN_SUBS | sum(_CONTEXT_PMO)
)
_BROWSE = C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT | C.MQGMO_BROWSE_MSG_UNDER_CURSOR
_KNOWN_GMO = (
    C.MQGMO_WAIT | C.MQGMO_SYNCPOINT | C.MQGMO_NO_SYNCPOINT | C.MQGMO_SET_SIGNAL | C.MQGMO_BROWSE_FIRST
    | C.MQGMO_BROWSE_NEXT | C.MQGMO_ACCEPT_TRUNCATED_MSG | C.MQGMO_MARK_SKIP_BACKOUT | C.MQGMO_MSG_UNDER_CURSOR
    | C.MQGMO_LOCK | C.MQGMO_UNLOCK | C.MQGMO_BROWSE_MSG_UNDER_CURSOR | C.MQGMO_SYNCPOINT_IF_PERSISTENT
    | C.MQGMO_FAIL_IF_QUIESCING | C.MQGMO_CONVERT | C.MQGMO_LOGICAL_ORDER | C.MQGMO_COMPLETE_MSG
    | C.MQGMO_ALL_MSGS_AVAILABLE | C.MQGMO_ALL_SEGMENTS_AVAILABLE | C.MQGMO_PROPERTIES_FORCE_MQRFH2
    | C.MQGMO_NO_PROPERTIES | C.MQGMO_PROPERTIES_IN_HANDLE | C.MQGMO_PROPERTIES_COMPATIBILITY
)
_KNOWN_MO = (C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID | C.MQMO_MATCH_GROUP_ID | C.MQMO_MATCH_MSG_SEQ_NUMBER
             | C.MQMO_MATCH_OFFSET | C.MQMO_MATCH_MSG_TOKEN)
# Report options ferrymq knows; other bits in IBM's reject mask fail the put.
_KNOWN_RO = (
    C.MQRO_EXCEPTION_WITH_FULL_DATA | C.MQRO_EXPIRATION_WITH_FULL_DATA | C.MQRO_COA_WITH_FULL_DATA
    | C.MQRO_COD_WITH_FULL_DATA | C.MQRO_PAN | C.MQRO_NAN | C.MQRO_ACTIVITY | C.MQRO_PASS_MSG_ID
    | C.MQRO_PASS_CORREL_ID | C.MQRO_DISCARD_MSG | C.MQRO_PASS_DISCARD_AND_EXPIRY
)
_REPORT_REQUESTS = (C.MQRO_EXCEPTION | C.MQRO_EXPIRATION | C.MQRO_COA | C.MQRO_COD | C.MQRO_PAN | C.MQRO_NAN
                    | C.MQRO_ACTIVITY)
_VALID_MT = {C.MQMT_REQUEST, C.MQMT_REPLY, C.MQMT_REPORT, C.MQMT_DATAGRAM, C.MQMT_MQE_FIELDS,
             C.MQMT_MQE_FIELDS_FROM_MQE}


_ANY_CONTEXT_PMO = sum(_CONTEXT_PMO)
# Option words already found valid on their own: an application repeats the same few on
# every call, and the rules below need a dozen tests each time. Bounded (any word may come).
_GOOD_PMO: set[int] = set()
_GOOD_GMO: set[int] = set()
_GOOD_LIMIT = 256


def bits(value: int) -> int:
    """Count of set bits (option families allow at most one)."""
    return bin(value & 0xFFFFFFFF).count("1")


def open_options(options: int) -> None:
    """MQOPEN options on their own (queue-independent rules)."""
    if options & ~_KNOWN_OO & 0xFFFFFFFF or options < 0:
        raise failed(C.MQRC_OPTIONS_ERROR, f"MQOPEN options 0x{options & 0xFFFFFFFF:08X} include unknown bits")
    if not options & _ACCESS:
        raise failed(C.MQRC_OPTIONS_ERROR, "MQOPEN needs one of INPUT_*, BROWSE, OUTPUT, INQUIRE or SET")
    if bits(options & _INPUT) > 1:
        raise failed(C.MQRC_OPTIONS_ERROR, "only one of MQOO_INPUT_AS_Q_DEF, INPUT_SHARED, INPUT_EXCLUSIVE")
    if options & (C.MQOO_READ_AHEAD | C.MQOO_NO_READ_AHEAD) == C.MQOO_READ_AHEAD | C.MQOO_NO_READ_AHEAD:
        raise failed(C.MQRC_OPTIONS_ERROR, "MQOO_READ_AHEAD and MQOO_NO_READ_AHEAD together")
    ctx = options & (C.MQOO_PASS_IDENTITY_CONTEXT | C.MQOO_PASS_ALL_CONTEXT | C.MQOO_SET_IDENTITY_CONTEXT
                     | C.MQOO_SET_ALL_CONTEXT)
    if ctx and not options & C.MQOO_OUTPUT:
        raise failed(C.MQRC_OPTIONS_ERROR, "context options on MQOPEN need MQOO_OUTPUT")


def put_options(options: int) -> None:
    if options in _GOOD_PMO:
        return
    if options < 0 or options & ~_KNOWN_PMO & 0xFFFFFFFF:
        raise failed(C.MQRC_OPTIONS_ERROR, f"MQPMO options 0x{options & 0xFFFFFFFF:08X} include unknown bits")
    if options & C.MQPMO_SYNCPOINT and options & C.MQPMO_NO_SYNCPOINT:
        raise failed(C.MQRC_OPTIONS_ERROR, "MQPMO_SYNCPOINT and MQPMO_NO_SYNCPOINT together")
    ctx = options & _ANY_CONTEXT_PMO
    if ctx & (ctx - 1):  # more than one bit set
        raise failed(C.MQRC_OPTIONS_ERROR, "more than one MQPMO context option")
    if options & C.MQPMO_ASYNC_RESPONSE and options & C.MQPMO_SYNC_RESPONSE:
        raise failed(C.MQRC_OPTIONS_ERROR, "MQPMO_ASYNC_RESPONSE and MQPMO_SYNC_RESPONSE together")
    if len(_GOOD_PMO) < _GOOD_LIMIT:
        _GOOD_PMO.add(options)


# descriptor_for_put runs on every put: its constants are module names, not C.* lookups.
_MT_APPL_FIRST, _MT_APPL_LAST = C.MQMT_APPL_FIRST, C.MQMT_APPL_LAST
_EI_UNLIMITED, _FB_NONE = C.MQEI_UNLIMITED, C.MQFB_NONE
_FB_SYSTEM_FIRST, _FB_SYSTEM_LAST = C.MQFB_SYSTEM_FIRST, C.MQFB_SYSTEM_LAST
_FB_APPL_FIRST, _FB_APPL_LAST = C.MQFB_APPL_FIRST, C.MQFB_APPL_LAST
_VALID_PERSISTENCE = (C.MQPER_NOT_PERSISTENT, C.MQPER_PERSISTENT, C.MQPER_PERSISTENCE_AS_Q_DEF)
_PRI_AS_Q_DEF = C.MQPRI_PRIORITY_AS_Q_DEF
_RO_REJECTED = C.MQRO_REJECT_UNSUP_MASK & ~_KNOWN_RO
_RO_UNKNOWN = ~C.MQRO_REJECT_UNSUP_MASK & ~_KNOWN_RO & ~C.MQRO_ACCEPT_UNSUP_IF_XMIT_MASK
_MF_REJECTED = C.MQMF_REJECT_UNSUP_MASK & ~(C.MQMF_SEGMENTATION_ALLOWED | C.MQMF_MSG_IN_GROUP
                                            | C.MQMF_LAST_MSG_IN_GROUP | C.MQMF_SEGMENT | C.MQMF_LAST_SEGMENT)
_MT_REQUEST, _MD_VERSION_2, _OL_UNDEFINED = C.MQMT_REQUEST, C.MQMD_VERSION_2, C.MQOL_UNDEFINED


def descriptor_for_put(md: MQMD) -> int:
    """The MQMD rules of MQPUT/MQPUT1; returns a warning reason (or MQRC_NONE).

    Raises:
        MQError: 2029, 2013, 2014, 2047, 2050, 2061, 2027, 2249 as IBM specifies.
    """
    mt = md.msg_type
    if mt not in _VALID_MT and not _MT_APPL_FIRST <= mt <= _MT_APPL_LAST:
        raise failed(C.MQRC_MSG_TYPE_ERROR, f"MsgType {mt} is neither a system type nor in {C.MQMT_APPL_FIRST}..{C.MQMT_APPL_LAST}")
    if md.expiry != _EI_UNLIMITED and md.expiry <= 0:
        raise failed(C.MQRC_EXPIRY_ERROR, f"Expiry {md.expiry} must be a positive number of tenths of a second or -1")
    fb = md.feedback
    if fb != _FB_NONE and not (_FB_SYSTEM_FIRST <= fb <= _FB_SYSTEM_LAST or _FB_APPL_FIRST <= fb <= _FB_APPL_LAST):
        raise failed(C.MQRC_FEEDBACK_ERROR, f"Feedback {fb} is outside the system and application ranges")
    if md.persistence not in _VALID_PERSISTENCE:
        raise failed(C.MQRC_PERSISTENCE_ERROR, f"Persistence {md.persistence} is not 0, 1 or 2")
    priority = md.priority
    if priority < _PRI_AS_Q_DEF:
        raise failed(C.MQRC_PRIORITY_ERROR, f"Priority {priority} is below -1")
    report = md.report & 0xFFFFFFFF
    if report & _RO_REJECTED:
        raise failed(C.MQRC_REPORT_OPTIONS_ERROR, f"Report 0x{report:08X} has options this queue manager rejects")
    if (report & _REPORT_REQUESTS or mt == _MT_REQUEST) and not md.reply_to_q.strip():
        why = "a request" if mt == _MT_REQUEST else f"Report 0x{report:08X} asks for reports"
        raise failed(C.MQRC_MISSING_REPLY_TO_Q, f"ReplyToQ is blank but {why}")
    if md.msg_flags & _MF_REJECTED:
        raise failed(C.MQRC_MSG_FLAGS_ERROR, f"MsgFlags 0x{md.msg_flags:08X} has unknown flags")
    if md.version == _MD_VERSION_2:
        if md.msg_seq_number < 1:
            raise failed(C.MQRC_MSG_SEQ_NUMBER_ERROR, f"MsgSeqNumber {md.msg_seq_number} must be at least 1")
        if md.offset < 0:
            raise failed(C.MQRC_OFFSET_ERROR, f"Offset {md.offset} is negative")
        if md.original_length < _OL_UNDEFINED:
            raise failed(C.MQRC_ORIGINAL_LENGTH_ERROR, f"OriginalLength {md.original_length} is invalid")
    if priority > 9:
        return C.MQRC_PRIORITY_EXCEEDS_MAXIMUM
    if report & _RO_UNKNOWN:
        return C.MQRC_UNKNOWN_REPORT_OPTION
    return C.MQRC_NONE


def get_options(options: int, wait_interval: int, match_options: int, buffer_length: int) -> None:
    if options not in _GOOD_GMO:
        _gmo_options(options)
    if options & C.MQGMO_WAIT and wait_interval < C.MQWI_UNLIMITED:
        raise failed(C.MQRC_WAIT_INTERVAL_ERROR, f"WaitInterval {wait_interval} is below -1 (MQWI_UNLIMITED)")
    if match_options < 0 or match_options & ~_KNOWN_MO:
        raise failed(C.MQRC_MATCH_OPTIONS_ERROR, f"MatchOptions 0x{match_options & 0xFFFFFFFF:08X} include unknown bits")
    if buffer_length < 0:
        raise failed(C.MQRC_BUFFER_LENGTH_ERROR, f"BufferLength {buffer_length} is negative")


def _gmo_options(options: int) -> None:
    """The MQGMO rules on Options alone (get_options checks them first)."""
    if options < 0 or options & ~_KNOWN_GMO & 0xFFFFFFFF:
        raise failed(C.MQRC_OPTIONS_ERROR, f"MQGMO options 0x{options & 0xFFFFFFFF:08X} include unknown bits")
    if options & C.MQGMO_WAIT and options & C.MQGMO_SET_SIGNAL:
        raise failed(C.MQRC_OPTIONS_ERROR, "MQGMO_WAIT and MQGMO_SET_SIGNAL together")
    if options & C.MQGMO_SET_SIGNAL:
        raise failed(C.MQRC_OPTIONS_ERROR, "MQGMO_SET_SIGNAL is z/OS only")
    sync = options & (C.MQGMO_SYNCPOINT | C.MQGMO_NO_SYNCPOINT | C.MQGMO_SYNCPOINT_IF_PERSISTENT)
    if bits(sync) > 1:
        raise failed(C.MQRC_OPTIONS_ERROR, "only one of MQGMO_SYNCPOINT, NO_SYNCPOINT, SYNCPOINT_IF_PERSISTENT")
    cursor = options & (_BROWSE | C.MQGMO_MSG_UNDER_CURSOR)
    if bits(cursor) > 1:
        raise failed(C.MQRC_OPTIONS_ERROR, "only one of BROWSE_FIRST, BROWSE_NEXT, BROWSE_MSG_UNDER_CURSOR, MSG_UNDER_CURSOR")
    if options & _BROWSE and options & (C.MQGMO_SYNCPOINT | C.MQGMO_MARK_SKIP_BACKOUT):
        raise failed(C.MQRC_OPTIONS_ERROR, "a browse cannot be in syncpoint or MARK_SKIP_BACKOUT")
    if options & C.MQGMO_LOCK and not options & _BROWSE:
        raise failed(C.MQRC_OPTIONS_ERROR, "MQGMO_LOCK needs a browse option")
    if options & C.MQGMO_UNLOCK and options & ~(C.MQGMO_UNLOCK | C.MQGMO_FAIL_IF_QUIESCING | C.MQGMO_NO_WAIT):
        raise failed(C.MQRC_OPTIONS_ERROR, "MQGMO_UNLOCK stands alone")
    if options & C.MQGMO_MARK_SKIP_BACKOUT and not options & (C.MQGMO_SYNCPOINT | C.MQGMO_SYNCPOINT_IF_PERSISTENT):
        raise failed(C.MQRC_OPTIONS_ERROR, "MQGMO_MARK_SKIP_BACKOUT needs MQGMO_SYNCPOINT")
    if len(_GOOD_GMO) < _GOOD_LIMIT:
        _GOOD_GMO.add(options)
