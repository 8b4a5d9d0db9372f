"""Partition state on each replica: leader/follower roles, ISR, high watermark."""
