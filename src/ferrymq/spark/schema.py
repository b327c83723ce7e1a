"""The documented columns as a Spark ``StructType`` (built without a JVM) and the exact
Arrow schema Spark expects from ``read()`` for a (possibly narrower) user schema.

Spark checks a read's Arrow batches field by field against ``to_arrow_schema(schema,
timezone="UTC")``, so the batches are always built in that schema, never inferred.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ferrymq.spark.columns import COLUMNS, check_columns

_TYPES: dict[str, DataType] = {
    "STRING": StringType(), "BIGINT": LongType(), "INT": IntegerType(), "BINARY": BinaryType(),
    "TIMESTAMP": TimestampType(), "MAP<STRING, STRING>": MapType(StringType(), StringType(), True),
}
SCHEMA = StructType([StructField(name, _TYPES[kind], True) for name, kind in COLUMNS])
_EXPECTED = {f.name: f.dataType for f in SCHEMA.fields}


def read_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema for reading ``schema``: any subset of the columns, in any order,
    each with its documented type.

    Raises:
        ValueError: an unknown column, or a known one declared with another type.
    """
    check_columns([f.name for f in schema.fields], "cannot read from ferrymq")
    wrong = [f"{f.name} {f.dataType.simpleString()} (is {_EXPECTED[f.name].simpleString()})"
             for f in schema.fields if f.dataType != _EXPECTED[f.name]]
    if wrong:
        raise ValueError(f"cannot read from ferrymq: column type(s) differ from the documented schema: {', '.join(wrong)}")
    return to_arrow_schema(schema, timezone="UTC")
