"""``tsum sweep``: trigger settings evaluated over a corpus."""
