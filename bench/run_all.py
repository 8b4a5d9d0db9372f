"""Every benchmark, one after the other (``make bench``)."""

from bench import (
    consume,
    containers,
    dashboard,
    failover,
    grader,
    idle,
    lab_startup,
    latency,
    replication,
    requests,
    restart,
    spark,
    startup,
    starvation,
    throughput,
    transactions,
)

if __name__ == "__main__":
    throughput.main()
    consume.main()
    requests.main([])
    latency.main()
    replication.main()
    transactions.main()
    failover.main([])
    startup.main()
    restart.main()
    starvation.main()
    idle.main([])
    dashboard.main()
    lab_startup.main()
    spark.main()
    grader.main([])
    containers.main()
