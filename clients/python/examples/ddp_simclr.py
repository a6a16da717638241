#!/usr/bin/env python3
"""SimCLR under DistributedDataParallel, with BatchSampler's batches from
`batchsampler serve` (cmd/batchsampler). CPU and the gloo backend here; on
GPUs pass --backend nccl and move the model and batches to the rank's GPU.

Start the server, then the N processes of one job:

    batchsampler serve -b 64 -m 200 -k 10 -refresh-every 30 -epochs 5 -state sampler.bin
    torchrun --nproc_per_node 2 clients/python/examples/ddp_simclr.py --url http://127.0.0.1:8470 --ckpt ckpt.pt

Debian's python3-torch 1.13 under Python 3.11: its torchrun fails before
starting a worker (AttributeError in elastic/multiprocessing/api.py to_map).
Use --spawn N instead (torch.multiprocessing.spawn starts the N ranks), or
start each rank yourself with torchrun's environment: RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR, MASTER_PORT (this is what the tests do). Across
machines, start the server with -addr 0.0.0.0:8470 -token-file FILE and give
every rank the secret (--token-file FILE or $BATCHSAMPLER_TOKEN).

Every step s, rank r of w:
  1. takes its slice of the global batch of step s from the server
     (ServiceBatchSampler(rank=r, world_size=w) as the DataLoader's
     batch_sampler): the slices are disjoint and together the server's
     global batch of L instances;
  2. augments its instances twice (the noise depends on the seed, the step
     and the instance only, so a run is reproducible and a restarted job
     sees the same views), encodes both views in one forward pass;
  3. all-gathers the projections of both views with a gather that carries
     gradients (gather below), so its InfoNCE (NT-Xent) scores its own 2·L_r
     anchors against all 2·L projections of the global batch;
  4. steps the optimizer with DDP's averaged gradients; the gradient of
     every rank's parameters is exactly that of the single-process loss on
     the global batch (the tests check it);
  5. when the server says a graph refresh is due, uploads the embeddings of
     its rows shard_rows(N, r, w) (the server builds the graph when all
     ranks' shards arrived);
  6. rank 0 saves model, optimizer and sampler state every --ckpt-every
     steps; a restarted job resumes from it and gets exactly the batches an
     uninterrupted job gets.

The three pitfalls of contrastive losses under DDP, and what is done here:
  * Gathering outside the loss. torch.distributed.all_gather returns tensors
    without a gradient: a loss on them treats the other ranks' projections
    as constants, and the gradient through the negatives they supply is
    lost. gather is an autograd Function: its backward all-reduces (sums)
    the gradient of every rank's loss with respect to the gathered rows and
    returns this rank's rows, so each projection receives the gradient of
    every loss term it appears in, on every rank. (It pads to the largest
    slice, so unequal slices, B mod w != 0 or a last batch of B+1, work;
    torch.distributed.nn.all_gather would need equal sizes.)
  * Gradients off by the world size. DDP averages the ranks' gradients
    (divides their sum by w). Rank r's loss is therefore the sum of its
    anchors' terms times w / (2·L): the DDP gradient is then exactly the
    gradient of the mean over all 2·L anchors, the single-process loss. The
    loss printed is that global mean (all-reduced), not rank r's share.
  * Per-rank BatchNorm statistics. With plain BatchNorm each rank normalises
    with the statistics of its own slice: another loss than one process
    would compute, and a leak a model can exploit (the negatives of other
    ranks are normalised differently). GlobalBatchNorm1d gathers the
    activations (with gradient) and normalises with the global batch's
    statistics; its running statistics are then the same on every rank.
    torch's SyncBatchNorm does this on GPUs only in 1.13 ("SyncBatchNorm
    expected input tensor to be on GPU"); on GPUs use
    nn.SyncBatchNorm.convert_sync_batchnorm instead.

The embeddings uploaded for a refresh are computed by the inner module
(ddp.module) in eval mode: no collective runs there, since the ranks do not
reach a refresh at the same moment.
"""

import argparse
import datetime
import hashlib
import json
import os
import signal
import socket
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from batchsampler_client import ServiceBatchSampler, ServiceError, shard_rows  # noqa: E402


def world():
    """(rank, world size) of the process group, (0, 1) without one."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class _Gather(torch.autograd.Function):
    """All ranks' rows in rank order; backward sums every rank's gradient
    with respect to the gathered rows and returns this rank's rows."""

    @staticmethod
    def forward(ctx, x, sizes, rank):
        ctx.sizes, ctx.rank = sizes, rank
        padded = x.new_zeros((max(sizes),) + tuple(x.shape[1:]))
        padded[: x.shape[0]] = x
        parts = [torch.empty_like(padded) for _ in sizes]
        dist.all_gather(parts, padded)
        return torch.cat([p[:k] for p, k in zip(parts, sizes)])

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous().clone()
        dist.all_reduce(grad, op=dist.ReduceOp.SUM)
        lo = sum(ctx.sizes[: ctx.rank])
        return grad[lo: lo + ctx.sizes[ctx.rank]], None, None


