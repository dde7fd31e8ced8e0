"""What a run costs: per model call, the prompt split into cache reads, cache writes and
fresh input by the provider's prompt-cache rules, priced from a maintained price list.

Pure: no I/O but the prices file an override names. docs/cost.md has the model, its
rules and sources, and its measured error on the real logs.
"""
