"""Kafka-Lite for PySpark: a ``kafkalite`` source and sink with Spark's Kafka options.

    import kafkalite.spark
    spark = kafkalite.spark.session()          # Java, PYSPARK_PYTHON, SPARK_LOCAL_IP, format
    df = (spark.readStream.format("kafkalite")
          .option("kafka.bootstrap.servers", "127.0.0.1:9092")
          .option("subscribe", "orders").load())

Spark's own Kafka connector is a Maven jar; this one is written with Spark 4's Python
Data Source API and needs only pip packages. Code written for ``format("kafka")`` runs
with ``format("kafkalite")``. Beyond Spark's connector: the source reads committed data
only by default (``kafka.isolation.level=read_committed``), and the streaming sink can
be exactly-once (``deliveryGuarantee=exactly-once``).

The source and sink are clients of the cluster through real Kafka clients only.
"""

from kafkalite.spark.session import package_zip, prepare_environment, register, session

__all__ = ["package_zip", "prepare_environment", "register", "session"]
