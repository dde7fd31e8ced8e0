"""Serve a GGUF model through llama.cpp's own OpenAI-compatible HTTP server (xllamacpp).

CI's real-model smoke test (.ci/run) starts this in the background and stops it by
its process id. It listens on 127.0.0.1 only, on a free port chosen by the kernel,
and writes the base URL (``http://127.0.0.1:PORT``) to ``--address-file`` once the
model is loaded, so two runs on one machine never collide on a port.

Everything that changes the model's output is pinned here: the thread count (the
sums of a matrix product depend on how the work is split), the context size, one
slot, no prompt cache (a reused prefix is computed in other batches), the seed.

One thread by default: on a 2-core machine that also runs tsum and pytest, two
llama.cpp threads wait on each other whenever one is descheduled; measured here
under load, 12 generated tokens/s with one thread against 0.6 with two.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, type=Path, help="the GGUF file")
    parser.add_argument("--alias", default="smollm2", help="the model name the server serves")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=4096, help="context size in tokens")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--address-file", required=True, type=Path)
    args = parser.parse_args()

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(args.model)
    params.model_alias = {args.alias}
    params.hostnames = ["127.0.0.1"]  # loopback only
    params.port = 0  # a free port, reported by listening_address
    params.n_ctx = args.ctx
    params.n_parallel = 1
    params.cache_prompt = False
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    # No busy-waiting between operations: a spinning thread takes a core from tsum.
    params.cpuparams.poll = 0
    params.cpuparams_batch.poll = 0
    params.n_threads_http = 2
    params.sampling.seed = args.seed
    params.ui = False
    params.warmup = True

    server = xllamacpp.Server(params)  # loads the model; serves from a background thread
    address = str(server.listening_address).rstrip("/")
    tmp = args.address_file.with_suffix(".tmp")
    tmp.write_text(address + "\n", encoding="utf-8")
    tmp.replace(args.address_file)  # whole or absent: the waiting side never reads half
    print(f"llama_server: {address} serves {args.model.name} as {args.alias}", flush=True)

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
