"""Every benchmark, one after the other (``make bench``)."""

from bench import latency, startup, throughput

if __name__ == "__main__":
    throughput.main()
    latency.main()
    startup.main()
