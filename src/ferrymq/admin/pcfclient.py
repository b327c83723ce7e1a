"""A PCF conversation with a queue manager's command server, over an ordinary client.

``CommandClient(client).run(command)`` puts the PCF request to SYSTEM.ADMIN.COMMAND.QUEUE
with a temporary dynamic reply queue (opened once from SYSTEM.DEFAULT.MODEL.QUEUE) and
gathers the responses by CorrelId until the one marked MQCFC_LAST. runmqsc-style MQSC
(``ferrymq mqsc``) and pymqi's PCFExecute both talk through it.
"""

from __future__ import annotations

import contextlib

from ferrymq.client import Client
from ferrymq.errors import DecodeError, MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.messages import from_command, responses_of
from ferrymq.pcf.model import Command, Response
from ferrymq.wire import pcf as P
from ferrymq.wire.mqmd import MQMD

COMMAND_QUEUE = "SYSTEM.ADMIN.COMMAND.QUEUE"
MAX_RESPONSES = 1_000_000  # bounds one reply set; far above any queue manager's object count


class CommandClient:
    """Runs PCF commands through the command server (see the module docstring)."""

    def __init__(self, client: Client, *, model_queue: str = "SYSTEM.DEFAULT.MODEL.QUEUE",
                 dynamic_queue: str = "FERRYMQ.ADMIN.*", command_queue: str = COMMAND_QUEUE,
                 wait: float = 30.0, encoding: int = P.NATIVE) -> None:
        self.client = client
        self.command_queue = command_queue
        self.wait = wait
        self.encoding = encoding
        self.reply = client.open(model_queue, options=C.MQOO_INPUT_EXCLUSIVE, dynamic_q_name=dynamic_queue)

    def send(self, message: P.PCFMessage) -> list[P.PCFMessage]:
        """Put one request; the decoded responses in order.

        Raises:
            MQError: MQRC_NO_MSG_AVAILABLE when the command server does not answer within
                ``wait`` seconds (is the queue manager running its command server?).
        """
        md = MQMD(version=C.MQMD_VERSION_2, msg_type=C.MQMT_REQUEST, format=C.MQFMT_ADMIN, encoding=self.encoding,
                  coded_char_set_id=1208, persistence=C.MQPER_NOT_PERSISTENT, reply_to_q=self.reply.name,
                  expiry=C.MQEI_UNLIMITED)
        put = self.client.put1(self.command_queue, message.pack(self.encoding), md=md, syncpoint=False)
        out: list[P.PCFMessage] = []
        while len(out) < MAX_RESPONSES:
            msg = self.reply.get(self.wait, correl_id=put.msg_id, syncpoint=False)
            try:
                resp = P.PCFMessage.unpack(msg.data, msg.md.encoding)
            except DecodeError as exc:
                raise MQError(C.MQCC_FAILED, F.MQRCCF_STRUCTURE_TYPE_ERROR, f"unreadable PCF response: {exc}") from None
            out.append(resp)
            if resp.header.control == F.MQCFC_LAST:
                break
        return out

    def run(self, command: Command) -> list[Response]:
        """The command's responses (a failed one carries its CompCode and Reason)."""
        return responses_of(self.send(from_command(command)))

    def close(self) -> None:
        with contextlib.suppress(MQError):  # the connection may already be gone
            self.reply.close()