def gather(x):
    """(all ranks' x concatenated in rank order, the ranks' row counts),
    differentiable; x itself with one process."""
    rank, w = world()
    if w == 1:
        return x, [x.shape[0]]
    n = torch.tensor([x.shape[0]], dtype=torch.int64)
    counts = [torch.zeros_like(n) for _ in range(w)]
    dist.all_gather(counts, n)
    sizes = [int(c) for c in counts]
    return _Gather.apply(x, sizes, rank), sizes


class GlobalBatchNorm1d(nn.BatchNorm1d):
    """BatchNorm1d whose training statistics are those of the global batch
    (all ranks' rows, gathered with gradient); in eval mode, or with one
    process, plain BatchNorm1d (same state_dict)."""

    def forward(self, x):
        rank, w = world()
        if not self.training or w == 1:
            return super().forward(x)
        xs, sizes = gather(x)
        lo = sum(sizes[:rank])
        return super().forward(xs)[lo: lo + x.shape[0]]


def build_model(dim, hidden, out, norm=GlobalBatchNorm1d):
    """The encoder and projection head: Linear, BatchNorm, ReLU, Linear."""
    return nn.Sequential(nn.Linear(dim, hidden), norm(hidden), nn.ReLU(), nn.Linear(hidden, out))


def make_dataset(n, dim, seed):
    """A stand-in dataset: n points of a mixture of 6 Gaussians (replace
    with yours)."""
    rng = np.random.default_rng(seed)
    centres = 2.0 * rng.standard_normal((6, dim))
    x = centres[rng.integers(0, 6, n)] + rng.standard_normal((n, dim))
    return torch.from_numpy(x.astype(np.float32))


def augment(x, idx, step, seed, view, scale=0.3):
    """View `view` of instances idx (rows x) at step: Gaussian noise and a
    random scaling drawn from a generator seeded by (seed, step, instance,
    view) only, so every process computes the same view of an instance."""
    g = torch.Generator()
    out = torch.empty_like(x)
    for j, i in enumerate(idx.tolist()):
        key = hashlib.blake2b(f"{seed}/{step}/{i}/{view}".encode(), digest_size=8).digest()
        g.manual_seed(int.from_bytes(key, "little") >> 1)
        s = 1.0 + scale * (torch.rand(1, generator=g) - 0.5)
        out[j] = s * x[j] + scale * torch.randn(x.shape[1], generator=g)
    return out


def info_nce_sum(z1, z2, temperature):
    """(sum of the NT-Xent terms of this rank's 2·L_r anchors, 2·L): each
    anchor's positive is the other view of its instance, its negatives all
    other 2·L − 2 projections of the global batch (gathered with
    gradient)."""
    rank, _ = world()
    z1, z2 = F.normalize(z1, dim=1), F.normalize(z2, dim=1)
    all1, sizes = gather(z1)
    all2, _ = gather(z2)
    total, n, lo = all1.shape[0], z1.shape[0], sum(sizes[:rank])
    keys = torch.cat([all1, all2])
    logits = torch.cat([z1, z2]) @ keys.T / temperature
    own = torch.arange(lo, lo + n)
    self_col = torch.cat([own, own + total])
    positive = torch.cat([own + total, own])
    rows = torch.arange(2 * n)
    mask = torch.zeros_like(logits, dtype=torch.bool)
    mask[rows, self_col] = True
    logits = logits.masked_fill(mask, float("-inf"))
    return F.cross_entropy(logits, positive, reduction="sum"), 2 * total


def save_atomic(obj, path):
    tmp = f"{path}.tmp{os.getpid()}"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8470")
    p.add_argument("--token-file", help="the server's shared secret (default $BATCHSAMPLER_TOKEN)")
    p.add_argument("--spawn", type=int, default=0, metavar="N",
                   help="start N ranks on this machine with torch.multiprocessing.spawn (instead of torchrun)")
    p.add_argument("--backend", default="gloo")
    p.add_argument("--n", type=int, default=96, help="instances of the stand-in dataset")
    p.add_argument("--dim", type=int, default=8)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--out", type=int, default=16)
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--seed", type=int, default=0, help="model initialisation and augmentations")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--temperature", type=float, default=0.5)
    p.add_argument("--steps", type=int, default=0, help="steps to train (0: the server's total_steps, else one epoch)")
    p.add_argument("--ckpt", help="checkpoint file: resumed from when it exists, written by rank 0")
    p.add_argument("--ckpt-every", type=int, default=0, help="checkpoint every k steps (0: at the end of each epoch)")
    p.add_argument("--save-server-state", action="store_true",
                   help="at each checkpoint also ask the server to write its -state file")
    p.add_argument("--reset-upload", action="store_true",
                   help="rank 0 discards an unfinished sharded upload left on the server by a job that is gone")
    p.add_argument("--log", help="write one JSON line per step to LOG.rank<r>.jsonl")
    p.add_argument("--dump", metavar="DIR", help="(tests) rank 0 saves parameters and gradients of every step in DIR")
    p.add_argument("--die-at-step", type=int, default=-1, metavar="S",
                   help="(tests) every rank kills itself with SIGKILL when step S begins, as a failing node would")
    p.add_argument("--timeout", type=float, default=300, help="seconds a collective may wait for the other ranks")
    return p.parse_args(argv)


