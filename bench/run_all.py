"""Every benchmark, one after the other (``make bench``)."""

from bench import latency, throughput

if __name__ == "__main__":
    throughput.main()
    latency.main()
