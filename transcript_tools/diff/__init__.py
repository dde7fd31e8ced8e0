"""``tsum diff`` and ``tsum check``: two output directories compared."""
