"""What the Spark examples share: command-line connection options, a local SparkSession,
and defining the queues an example needs (MQSC through the command server, REPLACE-free:
a queue that exists is left as it is)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ferrymq.admin.mqsc import parse, to_command
from ferrymq.admin.pcfclient import CommandClient
from ferrymq.client import Client, MQError, connect
from ferrymq.mq import constants as C


def connection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--qmgr", default="QM1", help="queue manager name (default QM1)")
    p.add_argument("--conn", default="localhost(1414)", help="connection name, MQ style host(port) (default localhost(1414))")
    p.add_argument("--channel", default="DEV.APP.SVRCONN", help="server-connection channel to connect through")
    p.add_argument("--master", default="local[2]", help="Spark master (default local[2])")


def ferry_options(args: argparse.Namespace) -> dict[str, str]:
    return {"queueManager": args.qmgr, "connName": args.conn, "channel": args.channel}


def define_queues(client: Client, names: list[str]) -> None:
    """Define each local queue that does not exist yet."""
    admin = CommandClient(client)
    try:
        for name in names:
            try:
                client.open(name, options=C.MQOO_INQUIRE).close()
            except MQError as exc:
                if exc.reason != C.MQRC_UNKNOWN_OBJECT_NAME:
                    raise
                admin.run(to_command(parse(f"DEFINE QLOCAL({name}) MAXDEPTH(1000000)")))
    finally:
        admin.close()


def prepare(args: argparse.Namespace, queues: list[str]) -> None:
    with connect(args.qmgr, args.conn) as c:
        define_queues(c, queues)


def spark_session(app: str, master: str = "local[2]") -> Any:
    """A Spark session whose Python workers run this interpreter (where ferrymq is installed)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).appName(app)
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark
