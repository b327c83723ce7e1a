"""What importing ``ferrymq.spark`` does for the driver's Spark sessions: no set-up step.

Spark looks a ``format("ferrymq")`` up in the Python workers' interpreter (ferrymq.spark.workers),
so a job started as ``/opt/venv/bin/python job.py`` with the venv not activated met only
DATA_SOURCE_NOT_FOUND unless it called ``register(spark)``. Once the driver has imported
``ferrymq.spark`` (a job that uses ferrymq does), every session it has or starts is set up
as ``register`` would, minus the check job: with a local master and no interpreter chosen,
the workers run the driver's own interpreter; the source is registered with the session,
so a worker that cannot import ferrymq fails naming ferrymq, not a missing source. The
sessions started later are caught by wrapping ``SparkSession.Builder.getOrCreate``
(pyspark has no hook for a new session); the wrapper only adds to what it returns (and,
before launching Spark for a local master, chooses the driver's interpreter as
``register`` would), and a failure of the set-up is logged, never raised into the user's
``getOrCreate``.

A job that imports nothing of ferrymq runs none of its code on the driver: Spark's own
lookup then decides, and DATA_SOURCE_NOT_FOUND is all it can say (docs/spark.md).
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

from pyspark import SparkContext
from pyspark.sql import SparkSession

from ferrymq.spark.workers import LOCAL_MASTER

log = logging.getLogger("ferrymq.spark")
_WRAPPED = "_ferrymq_sets_up"


def set_up_sessions(setup: Callable[[Any], None]) -> None:
    """Run ``setup`` on the active session now, and on every session ``getOrCreate`` returns
    from now on (once per wrapper: importing twice wraps once)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        _quietly(setup, active)
    original = SparkSession.Builder.getOrCreate
    if getattr(original, _WRAPPED, False):
        return

    @functools.wraps(original)
    def get_or_create(self: SparkSession.Builder) -> SparkSession:
        _before_launch(getattr(self, "_options", {}))
        session = original(self)
        _quietly(setup, session)
        return session

    setattr(get_or_create, _WRAPPED, True)
    SparkSession.Builder.getOrCreate = get_or_create  # type: ignore[method-assign]


def _before_launch(options: Mapping[str, Any]) -> None:
    """Before this getOrCreate starts Spark, when it names a local master and nothing chose
    the workers' interpreter: the driver's, through the environment the JVM starts with.
    The JVM reads ``PYSPARK_PYTHON`` once, at launch, for its own look-up of ``pyspark_*``
    sources, which a session's settings made later cannot reach."""
    if (SparkContext._active_spark_context is None and not os.environ.get("PYSPARK_PYTHON")
            and "spark.pyspark.python" not in options and LOCAL_MASTER.match(str(options.get("spark.master", "")))):
        os.environ["PYSPARK_PYTHON"] = sys.executable


def _quietly(setup: Callable[[Any], None], session: Any) -> None:
    try:
        setup(session)
    except Exception as exc:  # the user's session stands; the read names what is missing
        log.warning("event=spark_setup_failed error=%r (call ferrymq.spark.register(spark) to see it raised)", exc)
