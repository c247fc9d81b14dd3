#!/usr/bin/env python3
"""PyTorch torch.distributed.rpc parameter-server peer of psgrad's sync and async modes, for
psgrad_bench section 8.

One server process and --trainers trainer processes (2) on loopback over RPC's TensorPipe backend,
each with --threads-per-process torch threads (1); the server and trainers are in
torch_rpc_server.py. The server's process drives the run, as in PyTorch's tutorial: it calls the
trainers' training function over RPC and waits for them. Either timed runs (samples/s of all trainers
together, from launching the trainers to the last one's return) or, with --target-accuracy, training
until the server's dev accuracy, checked every --eval-every server steps with the clock stopped,
reaches it. One JSON line on stdout; without torch the line says "skipped" and the exit code is 0.
"""
import argparse
import sys
import time

import peer_common as common


def run_rank(rank, world, port, args):
    import torch
    import torch.distributed.rpc as rpc

    torch.set_num_threads(args.threads_per_process)
    options = rpc.TensorPipeRpcBackendOptions(init_method=f"tcp://127.0.0.1:{port}", num_worker_threads=8,
                                              rpc_timeout=args.timeout)
    rpc.init_rpc("ps" if rank == 0 else f"trainer{rank}", rank=rank, world_size=world,
                 rpc_backend_options=options)
    try:
        return drive(torch, rpc, world - 1, args) if rank == 0 else None
    finally:
        rpc.shutdown()  # waits for every process: the trainers stay up until the driver is done


def drive(torch, rpc, trainers, args):
    import torch_rpc_server as server

    names = [f"trainer{rank}" for rank in range(1, trainers + 1)]
    for rank, name in enumerate(names, start=1):
        rpc.rpc_sync(name, server.prepare_trainer, args=(args.data, args.batch_size, args.seed + rank))
    evaluation = None
    if args.target_accuracy > 0:
        _, _, x_dev, y_dev = common.load_tensors(torch, args.data, with_dev=True)
        evaluation = {"x": x_dev, "y": y_dev, "target": args.target_accuracy, "every": args.eval_every,
                      "max_seconds": args.max_seconds}
    ps = server.ParameterServer(args.mode, trainers, args.batch_size, evaluation)
    ps_rref = rpc.RRef(ps)

    def run(steps):
        """Seconds until every trainer has sent `steps` gradients (0: until the server says stop)."""
        start = time.perf_counter()
        torch.futures.wait_all([rpc.rpc_async(name, server.train, args=(ps_rref, steps)) for name in names])
        return time.perf_counter() - start

    if evaluation:
        ps.start_clock()
        run(0)
        return server.ParameterServer.results(ps_rref)
    # Per trainer, in both modes (sync: one server step per round of all trainers' gradients).
    probe = 10
    warmup = common.steps_for(args.warmup_seconds, run(probe) / probe)
    steps = common.steps_for(args.seconds, run(warmup) / warmup)
    rates = [trainers * args.batch_size * steps / run(steps) for _ in range(args.repeats)]
    return {"rates": rates, "steps_per_run": steps, "server_steps": ps.steps}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("sync", "async"), default="sync")
    common.add_run_arguments(parser, "trainers")
    args = parser.parse_args()
    peer = f"torch_rpc_{args.mode}"
    torch = common.import_torch_or_skip(peer)
    if torch is None:
        return 0
    results = common.run_ranks(run_rank, args.trainers + 1, args, args.timeout)
    result = {"peer": peer, "backend": "tensorpipe", "trainers": args.trainers, "batch_size": args.batch_size,
              "threads_per_process": args.threads_per_process, **common.describe_torch(torch)}
    common.emit_run(result, results[0], args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