def train(args):
    dist.init_process_group(args.backend, timeout=datetime.timedelta(seconds=args.timeout))
    rank, w = world()
    torch.manual_seed(args.seed)
    x = make_dataset(args.n, args.dim, args.data_seed)
    model = build_model(args.dim, args.hidden, args.out)
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=args.momentum)

    @torch.no_grad()
    def embed(step):
        """This rank's rows of the refresh: the inner module in eval mode."""
        lo, hi = shard_rows(args.n, rank, w)
        model.eval()
        z = F.normalize(model(x[lo:hi]), dim=1)
        model.train()
        return z

    sampler = ServiceBatchSampler(args.url, rank=rank, world_size=w, embed_fn=embed, num_instances=args.n,
                                  token_file=args.token_file, timeout=args.timeout, refresh_wait=args.timeout)
    if args.reset_upload:
        if rank == 0:
            sampler.discard_upload()
        dist.barrier()
    step = 0
    if args.ckpt and os.path.exists(args.ckpt):
        ck = torch.load(args.ckpt)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        sampler.load_state_dict(ck["sampler"])
        step = sampler.step
        print(f"rank {rank}: resumed from {args.ckpt} at step {step}", file=sys.stderr, flush=True)
    per_epoch = len(sampler)  # before the first upload: uploads every rank's shard for step 0 (N is then known)
    total = args.steps or sampler.info().get("total_steps") or per_epoch
    ckpt_every = args.ckpt_every or per_epoch
    log = open(f"{args.log}.rank{rank}.jsonl", "a") if args.log else None
    if args.dump and rank == 0:
        os.makedirs(args.dump, exist_ok=True)
    loader = DataLoader(TensorDataset(x, torch.arange(args.n)), batch_sampler=sampler)
    t0 = time.time()
    while step < total:
        for xb, ib in loader:
            if step == args.die_at_step:
                os.kill(os.getpid(), signal.SIGKILL)
            state = {k: v.clone() for k, v in model.state_dict().items()} if args.dump and rank == 0 else None
            views = torch.cat([augment(xb, ib, step, args.seed, 1), augment(xb, ib, step, args.seed, 2)])
            z = ddp(views)
            loss_sum, anchors = info_nce_sum(z[: len(ib)], z[len(ib):], args.temperature)
            opt.zero_grad()
            (loss_sum * (w / anchors)).backward()
            total_loss = loss_sum.detach().clone()
            dist.all_reduce(total_loss)
            loss = total_loss.item() / anchors
            if state is not None:
                grads = {n: p.grad.clone() for n, p in model.named_parameters()}
                save_atomic({"step": step, "state": state, "grads": grads, "loss": loss},
                            os.path.join(args.dump, f"step{step}.pt"))
            opt.step()
            if log:
                log.write(json.dumps({"step": step, "rank": rank, "world": w, "indices": ib.tolist(),
                                      "global_size": anchors // 2, "loss": loss}) + "\n")
                log.flush()
            step += 1
            if args.ckpt and rank == 0 and (step % ckpt_every == 0 or step == total):
                # The step to train next, not sampler.step: with DataLoader
                # workers prefetching, the sampler is ahead of training.
                save_atomic({"model": model.state_dict(), "optimizer": opt.state_dict(),
                             "sampler": dict(sampler.state_dict(), step=step)}, args.ckpt)
                if args.save_server_state:
                    sampler.save_server_state()
            if rank == 0 and (step % per_epoch == 0 or step == total):
                print(f"step {step}/{total}: loss {loss:.4f} ({time.time() - t0:.1f} s)", flush=True)
            if step >= total:
                break
    if log:
        log.close()
    dist.destroy_process_group()


def run(args):
    """Runs one rank; a server error ends it with the server's message."""
    try:
        train(args)
    except ServiceError as e:
        rank = os.environ.get("RANK", "?")
        print(f"ddp_simclr rank {rank}: {e}", file=sys.stderr, flush=True)
        sys.exit(3)


def _spawned(local_rank, n, args):
    os.environ.update(RANK=str(local_rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(n), LOCAL_WORLD_SIZE=str(n))
    run(args)


def main(argv=None):
    args = parse_args(argv)
    if args.spawn:
        with socket.socket() as s:  # a free port for the rendezvous
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(port))
        torch.multiprocessing.spawn(_spawned, args=(args.spawn, args), nprocs=args.spawn)
        return
    if "RANK" not in os.environ:
        sys.exit("ddp_simclr: no RANK in the environment: start it with torchrun --nproc_per_node N, "
                 "with --spawn N, or with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT set")
    run(args)


if __name__ == "__main__":
    main()
