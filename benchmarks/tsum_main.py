"""``tsum`` without the console script: ``python benchmarks/tsum_main.py ARGS``."""

from transcript_tools.cli.main import main

if __name__ == "__main__":
    main()
