#!/usr/bin/env python3
"""PyTorch DistributedDataParallel peer of psgrad's sync mode, for psgrad_bench section 8.

The same MLP, optimizer and batch per worker as psgrad's tutorial job (see peer_common.py), trained by
`--workers` processes (2) that average their gradients with DDP over the gloo backend on loopback;
each process uses --threads-per-process torch threads (1: two processes on two cores). Either timed
runs (samples/s of all workers together) or, with --target-accuracy, training until rank 0's dev
accuracy, checked every --eval-every iterations, reaches it. One JSON line on stdout; without torch
the line says "skipped" and the exit code is 0.
"""
import argparse
import sys
import time

import peer_common as common


def train_rank(rank, world, port, args):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(args.threads_per_process)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    data = common.load_tensors(torch, args.data, with_dev=args.target_accuracy > 0 and rank == 0)
    torch.manual_seed(args.seed)
    model = common.build_model(torch)
    ddp = DistributedDataParallel(model)  # broadcasts rank 0's weights
    model.train()
    parameters = list(model.parameters())
    optimizer = common.thinc_adam(torch, parameters)
    stream = common.minibatches(torch, data[0], data[1], args.batch_size, args.seed + rank)

    def step():
        x, y = next(stream)
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(ddp(x), y).backward()  # the backward pass all-reduces the mean gradient
        common.clip_each_gradient(torch, parameters)
        optimizer.step()

    def agreed(value):
        """Rank 0's value, on every rank: all ranks must run the same number of steps."""
        shared = torch.tensor([float(value)])
        dist.broadcast(shared, 0)
        return shared.item()

    def timed(steps):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        elapsed = torch.tensor([time.perf_counter() - start])
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # the slowest rank's time
        return elapsed.item()

    # No destroy_process_group: the process ends right after its answer (see common.run_ranks).
    if args.target_accuracy > 0:
        return until_accuracy(torch, rank, world, args, model, data, step, agreed)
    # A short probe sizes the warm-up, and the warm-up (allocator and caches settled) the runs.
    probe = 10
    warmup = common.steps_for(args.warmup_seconds, agreed(timed(probe) / probe))
    steps = common.steps_for(args.seconds, agreed(timed(warmup) / warmup))
    rates = [world * args.batch_size * steps / timed(steps) for _ in range(args.repeats)]
    return {"rates": rates, "steps_per_run": steps}


def until_accuracy(torch, rank, world, args, model, data, step, agreed):
    """Rank 0 evaluates every eval_every iterations with the clock stopped and tells the others when
    to stop: at the target, or after max_seconds of training."""
    clock = common.TrainingClock()
    iteration, accuracy, reached_at = 0, 0.0, None
    while True:
        step()
        iteration += 1
        if iteration % args.eval_every:
            continue
        seconds = clock.seconds()
        with clock.pause():
            stop = 0.0
            if rank == 0:
                accuracy = common.dev_accuracy(torch, model, data[2], data[3])
                if accuracy >= args.target_accuracy:
                    reached_at = seconds
                stop = float(reached_at is not None or seconds > args.max_seconds)
            if agreed(stop):
                break
    samples = iteration * world * args.batch_size
    return {"reached": reached_at is not None, "seconds_to_target": reached_at,
            "samples_to_target": samples if reached_at is not None else None, "samples_trained": samples,
            "iterations": iteration,
            "final_accuracy": accuracy, "training_seconds": clock.seconds()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.add_run_arguments(parser, "workers")
    args = parser.parse_args()
    torch = common.import_torch_or_skip("torch_ddp")
    if torch is None:
        return 0
    results = common.run_ranks(train_rank, args.workers, args, args.timeout)
    result = {"peer": "torch_ddp", "backend": "gloo", "workers": args.workers, "batch_size": args.batch_size,
              "threads_per_process": args.threads_per_process, **common.describe_torch(torch)}
    common.emit_run(result, results[0], args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
