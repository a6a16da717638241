#!/usr/bin/python3
"""The Go framework and PyTorch side by side, interleaved, on the same work
(issue 15; `make bench-vs-pytorch`; not part of `make test` or CI).

The workloads, each run on both sides (--only picks some):

  GraphCL step: 128 NCI1 graphs × 2 views (view 1 the graphs, view 2
    GraphCL's random choice of node dropping 10%, edge removal 10%, subgraph
    20%, attribute masking 10%), GIN 3 × 32 (GINConv with Linear-ReLU-Linear,
    then ReLU and BatchNorm; sum pooling of every layer, concatenated: 96-d),
    head Linear(96,96)-ReLU-Linear(96,96), GraphCL's InfoNCE (one direction,
    positive outside the denominator, τ = 0.2), backward, Adam lr 0.01.
  SimCLR step: 128 images of the shared CIFAR-10 subset × 2 views (random
    resized crop 0.08-1, flip 0.5, colour jitter 0.4/0.4/0.4/0.1 with p 0.8,
    grayscale 0.2, normalisation), CIFAR ResNet-14 (3×3 stem of 16, stages
    16/32/64 of two BasicBlocks, BatchNorm), head 64-64-128, NT-Xent τ = 0.5,
    backward, Adam lr 1e-3.
  MoCo v3 step: the SimCLR step's images, views and ResNet-14 (no head) with
    MoCo v3's heads and recipe (configs/mocov3-cifar10-subset.yaml): projector
    64-1024-128 (last BatchNorm without affine), predictor 128-1024-128, both
    views through the online network and through the momentum encoder and
    projector (no gradient), 2τ·(ctr(q1,k2) + ctr(q2,k1)) at τ = 0.2, backward,
    LARS lr 0.3 (trust coefficient 0.02, weight decay 1e-5), the momentum
    update (0.99 rising to 1 on a cosine).
  MVGRL step: the graph table's MVGRL cells on NCI1 and COLLAB.

The Go side is `go test ./train -bench VsTorch` (train/vstorch_bench_test.go);
this script builds that test binary once and runs it. The PyTorch side is
written here with plain torch ops (no PyG, no torchvision): GIN aggregation
and pooling with index_add_, the image augmentation as batched tensor ops.
Rounds alternate the sides (Go first in even rounds, PyTorch first in odd
ones), each side with its own fresh model, untimed warm-up steps, then timed
steps; a repetition's figure is the mean over its timed steps. The table
gives min–max over rounds and the per-round ratios.

Checks that both sides compute the same thing: every run compares the
parameter names and shapes (and counts) of the two GINs, the two
ResNet-14s, the two MoCo v3 models (momentum copies included) and the two
MVGRLs, the ResNet's forward FLOPs per image, MoCo v3's hyperparameters, and
the mean node and edge counts of both views' graph batches. The image augmentation
(apply_views), given the same per-image draws, was checked once against
augment.ResizeCrop, HorizontalFlip, ApplyJitter and Grayscale with a
throwaway Go program: largest difference 8.3e-7 over 256 CIFAR images.

PyTorch's OpenMP threads run with OMP_WAIT_POLICY=passive unless
--omp-wait-policy or the environment says otherwise (see _omp_wait_policy).

Usage (Debian's python3-torch; 2 threads on both sides by default):
  /usr/bin/python3 scripts/bench_vs_pytorch.py            # 5 rounds
  /usr/bin/python3 scripts/bench_vs_pytorch.py --quick    # 1 round, few steps
Writes runs/bench-vs-pytorch/<time>/results.md and results.json.
"""
import argparse
import datetime
import glob
import hashlib
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def die(msg):
    print("bench_vs_pytorch: " + msg, file=sys.stderr)
    sys.exit(2)


def _omp_wait_policy():
    """OMP_WAIT_POLICY for PyTorch's OpenMP threads, fixed before torch loads
    its OpenMP runtime: --omp-wait-policy, else the environment's, else
    passive. With libgomp's default (spin, then sleep) a thread waiting at
    the end of a parallel region spins while the other is descheduled: with
    other jobs on the cores a 2-thread GIN step measured 530-1530 ms instead
    of 22 ms."""
    for i, arg in enumerate(sys.argv):
        if arg.startswith("--omp-wait-policy="):
            return arg.split("=", 1)[1]
        if arg == "--omp-wait-policy" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
    return os.environ.get("OMP_WAIT_POLICY") or "passive"


os.environ["OMP_WAIT_POLICY"] = _omp_wait_policy()

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:
    die("needs numpy and PyTorch, which %s cannot import (%s). Run it with Debian's "
        "/usr/bin/python3 (apt-get install python3-torch python3-numpy) or any Python "
        "that has torch." % (sys.executable, e))


# ---------------------------------------------------------------- data


def data_root(arg):
    """The data root: --data, else $BATCHSAMPLER_DATA, else ../shared/data
    beside the repository (what the Go side uses too)."""
    if arg:
        return os.path.abspath(arg), "--data"
    env = os.environ.get("BATCHSAMPLER_DATA")
    if env:
        return os.path.abspath(env), "$BATCHSAMPLER_DATA"
    return os.path.abspath(os.path.join(REPO, "..", "shared", "data")), "../shared/data beside the repository"


def need_file(path, what, root, how):
    if not os.path.isfile(path):
        die("%s not found: expected the file %s (data root %s from %s). "
            "Set BATCHSAMPLER_DATA or --data to the directory holding tu/NCI1/ and cifar10/."
            % (what, path, root, how))


def read_ints(path):
    with open(path) as f:
        txt = f.read().replace(",", " ")
    try:
        return np.array(txt.split(), dtype=np.int64)
    except ValueError as e:
        die("%s: expected integers (%s)" % (path, e))


def read_tu(root, how, name="NCI1"):
    """Reads a TU dataset with node labels from the data root (see parse_tu):
    one-hot labels, GraphCL's features for a labelled dataset."""
    d = os.path.join(root, "tu", name)
    for k in ("A", "graph_indicator", "graph_labels", "node_labels"):
        need_file(os.path.join(d, "%s_%s.txt" % (name, k)), "%s's TU file %s_%s.txt" % (name, name, k), root, how)
    return parse_tu(d, name)


def parse_tu(d, name, features="auto", max_degree=0):
    """Reads the TU dataset NAME in directory d as the Go reader does:
    undirected edges stored once with u <= v, duplicates removed, node labels
    shifted to 0..L-1. Features as the Go side's "auto" (one-hot node labels,
    else a constant 1 per node) or "auto-degree" (one-hot labels, or one-hot
    min(degree, max_degree) where there is at most one node label; a
    self-loop counts once, as in Graph.Degrees; max_degree 0 means the
    largest degree in the dataset, as in data.SetFeatures). Returns
    (graphs, d_in)."""
    files = {k: os.path.join(d, "%s_%s.txt" % (name, k)) for k in
             ("A", "graph_indicator", "graph_labels", "node_labels")}
    for k in ("A", "graph_indicator", "graph_labels"):
        if not os.path.isfile(files[k]):
            die("%s not found: expected the TU file %s_%s.txt of %s in %s" % (files[k], name, k, name, d))
    if features not in ("auto", "auto-degree"):
        die("features %r: only auto and auto-degree are made here" % features)
    ind = read_ints(files["graph_indicator"]) - 1
    glab = read_ints(files["graph_labels"])
    a = read_ints(files["A"])
    if a.size % 2:
        die("%s: expected pairs 'u, v' (an odd count of integers)" % files["A"])
    a = a.reshape(-1, 2) - 1
    n_nodes, n_graphs = ind.size, glab.size
    nlab, n_labels = None, 1
    if os.path.isfile(files["node_labels"]):
        nlab = read_ints(files["node_labels"])
        if nlab.size != n_nodes:
            die("%s: %d lines, expected %d (one per line of %s)" % (files["node_labels"], nlab.size, n_nodes, files["graph_indicator"]))
        nlab = nlab - nlab.min()
        n_labels = int(nlab.max()) + 1
    degree = features == "auto-degree" and n_labels <= 1
    if ind.min() != 0 or ind.max() != n_graphs - 1 or np.any(np.diff(ind) < 0):
        die("%s: expected sorted graph ids 1..%d" % (files["graph_indicator"], n_graphs))
    start = np.searchsorted(ind, np.arange(n_graphs + 1))
    u, v = np.minimum(a[:, 0], a[:, 1]), np.maximum(a[:, 0], a[:, 1])
    key = np.unique(u * n_nodes + v)
    u, v = key // n_nodes, key % n_nodes
    eg = ind[u]
    if np.any(eg != ind[v]):
        die("%s: an edge joins two graphs" % files["A"])
    estart = np.searchsorted(eg, np.arange(n_graphs + 1))
    edges, degs = [], []
    for g in range(n_graphs):
        lo, hi = start[g], start[g + 1]
        e = np.stack([u[estart[g]:estart[g + 1]] - lo, v[estart[g]:estart[g + 1]] - lo], 1)
        edges.append(e)
        if degree:
            n = hi - lo
            degs.append(np.bincount(e[:, 0], minlength=n) + np.bincount(e[e[:, 0] != e[:, 1], 1], minlength=n))
    if degree and max_degree <= 0:  # 0: the largest degree in the dataset, as the Go side
        max_degree = int(max(d.max() for d in degs if d.size))
    graphs = []
    for g in range(n_graphs):
        lo, hi = start[g], start[g + 1]
        n = hi - lo
        e = edges[g]
        if degree:
            x = np.zeros((n, max_degree + 1), dtype=np.float32)
            x[np.arange(n), np.minimum(degs[g], max_degree)] = 1
        elif nlab is None:
            x = np.ones((n, 1), dtype=np.float32)
        else:
            x = np.zeros((n, n_labels), dtype=np.float32)
            x[np.arange(n), nlab[lo:hi]] = 1
        graphs.append(Graph(n, e, x))
    return graphs, (max_degree + 1 if degree else n_labels)


class Graph:
    __slots__ = ("n", "edges", "x", "_nbrs")

    def __init__(self, n, edges, x):
        self.n, self.edges, self.x, self._nbrs = n, edges, x, None

    def nbrs(self):
        # Neighbour lists, built once per dataset graph (the Go side builds
        # its CSR in every subgraph call; this favours PyTorch slightly).
        if self._nbrs is None:
            nb = [[] for _ in range(self.n)]
            for a, b in self.edges.tolist():
                if a != b:
                    nb[a].append(b)
                    nb[b].append(a)
            self._nbrs = nb
        return self._nbrs


def read_cifar(root, how):
    """The training files of the CIFAR-10 subset (data_batch_*.bin, sorted, as
    data.ReadCIFAR10Dir reads them): N×3×32×32 float32 in [0,1]."""
    d = os.path.join(root, "cifar10")
    files = sorted(glob.glob(os.path.join(d, "data_batch_*.bin")))
    if not files:
        die("CIFAR-10 training files not found: expected %s (binary records of 1 label byte "
            "+ 3072 pixel bytes; data root %s from %s)" % (os.path.join(d, "data_batch_*.bin"), root, how))
    parts = []
    for p in files:
        raw = np.fromfile(p, dtype=np.uint8)
        if raw.size == 0 or raw.size % 3073:
            die("%s: %d bytes, expected a multiple of 3073 (CIFAR-10 records)" % (p, raw.size))
        parts.append(raw.reshape(-1, 3073)[:, 1:])
    px = np.concatenate(parts).reshape(-1, 3, 32, 32).astype(np.float32) / 255
    mean = px.astype(np.float64).mean(axis=(0, 2, 3))
    std = px.astype(np.float64).std(axis=(0, 2, 3))
    return torch.from_numpy(px), torch.tensor(mean, dtype=torch.float32), torch.tensor(std, dtype=torch.float32), files


# ---------------------------------------------------------------- graph views (augment/*.go)


def count(n, ratio):
    return min(max(int(math.floor(n * ratio * (1 + 1e-12))), 0), n)


def induce(g, keep):
    ids = np.cumsum(keep) - 1
    e = g.edges
    if e.size:
        e = e[keep[e[:, 0]] & keep[e[:, 1]]]
        e = ids[e]
    return Graph(int(keep.sum()), e, g.x[keep])


def node_drop(g, rng, ratio=0.1):
    k = count(g.n, ratio)
    if k == 0:
        return Graph(g.n, g.edges.copy(), g.x.copy())
    keep = np.zeros(g.n, dtype=bool)
    keep[rng.choice(g.n, g.n - k, replace=False)] = True
    return induce(g, keep)


def edge_remove(g, rng, ratio=0.1):
    m = len(g.edges)
    k = count(m, ratio)
    if k == 0:
        return Graph(g.n, g.edges.copy(), g.x.copy())
    keep = np.ones(m, dtype=bool)
    keep[rng.choice(m, k, replace=False)] = False
    return Graph(g.n, g.edges[keep], g.x.copy())


def subgraph(g, rng, ratio=0.2):
    # augment.Subgraph: grow from a random node, each time adding a node
    # drawn uniformly from the current frontier, to ⌊n·ratio⌋ nodes.
    n = g.n
    target = max(1, count(n, ratio))
    nb = g.nbrs()
    start = int(rng.integers(n))
    kept = np.zeros(n, dtype=bool)
    kept[start] = True
    queued = [False] * n
    frontier = []
    for w in nb[start]:
        if not queued[w]:
            queued[w] = True
            frontier.append(w)
    nk = 1
    while nk < target and frontier:
        i = int(rng.integers(len(frontier)))
        v = frontier[i]
        frontier[i] = frontier[-1]
        frontier.pop()
        kept[v] = True
        nk += 1
        for w in nb[v]:
            if not kept[w] and not queued[w]:
                queued[w] = True
                frontier.append(w)
    return induce(g, kept)


def attr_mask(g, rng, ratio=0.1):
    x = g.x.copy()
    k = count(g.n, ratio)
    if k:
        rows = rng.choice(g.n, k, replace=False)
        x[rows] = 0.5 + 0.5 * rng.standard_normal((k, x.shape[1]), dtype=np.float32)
    return Graph(g.n, g.edges.copy(), x)


AUGS = (node_drop, edge_remove, subgraph, attr_mask)


def random4(g, rng):
    return AUGS[int(rng.integers(4))](g, rng)


def pack(graphs):
    """One batch: features, message source/target (both directions of every
    edge, a self-loop once) and the graph of every node."""
    sizes = np.array([g.n for g in graphs])
    off = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    x = np.concatenate([g.x for g in graphs])
    e = np.concatenate([g.edges + o for g, o in zip(graphs, off)])
    loop = e[:, 0] == e[:, 1]
    src = np.concatenate([e[:, 0], e[~loop, 1]])
    dst = np.concatenate([e[:, 1], e[~loop, 0]])
    batch = np.repeat(np.arange(len(graphs)), sizes)
    return (torch.from_numpy(x), torch.from_numpy(src), torch.from_numpy(dst),
            torch.from_numpy(batch), len(graphs))


# ---------------------------------------------------------------- models (names as the Go parameters')


class GINLayer(nn.Module):
    def __init__(self, d_in, hidden):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.bn = nn.BatchNorm1d(hidden)


class GIN(nn.Module):
    """model.GIN: h' = BN(ReLU(MLP(h_v + Σ_u h_u))), sum pooling of every
    layer concatenated, head Linear-ReLU-Linear."""

    def __init__(self, d_in, hidden=32, layers=3, proj=None):
        super().__init__()
        self.gin = nn.ModuleList([GINLayer(d_in if l == 0 else hidden, hidden) for l in range(layers)])
        emb = hidden * layers
        proj = proj or emb
        self.proj = nn.Sequential(nn.Linear(emb, proj), nn.ReLU(), nn.Linear(proj, proj))

    def forward(self, x, src, dst, batch, n_graphs):
        h, pooled = x, []
        for layer in self.gin:
            agg = h.index_add(0, dst, h.index_select(0, src))  # (A + I)·h
            h = layer.bn(F.relu(layer.mlp(agg)))
            pooled.append(h.new_zeros(n_graphs, h.shape[1]).index_add_(0, batch, h))
        return self.proj(torch.cat(pooled, 1))


class BasicBlock(nn.Module):
    def __init__(self, d_in, d_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(d_in, d_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(d_out)
        self.conv2 = nn.Conv2d(d_out, d_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(d_out)
        self.shortcut = None
        if stride != 1 or d_in != d_out:
            self.shortcut = nn.Sequential(nn.Conv2d(d_in, d_out, 1, stride, bias=False), nn.BatchNorm2d(d_out))

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(out + (self.shortcut(x) if self.shortcut is not None else x))


class ResNet(nn.Module):
    """model.ResNet with the CIFAR stem (3×3, stride 1, no pooling), global
    average pooling and the projection head (head=False: none, as
    ResNetConfig.NoHead; forward returns the pooled features)."""

    def __init__(self, widths=(16, 32, 64), blocks=(2, 2, 2), proj_hidden=64, proj=128, head=True):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        d_in = widths[0]
        for s, (w, nb) in enumerate(zip(widths, blocks)):
            layer = []
            for j in range(nb):
                layer.append(BasicBlock(d_in, w, 2 if s > 0 and j == 0 else 1))
                d_in = w
            setattr(self, "layer%d" % (s + 1), nn.Sequential(*layer))
        self.n_stages = len(widths)
        self.embed_dim = d_in
        self.proj = nn.Sequential(nn.Linear(d_in, proj_hidden), nn.ReLU(), nn.Linear(proj_hidden, proj)) if head else None

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        for s in range(self.n_stages):
            h = getattr(self, "layer%d" % (s + 1))(h)
        h = h.mean((2, 3))
        return self.proj(h) if self.proj is not None else h


def forward_flops(model, x):
    """Multiply-add FLOPs of the convolutions and linear layers per image, as
    model.(*ResNet).ForwardFLOPs counts them."""
    total = [0]

    def conv(m, inp, out):
        total[0] += 2 * out[0].numel() * m.in_channels * m.kernel_size[0] * m.kernel_size[1]

    def lin(m, inp, out):
        total[0] += 2 * m.in_features * m.out_features

    hooks = [m.register_forward_hook(conv) for m in model.modules() if isinstance(m, nn.Conv2d)]
    hooks += [m.register_forward_hook(lin) for m in model.modules() if isinstance(m, nn.Linear)]
    model.eval()
    with torch.no_grad():
        model(x[:1])
    model.train()
    for h in hooks:
        h.remove()
    return total[0]


def torch_params(model, name=lambda n: n):
    """Name (through name, which maps PyTorch's to the Go side's), shape and
    trainability (requires_grad; MoCo v3's momentum encoder has none) of
    every parameter and BatchNorm running statistic (num_batches_tracked,
    which the Go side does not keep, left out)."""
    out = [{"name": name(n), "shape": list(p.shape), "trainable": p.requires_grad} for n, p in model.named_parameters()]
    out += [{"name": name(n), "shape": list(b.shape), "trainable": False} for n, b in model.named_buffers()
            if not n.endswith("num_batches_tracked")]
    return out


def compare_params(go, pt):
    """Compares the Go and PyTorch parameter lists by name. Go stores Linear
    weights in×out, PyTorch out×in."""
    problems = []
    g = {e["name"]: e for e in go}
    p = {e["name"]: e for e in pt}
    for n in sorted(set(g) - set(p)):
        problems.append("only in Go: %s %s" % (n, g[n]["shape"]))
    for n in sorted(set(p) - set(g)):
        problems.append("only in PyTorch: %s %s" % (n, p[n]["shape"]))
    for n in sorted(set(g) & set(p)):
        gs, ps = g[n]["shape"], p[n]["shape"]
        if gs != ps and not (len(gs) == 2 and gs[::-1] == ps):
            problems.append("%s: Go shape %s, PyTorch %s" % (n, gs, ps))
        if g[n]["trainable"] != p[n]["trainable"]:
            problems.append("%s: trainable %s in Go, %s in PyTorch" % (n, g[n]["trainable"], p[n]["trainable"]))

    def sizes(es):
        t = sum(math.prod(e["shape"]) for e in es if e["trainable"])
        return t, sum(math.prod(e["shape"]) for e in es if not e["trainable"])

    return {"go": sizes(go), "torch": sizes(pt), "tensors": (len(go), len(pt)), "problems": problems}


# ---------------------------------------------------------------- MoCo v3 (train/mocov3.go; facebookresearch/moco-v3 moco/builder.py, moco/optimizer.py)

# MOCO is MoCo v3 as configs/mocov3-cifar10-subset.yaml sets it (the config
# BenchmarkVsTorchMoCoV3 runs, with model.arch resnet14 and augment.image
# simclr); the Go benchmark logs its values ("vstorch-moco") and the script
# checks them against these.
MOCO = {"proj_hidden": 1024, "proj_dim": 128, "pred_hidden": 1024, "momentum": 0.99, "temperature": 0.2,
        "loss_form": "simcse", "optim": "lars", "lr": 0.3, "weight_decay": 1e-5, "trust_coefficient": 0.02,
        "lars_momentum": 0.9, "nesterov": False, "epochs": 25}


def moco_mlp(num_layers, input_dim, mlp_dim, output_dim, last_bn=True):
    """moco-v3's MoCo._build_mlp (model.MLP): Linear layers without bias,
    BatchNorm1d and ReLU after every one but the last, after the last a
    BatchNorm1d without affine parameters when last_bn."""
    mlp = []
    for l in range(num_layers):
        dim1 = input_dim if l == 0 else mlp_dim
        dim2 = output_dim if l == num_layers - 1 else mlp_dim
        mlp.append(nn.Linear(dim1, dim2, bias=False))
        if l < num_layers - 1:
            mlp.append(nn.BatchNorm1d(dim2))
            mlp.append(nn.ReLU(inplace=True))
        elif last_bn:
            mlp.append(nn.BatchNorm1d(dim2, affine=False))
    return nn.Sequential(*mlp)


class MoCoV3(nn.Module):
    """moco-v3's MoCo_ResNet with the script's ResNet-14 (no head) as the base
    encoder: the projector (2 layers, hidden proj_hidden, last BatchNorm
    without affine) is a module of its own instead of the encoder's fc, the
    predictor has hidden pred_hidden (the reference uses mlp_dim for both);
    the momentum encoder and projector start as copies without gradient.
    go_name maps the parameter names to the Go side's (mocoV3.Params)."""

    def __init__(self, proj_hidden, proj_dim, pred_hidden, T):
        super().__init__()
        self.T = T
        self.base_encoder = ResNet(head=False)
        self.projector = moco_mlp(2, self.base_encoder.embed_dim, proj_hidden, proj_dim)
        self.predictor = moco_mlp(2, proj_dim, pred_hidden, proj_dim, last_bn=False)
        self.momentum_encoder = ResNet(head=False)
        self.momentum_projector = moco_mlp(2, self.base_encoder.embed_dim, proj_hidden, proj_dim)
        self.online = [p for m in (self.base_encoder, self.projector) for p in m.parameters()]
        self.momentum = [p for m in (self.momentum_encoder, self.momentum_projector) for p in m.parameters()]
        for pb, pm in zip(self.online, self.momentum):
            pm.data.copy_(pb.data)
            pm.requires_grad = False

    @staticmethod
    def go_name(n):
        for pt, go in (("base_encoder.", ""), ("momentum_encoder.", "momentum."), ("momentum_projector.", "momentum.projector.")):
            if n.startswith(pt):
                return go + n[len(pt):]
        return n

    @torch.no_grad()
    def update_momentum(self, m):
        """The reference's _update_momentum_encoder (p_m ← m·p_m + (1−m)·p_b),
        in place over all tensors at once."""
        torch._foreach_mul_(self.momentum, m)
        torch._foreach_add_(self.momentum, self.online, alpha=1 - m)

    def contrastive_loss(self, q, k):
        """The reference's contrastive_loss on one process: cross-entropy over
        q·kᵀ/τ (both normalised) with the diagonal as targets, times 2τ."""
        q, k = F.normalize(q, dim=1), F.normalize(k, dim=1)
        logits = q @ k.t() / self.T
        return F.cross_entropy(logits, torch.arange(logits.shape[0])) * (2 * self.T)

    def forward(self, x1, x2, m):
        q1 = self.predictor(self.projector(self.base_encoder(x1)))
        q2 = self.predictor(self.projector(self.base_encoder(x2)))
        with torch.no_grad():
            self.update_momentum(m)
            k1 = self.momentum_projector(self.momentum_encoder(x1))
            k2 = self.momentum_projector(self.momentum_encoder(x2))
        return self.contrastive_loss(q1, k2) + self.contrastive_loss(q2, k1)


class LARS(torch.optim.Optimizer):
    """moco-v3's LARS (moco/optimizer.py; optim.LARS): no weight decay or
    trust-ratio scaling for parameters of one dimension."""

    def __init__(self, params, lr=0, weight_decay=0, momentum=0.9, trust_coefficient=0.001):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, trust_coefficient=trust_coefficient))

    @torch.no_grad()
    def step(self):
        for g in self.param_groups:
            for p in g["params"]:
                dp = p.grad
                if dp is None:
                    continue
                if p.ndim > 1:
                    dp = dp.add(p, alpha=g["weight_decay"])
                    param_norm, update_norm = torch.norm(p), torch.norm(dp)
                    one = torch.ones_like(param_norm)
                    q = torch.where(param_norm > 0., torch.where(update_norm > 0, g["trust_coefficient"] * param_norm / update_norm, one), one)
                    dp = dp.mul(q)
                state = self.state[p]
                if "mu" not in state:
                    state["mu"] = torch.zeros_like(p)
                mu = state["mu"]
                mu.mul_(g["momentum"]).add_(dp)
                p.add_(mu, alpha=-g["lr"])


def moco_total(n, batch=128):
    """The length of the momentum schedule: MOCO's epochs of batches of
    `batch` out of n images (the Go benchmark's vsTorchTotal)."""
    return MOCO["epochs"] * -(-n // batch)


def moco_momentum(m0, step, total):
    """moco-v3's adjust_moco_momentum per step (optim.EMAMomentum): m0 rising
    to 1 on a half cosine over total steps."""
    step = min(max(step, 0), total)
    return 1 - (1 - m0) * (math.cos(math.pi * step / total) + 1) / 2


# ---------------------------------------------------------------- MVGRL (model/mvgrl.go; kavehhassani/mvgrl graph/train.py)


def mvgrl_views(g, alpha, eps, top_k):
    """Both views of a graph as sparse COO parts (int64 2×nnz indices,
    float32 values): Â = D^-½(A+I)D^-½ and its PPR diffusion
    α(I − (1−α)Â)^-1 (the reference's compute_ppr, a dense inverse), entries
    below eps dropped, then the top_k largest of every row kept
    (data.PPRDiffusion; ties at the cut kept)."""
    n = g.n
    a = np.zeros((n, n))
    if len(g.edges):
        a[g.edges[:, 0], g.edges[:, 1]] = 1
        a[g.edges[:, 1], g.edges[:, 0]] = 1
    a += np.eye(n)
    dinv = 1 / np.sqrt(a.sum(1))
    ahat = dinv[:, None] * a * dinv[None, :]
    s = alpha * np.linalg.inv(np.eye(n) - (1 - alpha) * ahat)
    s[s < eps] = 0
    if 0 < top_k < n:
        cut = -np.partition(-s, top_k - 1, axis=1)[:, top_k - 1:top_k]
        s[s < cut] = 0

    def coo(m):
        r, c = np.nonzero(m)
        return torch.from_numpy(np.stack([r, c]).astype(np.int64)), torch.from_numpy(m[r, c].astype(np.float32))
    return coo(ahat), coo(s)


def mvgrl_pack(graphs, views):
    """One batch: features, both views as block-diagonal sparse COO tensors
    over the packed nodes, and the graph of every node."""
    sizes = [g.n for g in graphs]
    off = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    n = int(sum(sizes))
    x = torch.from_numpy(np.concatenate([g.x for g in graphs]))
    batch = torch.from_numpy(np.repeat(np.arange(len(graphs)), sizes))
    adj = []
    for k in range(2):
        idx = torch.cat([v[k][0] + int(o) for v, o in zip(views, off)], 1)
        val = torch.cat([v[k][1] for v in views])
        adj.append(torch.sparse_coo_tensor(idx, val, (n, n)))
    return x, adj, batch


class GCNLayer(nn.Module):
    """The reference's GCNLayer: fc (Linear without bias) → propagation →
    bias → PReLU, with the propagation a sparse matrix product instead of
    its dense padded bmm."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out, bias=False)
        self.bias = nn.Parameter(torch.zeros(d_out))
        self.act = nn.PReLU()
        nn.init.xavier_uniform_(self.fc.weight)

    def forward(self, x, adj):
        return self.act(torch.sparse.mm(adj, self.fc(x)) + self.bias)


class GCN(nn.Module):
    """The reference's GCN: its layers, and the sum over every graph's
    nodes of every layer's output, concatenated."""

    def __init__(self, d_in, hidden, layers):
        super().__init__()
        self.layers = nn.ModuleList([GCNLayer(d_in if l == 0 else hidden, hidden) for l in range(layers)])

    def forward(self, x, adj, batch, n_graphs):
        h, pooled = x, []
        for layer in self.layers:
            h = layer(h, adj)
            pooled.append(h.new_zeros(n_graphs, h.shape[1]).index_add_(0, batch, h))
        return h, torch.cat(pooled, 1)


class MLP(nn.Module):
    """The reference's MLP head: 3 × (Linear + PReLU) plus a linear shortcut."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.ffn = nn.Sequential(nn.Linear(d_in, d_out), nn.PReLU(), nn.Linear(d_out, d_out), nn.PReLU(),
                                 nn.Linear(d_out, d_out), nn.PReLU())
        self.linear_shortcut = nn.Linear(d_in, d_out)

    def forward(self, x):
        return self.ffn(x) + self.linear_shortcut(x)


class MVGRL(nn.Module):
    """The reference's Model (parameter names as its state_dict and the Go
    model's): gnn1 on the adjacency, gnn2 on the diffusion, mlp1 the node
    head, mlp2 the graph head."""

    def __init__(self, d_in, hidden=128, layers=4):
        super().__init__()
        self.mlp1 = MLP(hidden, hidden)
        self.mlp2 = MLP(layers * hidden, hidden)
        self.gnn1 = GCN(d_in, hidden, layers)
        self.gnn2 = GCN(d_in, hidden, layers)

    def forward(self, x, adj, diff, batch, n_graphs):
        lv1, gv1 = self.gnn1(x, adj, batch, n_graphs)
        lv2, gv2 = self.gnn2(x, diff, batch, n_graphs)
        return self.mlp1(lv1), self.mlp2(gv1), self.mlp1(lv2), self.mlp2(gv2)


def local_global_jsd(l, g, batch):
    """InfoGraph's Jensen–Shannon local–global estimator (the reference's
    local_global_loss_ with measure JSD, without padding: loss.LocalGlobal)."""
    res = l @ g.t()
    pos = torch.zeros_like(res)
    pos[torch.arange(res.shape[0]), batch] = 1
    log2 = math.log(2)
    e_pos = ((log2 - F.softplus(-res)) * pos).sum() / res.shape[0]
    e_neg = ((F.softplus(-res) + res - log2) * (1 - pos)).sum() / (res.shape[0] * (res.shape[1] - 1))
    return e_neg - e_pos


# ---------------------------------------------------------------- losses (loss/kernel.go)


def graphcl_loss(z1, z2, tau=0.2):
    """GraphCL's loss_cal: anchors in view 1, candidates in view 2, the
    positive outside the denominator; in log-sum-exp form."""
    s = F.normalize(z1, dim=1, eps=1e-8) @ F.normalize(z2, dim=1, eps=1e-8).t() / tau
    eye = torch.eye(s.shape[0], dtype=torch.bool)
    return (torch.logsumexp(s.masked_fill(eye, float("-inf")), 1) - s.diagonal()).mean()


def nt_xent(z1, z2, tau=0.5):
    """SimCLR's NT-Xent over the 2B stacked views."""
    b = z1.shape[0]
    z = F.normalize(torch.cat([z1, z2]), dim=1, eps=1e-8)
    s = (z @ z.t() / tau).fill_diagonal_(float("-inf"))
    target = torch.cat([torch.arange(b, 2 * b), torch.arange(0, b)])
    return F.cross_entropy(s, target)


# ---------------------------------------------------------------- image views (augment.SimCLRCIFAR)

LUMA = (0.2989, 0.587, 0.114)


def gray(x):
    return (LUMA[0] * x[:, 0] + LUMA[1] * x[:, 1] + LUMA[2] * x[:, 2]).unsqueeze(1)


def rgb2hsv(img):  # torchvision.transforms.functional_tensor._rgb2hsv
    r, g, b = img.unbind(1)
    maxc = img.max(1).values
    minc = img.min(1).values
    eqc = maxc == minc
    cr = maxc - minc
    ones = torch.ones_like(maxc)
    s = cr / torch.where(eqc, ones, maxc)
    crd = torch.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / crd, (maxc - g) / crd, (maxc - b) / crd
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = torch.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return h, s, maxc


def hsv2rgb(h, s, v):  # torchvision.transforms.functional_tensor._hsv2rgb
    i = torch.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.to(torch.int32) % 6
    p = (v * (1.0 - s)).clamp(0, 1)
    q = (v * (1.0 - s * f)).clamp(0, 1)
    t = (v * (1.0 - s * (1.0 - f))).clamp(0, 1)
    mask = (i.unsqueeze(1) == torch.arange(6, dtype=torch.int32).view(1, -1, 1, 1)).to(v.dtype)
    a = torch.stack([torch.stack(c, 1) for c in ((v, q, p, p, t, v), (t, v, v, q, p, p), (p, p, t, v, v, q))], 1)
    return torch.einsum("nijk,nxijk->nxjk", mask, a)


def col(f):
    return f.view(-1, 1, 1, 1)


def brightness(x, f):
    return (x * col(f)).clamp(0, 1)


def contrast(x, f):
    m = gray(x).mean((1, 2, 3), keepdim=True)
    return (col(f) * x + (1 - col(f)) * m).clamp(0, 1)


def saturation(x, f):
    return (col(f) * x + (1 - col(f)) * gray(x)).clamp(0, 1)


def hue(x, d):
    h, s, v = rgb2hsv(x)
    return hsv2rgb(torch.remainder(h + d.view(-1, 1, 1), 1.0), s, v)


JITTER = (brightness, contrast, saturation, hue)


def resize_matrix(start, size, side):
    """n×side×side bilinear weights that resize the window [start, start+size)
    of a line of side pixels to side pixels, as augment.ResizeCrop does
    (half-pixel centres, source positions clamped to the window: torchvision's
    resize of the cropped tensor)."""
    n = start.shape[0]
    size = size.view(-1, 1)
    r = (size / side * (torch.arange(side, dtype=torch.float32) + 0.5) - 0.5).clamp(min=0)
    i0 = torch.minimum(torch.floor(r), size - 1)
    i1 = torch.minimum(i0 + 1, size - 1)
    lam = r - i0
    m = torch.zeros(n, side, side)
    m.scatter_add_(2, (start.view(-1, 1) + i0).long().unsqueeze(2), (1 - lam).unsqueeze(2))
    m.scatter_add_(2, (start.view(-1, 1) + i1).long().unsqueeze(2), lam.unsqueeze(2))
    return m


def draw_view_params(n, H, W):
    """Every image's draws of augment.SimCLRCIFAR: random resized crop (scale
    0.08-1, ratio 3/4-4/3, torchvision's 10 attempts, else the whole square
    image), flip with p 0.5, colour jitter 0.4/0.4/0.4/0.1 in a random order
    with p 0.8, grayscale with p 0.2."""
    scale = torch.empty(n, 10).uniform_(0.08, 1.0)
    logr = torch.empty(n, 10).uniform_(math.log(3 / 4), math.log(4 / 3))
    target, aspect = H * W * scale, torch.exp(logr)
    cw = torch.round(torch.sqrt(target * aspect))
    ch = torch.round(torch.sqrt(target / aspect))
    ok = (cw > 0) & (cw <= W) & (ch > 0) & (ch <= H)
    first = ok.to(torch.int8).argmax(1)
    rows = torch.arange(n)
    found = ok.any(1)
    cw = torch.where(found, cw[rows, first], torch.full((n,), float(W)))
    ch = torch.where(found, ch[rows, first], torch.full((n,), float(H)))
    return {
        "top": torch.floor(torch.rand(n) * (H - ch + 1)), "left": torch.floor(torch.rand(n) * (W - cw + 1)),
        "ch": ch, "cw": cw, "flip": torch.rand(n) < 0.5,
        "jitter": torch.rand(n) < 0.8, "order": torch.argsort(torch.rand(n, 4), 1),
        "factors": torch.stack([torch.empty(n).uniform_(0.6, 1.4), torch.empty(n).uniform_(0.6, 1.4),
                                torch.empty(n).uniform_(0.6, 1.4), torch.empty(n).uniform_(-0.1, 0.1)], 1),
        "gray": torch.rand(n) < 0.2,
    }


def apply_views(x, p):
    """Applies draw_view_params' draws to x (N×3×H×W in [0,1]) with batched
    tensor ops: the crop, resize and flip as two batched matrix products,
    then the colour jitter op by op on the images that use it, then
    grayscale."""
    H, W = x.shape[2], x.shape[3]
    ry = resize_matrix(p["top"], p["ch"], H)
    rx = resize_matrix(p["left"], p["cw"], W)
    rx = torch.where(p["flip"].view(-1, 1, 1), rx.flip(1), rx)
    out = torch.matmul(torch.matmul(ry.unsqueeze(1), x), rx.transpose(1, 2).unsqueeze(1))
    for k in range(4):
        for op in range(4):
            sel = torch.nonzero(p["jitter"] & (p["order"][:, k] == op)).squeeze(1)
            if sel.numel():
                out[sel] = JITTER[op](out[sel], p["factors"][sel, op])
    return torch.where(col(p["gray"]), gray(out).expand(-1, 3, -1, -1), out)


def simclr_views(x, mean, std):
    """SimCLR's CIFAR augmentation of a batch x (N×3×H×W in [0,1]), every image
    with its own draws, then the normalisation."""
    out = apply_views(x, draw_view_params(x.shape[0], x.shape[2], x.shape[3]))
    return (out - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)


# ---------------------------------------------------------------- PyTorch repetitions


class Timer:
    def __init__(self):
        self.t = 0.0

    def __enter__(self):
        self.t0 = time.perf_counter()

    def __exit__(self, *a):
        self.t += time.perf_counter() - self.t0


def timed(fn, steps, warmup):
    """Runs fn warmup times untimed, then steps times timed; returns the
    timed seconds and fn's last result."""
    for _ in range(warmup):
        fn()
    t, out = Timer(), None
    for _ in range(steps):
        with t:
            out = fn()
    return t.t, out


def torch_graphcl(graphs, d_in, steps, warmup, seed, batch=128):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = GIN(d_in)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def views():
        idx = rng.integers(len(graphs), size=batch)
        v1 = [graphs[i] for i in idx]
        v2 = [random4(graphs[i], rng) for i in idx]
        return pack(v1), pack(v2)

    def step():
        b1, b2 = views()
        loss = graphcl_loss(model(*b1), model(*b2))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    secs, loss = timed(step, steps, warmup)
    step_ms = secs * 1e3 / steps

    for _ in range(warmup):
        views()
    t = Timer()
    nodes, adj = [0, 0], [0, 0]
    for _ in range(steps):
        with t:
            bs = views()
        for k, b in enumerate(bs):
            nodes[k] += b[0].shape[0]
            adj[k] += b[1].numel()
    return {"step_ms": step_ms, "views_ms": t.t * 1e3 / steps, "loss": float(loss),
            "nodes_view1": nodes[0] / steps, "nodes_view2": nodes[1] / steps,
            "adj_view1": adj[0] / steps, "adj_view2": adj[1] / steps,
            "params": torch_params(model)}


def torch_simclr(px, mean, std, steps, warmup, seed, batch=128):
    torch.manual_seed(seed)
    out = {}
    for variant in ("step", "noaug"):
        model = ResNet()
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        if variant == "step":
            out["flops"] = forward_flops(model, px[:1])
            out["params"] = torch_params(model)

        def view(x):
            if variant == "step":
                return simclr_views(x, mean, std)
            return (x - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)

        def step():
            x = px[torch.randint(px.shape[0], (batch,))]
            loss = nt_xent(model(view(x)), model(view(x)))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return loss

        secs, loss = timed(step, steps, warmup)
        out[variant + "_ms"] = secs * 1e3 / steps
        out[variant + "_img_s"] = 2 * batch * steps / secs
        out[variant + "_loss"] = float(loss)

    # PyTorch has no Winograd switch for CPU convolutions (its oneDNN calls
    # ask for the direct algorithm): the Winograd row compares Go's
    # model.conv: winograd step with this same step.
    out["step_winograd_ms"], out["step_winograd_img_s"] = out["step_ms"], out["step_img_s"]

    def views():
        x = px[torch.randint(px.shape[0], (batch,))]
        return simclr_views(x, mean, std), simclr_views(x, mean, std)

    secs, _ = timed(views, steps, warmup)
    out["views_ms"] = secs * 1e3 / steps
    out["views_img_s"] = 2 * batch * steps / secs
    return out


def torch_moco(px, mean, std, steps, warmup, seed, batch=128):
    """MoCo v3 steps: 128 images × 2 views (simclr_views, as torch_simclr),
    the online network on both views, the momentum update with the coming
    step's momentum and the keys under no_grad (in the reference's order),
    the symmetric loss, backward, LARS at MOCO's constant learning rate.
    The momentum follows moco_momentum over MOCO's epochs of batches of
    `batch` images, as the Go benchmark's AfterStep."""
    torch.manual_seed(seed)
    c = MOCO
    model = MoCoV3(c["proj_hidden"], c["proj_dim"], c["pred_hidden"], c["temperature"])
    model.train()
    opt = LARS([p for p in model.parameters() if p.requires_grad], lr=c["lr"], weight_decay=c["weight_decay"],
               momentum=c["lars_momentum"], trust_coefficient=c["trust_coefficient"])
    total = moco_total(px.shape[0], batch)
    out = {"params": torch_params(model, MoCoV3.go_name), "total_steps": total,
           "flops": forward_flops(nn.Sequential(model.base_encoder, model.projector, model.predictor), px[:1])}
    done = [0]

    def step():
        x = px[torch.randint(px.shape[0], (batch,))]
        loss = model(simclr_views(x, mean, std), simclr_views(x, mean, std), moco_momentum(c["momentum"], done[0], total))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        done[0] += 1
        return loss

    secs, loss = timed(step, steps, warmup)
    out["step_ms"], out["step_img_s"], out["loss"] = secs * 1e3 / steps, 2 * batch * steps / secs, float(loss)
    # No Winograd switch in PyTorch (see torch_simclr): the Winograd row
    # compares Go's model.conv: winograd step with this same step.
    out["step_winograd_ms"], out["step_winograd_img_s"] = out["step_ms"], out["step_img_s"]
    return out


def torch_mvgrl(graphs, views, d_in, steps, warmup, seed, batch=128):
    """MVGRL steps: 128 graphs drawn with replacement, both views packed,
    forward, the JSD loss in both directions, backward, Adam lr 1e-3. CPU
    time is the process's (both threads), over the timed steps."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = MVGRL(d_in)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    stats = [0, 0, 0]

    def step():
        idx = rng.integers(len(graphs), size=batch)
        x, (a1, a2), b = mvgrl_pack([graphs[i] for i in idx], [views[i] for i in idx])
        l1, g1, l2, g2 = model(x, a1, a2, b, batch)
        loss = local_global_jsd(l1, g2, b) + local_global_jsd(l2, g1, b)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        stats[0] += x.shape[0]
        stats[1] += a1._nnz()
        stats[2] += a2._nnz()
        return loss

    for _ in range(warmup):
        step()
    stats[:] = [0, 0, 0]
    t, c0 = Timer(), time.process_time()
    for _ in range(steps):
        with t:
            loss = step()
    return {"step_ms": t.t * 1e3 / steps, "cpu_ms": (time.process_time() - c0) * 1e3 / steps, "loss": float(loss),
            "nodes": stats[0] / steps, "adj": stats[1] / steps, "diff": stats[2] / steps,
            "params": torch_params(model)}


def mvgrl_dataset(key, root, how, tmp, go, cache=None):
    """The graphs, views and input width of an MVGRL workload: NCI1 from its
    TU files; COLLAB exported by `cmd/train -export-tu` (the GIN text file
    as the Go reader loads it, in the TU format). Features as the Go cell's
    auto-degree; views computed once (not timed), or read from the cache
    directory when one holds the views of the same graphs (--views-cache:
    the file name carries a SHA-256 of the graphs' sizes and edges and the
    diffusion's settings)."""
    spec = MVGRL_DATA[key]
    if "yaml" in spec:
        train = os.path.join(tmp, "train")
        if not os.path.exists(train):
            p = subprocess.run([go, "build", "-o", train, "./cmd/train"], cwd=REPO, capture_output=True, text=True)
            if p.returncode != 0:
                die("go build ./cmd/train failed:\n" + p.stdout + p.stderr)
        cfgfile = os.path.join(tmp, key + ".yaml")
        with open(cfgfile, "w") as f:
            f.write(spec["yaml"])
        p = subprocess.run([train, "-config", cfgfile, "-root", root, "-export-tu", os.path.join(tmp, "tu")],
                           capture_output=True, text=True)
        if p.returncode != 0:
            die("exporting %s failed (data root %s from %s): %s" % (spec["name"], root, how, p.stderr.strip()))
        d = os.path.join(tmp, "tu", spec["name"])
    else:
        d = os.path.join(root, "tu", spec["name"])
        need_file(os.path.join(d, "%s_A.txt" % spec["name"]), "%s's TU file %s_A.txt" % (spec["name"], spec["name"]), root, how)
    graphs, d_in = parse_tu(d, spec["name"], "auto-degree", 0)
    t0 = time.time()
    path = None
    if cache:
        h = hashlib.sha256(repr((0.2, 1e-4, spec["top_k"])).encode())
        for g in graphs:
            h.update(np.int64(g.n).tobytes())
            h.update(np.ascontiguousarray(g.edges, dtype=np.int64).tobytes())
        path = os.path.join(cache, "mvgrl-views-%s-%s.pt" % (spec["name"], h.hexdigest()[:16]))
    if path and os.path.exists(path):
        views = torch.load(path)
        how_views = "read from " + path
    else:
        views = [mvgrl_views(g, 0.2, 1e-4, spec["top_k"]) for g in graphs]
        how_views = "computed"
        if path:
            os.makedirs(cache, exist_ok=True)
            torch.save(views, path + ".tmp")
            os.replace(path + ".tmp", path)
            how_views += ", saved to " + path
    print("%s: %d graphs, %d input features; views in %.0f s (%s)" % (spec["name"], len(graphs), d_in, time.time() - t0, how_views),
          flush=True)
    return graphs, views, d_in


# ---------------------------------------------------------------- Go repetitions

BENCH_LINE = re.compile(r"^(BenchmarkVsTorch\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$")


def run_go(binary, bench, steps, warmup, threads, root, timeout):
    cmd = [binary, "-test.run", "^$", "-test.bench", "^%s$" % bench, "-test.benchtime", "%dx" % steps,
           "-test.count", "1", "-vstorch.warmup", str(warmup)]
    env = dict(os.environ, GOMAXPROCS=str(threads), BATCHSAMPLER_DATA=root)
    p = subprocess.run(cmd, cwd=os.path.join(REPO, "train"), env=env, capture_output=True, text=True, timeout=timeout)
    text = p.stdout + p.stderr
    if p.returncode != 0:
        die("the Go benchmark failed (exit %d): %s\n%s" % (p.returncode, " ".join(cmd), text))
    res, params, desc = {}, None, {}
    for line in text.splitlines():
        m = BENCH_LINE.match(line.strip())
        if m:
            f = m.group(3).split()
            res[m.group(1)] = {unit: float(val) for val, unit in zip(f[0::2], f[1::2])}
        if "vstorch-params " in line:
            params = json.loads(line.split("vstorch-params ", 1)[1])
        for key in ("gin:", "resnet:", "mvgrl:"):
            if ": " + key in line and key not in desc:
                desc[key] = line.split(": " + key, 1)[1].strip()
        if "--- SKIP" in line:
            die("the Go benchmark skipped: %s\n%s" % (" ".join(cmd), text))
    return res, params, desc, text


def go_graphcl(binary, steps, warmup, threads, root, timeout):
    res, params, desc, text = run_go(binary, "BenchmarkVsTorchGraphCL", steps, warmup, threads, root, timeout)
    try:
        s, v = res["BenchmarkVsTorchGraphCL/step"], res["BenchmarkVsTorchGraphCL/views"]
        return {"step_ms": s["ms/step"], "views_ms": v["ms/step"], "nodes_view1": v["nodes/view1"],
                "nodes_view2": v["nodes/view2"], "adj_view1": v["adj/view1"], "adj_view2": v["adj/view2"],
                "params": params, "desc": desc.get("gin:")}
    except (KeyError, TypeError):
        die("unexpected output of the Go GraphCL benchmark (expected BenchmarkVsTorchGraphCL/step and /views lines with ms/step):\n" + text)


def go_simclr(binary, steps, warmup, threads, root, timeout):
    res, params, desc, text = run_go(binary, "BenchmarkVsTorchSimCLR", steps, warmup, threads, root, timeout)
    try:
        out = {"params": params, "desc": desc.get("resnet:")}
        for v in ("step", "step-winograd", "noaug", "views"):
            r = res["BenchmarkVsTorchSimCLR/" + v]
            k = v.replace("-", "_")
            out[k + "_ms"], out[k + "_img_s"] = r["ms/step"], r["img/s"]
        m = re.search(r"forward (\d+) FLOP/image", out["desc"] or "")
        out["flops"] = int(m.group(1)) if m else None
        return out
    except (KeyError, TypeError):
        die("unexpected output of the Go SimCLR benchmark (expected BenchmarkVsTorchSimCLR/step, /step-winograd, /noaug and /views lines with ms/step and img/s):\n" + text)


def go_moco(binary, steps, warmup, threads, root, timeout):
    res, params, desc, text = run_go(binary, "BenchmarkVsTorchMoCoV3", steps, warmup, threads, root, timeout)
    try:
        out = {"params": params, "desc": desc.get("resnet:"), "hparams": None}
        for v in ("step", "step-winograd"):
            r = res["BenchmarkVsTorchMoCoV3/" + v]
            k = v.replace("-", "_")
            out[k + "_ms"], out[k + "_img_s"] = r["ms/step"], r["img/s"]
        for line in text.splitlines():
            if "vstorch-moco " in line:
                out["hparams"] = json.loads(line.split("vstorch-moco ", 1)[1])
        m = re.search(r"online forward (\d+) FLOP/image", out["desc"] or "")
        out["flops"] = int(m.group(1)) if m else None
        if out["hparams"] is None:
            raise KeyError("vstorch-moco")
        return out
    except (KeyError, TypeError, ValueError):
        die("unexpected output of the Go MoCo v3 benchmark (expected BenchmarkVsTorchMoCoV3/step and /step-winograd lines "
            "with ms/step and img/s, and a vstorch-moco line):\n" + text)


def moco_hparam_problems(go, total):
    """The hyperparameters the Go benchmark logged that differ from MOCO's
    (and the momentum schedule's length from the PyTorch side's)."""
    want = {k: v for k, v in MOCO.items() if k != "epochs"}
    want["total_steps"] = total
    problems = []
    for k, v in sorted(want.items()):
        g = go.get(k)
        same = (isinstance(v, float) and isinstance(g, (int, float)) and math.isclose(g, v, rel_tol=1e-12)) or g == v
        if not same:
            problems.append("%s: Go %r, PyTorch %r" % (k, g, v))
    for k in sorted(set(go) - set(want)):
        problems.append("%s: logged by Go (%r), not set on the PyTorch side" % (k, go[k]))
    return problems


def go_mvgrl(binary, dataset, steps, warmup, threads, root, timeout):
    res, params, desc, text = run_go(binary, "BenchmarkVsTorchMVGRL/" + dataset, steps, warmup, threads, root, timeout)
    try:
        r = res["BenchmarkVsTorchMVGRL/" + dataset]
        return {"step_ms": r["ms/step"], "cpu_ms": r["cpu-ms/step"], "nodes": r["nodes/batch"], "adj": r["adj/batch"],
                "diff": r["diff/batch"], "params": params, "desc": desc.get("mvgrl:")}
    except (KeyError, TypeError):
        die("unexpected output of the Go MVGRL benchmark (expected a BenchmarkVsTorchMVGRL/%s line with ms/step, "
            "cpu-ms/step, nodes/batch, adj/batch and diff/batch):\n%s" % (dataset, text))


# ---------------------------------------------------------------- report


def sh(*cmd, cwd=REPO):
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine_info(threads, go):
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = None
    commit = sh("git", "rev-parse", "HEAD")
    dirty = bool(sh("git", "status", "--porcelain"))
    blas = "/usr/lib/x86_64-linux-gnu/libblas.so.3"
    blas = os.path.realpath(blas) if os.path.exists(blas) else ""
    env = {k: os.environ[k] for k in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOGC", "GODEBUG")
           if k in os.environ}
    return {"cpu": cpu, "logical_cpus": os.cpu_count(), "cpus_usable": affinity, "threads": threads,
            "torch_parallel": torch.__config__.parallel_info().splitlines()[-1].strip(), "blas": blas, "env": env,
            "torch": torch.__version__, "numpy": np.__version__, "python": platform.python_version(),
            "go": sh(go, "version"), "commit": commit + (" (uncommitted changes)" if dirty else ""),
            "kernel": platform.release()}


def rng_fmt(vals, fmt):
    lo, hi = min(vals), max(vals)
    return (fmt % lo) if fmt % lo == fmt % hi else "%s–%s" % (fmt % lo, fmt % hi)


ROWS = [
    # key, label, unit, go key, torch key, kind: time (lower is better) or rate
    ("graphcl_step", "GraphCL step, 128 NCI1 graphs × 2 views, views included", "ms/step", "graphcl", "step_ms", "time"),
    ("graphcl_views", "GraphCL views alone (augment + pack both views)", "ms/step", "graphcl", "views_ms", "time"),
    ("graphcl_model", "GraphCL step minus views (derived: row 1 − row 2)", "ms/step", "graphcl", "model_ms", "time"),
    ("simclr_step", "SimCLR step, ResNet-14, 128 × 2 views, augmentation included", "img/s", "simclr", "step_img_s", "rate"),
    ("simclr_winograd", "SimCLR step as row 4, Go with model.conv: winograd (PyTorch: its row-4 figure)", "img/s", "simclr", "step_winograd_img_s", "rate"),
    ("simclr_noaug", "SimCLR step without augmentation (gather + normalise)", "img/s", "simclr", "noaug_img_s", "rate"),
    ("simclr_views", "SimCLR augmentation alone (both views)", "ms/step", "simclr", "views_ms", "time"),
    ("moco_step", "MoCo v3 step (direct), ResNet-14 + projector 1024-128 + predictor 1024 and the momentum encoder, 128 × 2 views, augmentation, LARS and momentum update included", "img/s", "moco", "step_img_s", "rate"),
    ("moco_winograd", "MoCo v3 step (Winograd): as the row above, Go with model.conv: winograd (PyTorch: the same figure)", "img/s", "moco", "step_winograd_img_s", "rate"),
    ("mvgrl_nci1_step", "MVGRL step, 128 NCI1 graphs, both views packed (GCN 4 × 128, JSD)", "ms/step", "mvgrl_nci1", "step_ms", "time"),
    ("mvgrl_nci1_cpu", "MVGRL step as above, CPU time of the process (both threads)", "cpu-ms/step", "mvgrl_nci1", "cpu_ms", "time"),
    ("mvgrl_collab_step", "MVGRL step, 128 COLLAB graphs (492 one-hot degrees, diffusion top_k 64)", "ms/step", "mvgrl_collab", "step_ms", "time"),
    ("mvgrl_collab_cpu", "MVGRL step as above, CPU time of the process (both threads)", "cpu-ms/step", "mvgrl_collab", "cpu_ms", "time"),
]

# WORKS are the workloads, in the order of a round; MVGRL_DATA the datasets
# of the MVGRL workloads (the graph table's MVGRL cells: table.GraphConfigYAML).
WORKS = ("graphcl", "simclr", "moco", "mvgrl_nci1", "mvgrl_collab")
MVGRL_DATA = {
    "nci1": {"name": "NCI1", "top_k": 0},
    "collab": {"name": "COLLAB", "top_k": 64,
               "yaml": "name: vstorch-collab\nmodality: graph\nmethod: mvgrl\n"
                       "data: {source: gin, name: COLLAB, path: tu_gin_format/COLLAB/COLLAB.txt.gz, features: auto-degree}\n"},
}


# SPEEDUP_ROWS are the image rows whose per-round Go speed-up gets a table
# of its own (issue 39's target), with their column titles.
SPEEDUP_ROWS = {"simclr_step": "SimCLR step (direct)", "simclr_winograd": "SimCLR step (Winograd)",
                "moco_step": "MoCo v3 step (direct)", "moco_winograd": "MoCo v3 step (Winograd)"}


def summarise(rounds):
    table = []
    for key, label, unit, w, k, kind in ROWS:
        if w not in rounds[0]["go"]:
            continue
        g = [r["go"][w][k] for r in rounds]
        t = [r["torch"][w][k] for r in rounds]
        # Go's time over PyTorch's, per round (for a rate: PyTorch's rate over Go's).
        ratio = [a / b if kind == "time" else b / a for a, b in zip(g, t)]
        table.append({"key": key, "label": label, "unit": unit, "go": g, "torch": t, "go_time_over_torch": ratio,
                      "go_speedup": [1 / x for x in ratio]})
    return table


def render(info, cfg, rounds, table, checks, load0, load1, started, elapsed):
    L = []
    L.append("# Go vs PyTorch, interleaved (`make bench-vs-pytorch`)")
    L.append("")
    L.append("Started %s, %d round(s), %.0f s. Command: `%s`." % (started, len(rounds), elapsed, cfg["command"]))
    L.append("")
    L.append("| machine | |")
    L.append("|---|---|")
    L.append("| CPU | %s (%s logical CPUs, %s usable by this process) |" % (info["cpu"], info["logical_cpus"], info["cpus_usable"]))
    L.append("| threads | %d on each side (GOMAXPROCS, torch.set_num_threads) |" % info["threads"])
    L.append("| Go | %s, commit %s |" % (info["go"], info["commit"]))
    L.append("| PyTorch | %s (numpy %s, Python %s), CPU; %s; BLAS %s; OMP_WAIT_POLICY=%s |" % (
        info["torch"], info["numpy"], info["python"], info["torch_parallel"], info["blas"] or "?",
        info["env"].get("OMP_WAIT_POLICY")))
    L.append("| load average (1, 5, 15 min) | start %s, end %s |" % (
        " ".join("%.2f" % x for x in load0), " ".join("%.2f" % x for x in load1)))
    L.append("")
    if max(load0[0], load1[0]) > 0.5:
        L.append("Other processes were running (load average above 0.5 at the start or end): the figures were "
                 "measured under that load and are noisy; compare the ratios of one round, not absolute speeds.")
        L.append("")
    steps = [(name, cfg[k + "_steps"], cfg[k + "_warmup"]) for name, k, run in (
        ("GraphCL", "gin", "graphcl" in cfg["works"]), ("SimCLR", "simclr", "simclr" in cfg["works"]),
        ("MoCo v3", "moco", "moco" in cfg["works"]), ("MVGRL", "mvgrl", any(w.startswith("mvgrl_") for w in cfg["works"])))
        if run]
    L.append("Steps per repetition: %s. "
             "A repetition's figure is the mean over its timed steps; ranges are min–max over rounds; "
             "ratios are computed within each round (Go and PyTorch measured back to back) and then ranged."
             % "; ".join("%s %d timed after %d warm-up" % s_ for s_ in steps))
    L.append("")
    L.append("| figure | unit | Go | PyTorch | Go time / PyTorch time | Go speed-up |")
    L.append("|---|---|---|---|---|---|")
    for r in table:
        fmt = "%.0f" if r["unit"] == "img/s" else "%.1f"
        L.append("| %s | %s | %s | %s | %s | %s× |" % (r["label"], r["unit"], rng_fmt(r["go"], fmt), rng_fmt(r["torch"], fmt),
                                                    rng_fmt(r["go_time_over_torch"], "%.2f"), rng_fmt(r["go_speedup"], "%.2f")))
    L.append("")
    L.append("Issue 15's targets: GraphCL step Go time / PyTorch time ≤ 0.5; SimCLR step (and the row "
             "with Go's Winograd convolutions, model.conv: winograd) Go speed-up ≥ 2 (PyTorch/Go images per second ≤ 0.5). "
             "Issue 39's: the default SimCLR and MoCo v3 steps (model.conv direct, the SimCLR and MoCo v3 step rows) "
             "Go speed-up ≥ 2 in every round (see Per round); MVGRL step Go time / PyTorch time ≤ 0.5. Where other jobs "
             "share the cores, the CPU-time rows (each side's process, both threads) are the steadier comparison.")
    L.append("")
    L.append("## Per round")
    L.append("")
    L.append("| round | order | " + " | ".join("%s Go / PyTorch" % r["key"] for r in table) + " |")
    L.append("|---|---|" + "---|" * len(table))
    for i, rd in enumerate(rounds):
        cells = []
        for r in table:
            fmt = "%.0f" if r["unit"] == "img/s" else "%.1f"
            cells.append((fmt % r["go"][i]) + " / " + (fmt % r["torch"][i]))
        L.append("| %d | %s | %s |" % (i + 1, rd["order"], " | ".join(cells)))
    L.append("")
    speed = [r for r in table if r["key"] in SPEEDUP_ROWS]
    if speed:
        L.append("Go speed-up per round (PyTorch time / Go time = Go img/s ÷ PyTorch img/s; issue 39: ≥ 2 in every "
                 "round for the direct rows):")
        L.append("")
        L.append("| round | " + " | ".join(SPEEDUP_ROWS[r["key"]] for r in speed) + " |")
        L.append("|---|" + "---|" * len(speed))
        for i in range(len(rounds)):
            L.append("| %d | %s |" % (i + 1, " | ".join("%.2f×" % r["go_speedup"][i] for r in speed)))
        L.append("")
    L.append("## Do the two sides compute the same thing?")
    L.append("")
    for c in checks.values():
        L.append("- %s" % c)
    L.append("")
    L.append("## What each side runs")
    L.append("")
    for line in cfg["sides"]:
        L.append("- " + line)
    L.append("")
    return "\n".join(L)


def param_check_line(name, cmp_, buffers="BatchNorm running-statistic values"):
    gt, gb = cmp_["go"]
    pt, pb = cmp_["torch"]
    head = "%s parameters: Go %d trainable values + %d %s in %d tensors; PyTorch %d + %d in %d tensors" % (
        name, gt, gb, buffers, cmp_["tensors"][0], pt, pb, cmp_["tensors"][1])
    if not cmp_["problems"]:
        return head + ": every name and shape agrees (Linear weights transposed)."
    return head + ": MISMATCH: " + "; ".join(cmp_["problems"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 round, few steps")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default=",".join(WORKS),
                    help="comma-separated workloads to run, of %s (default all)" % ", ".join(WORKS))
    ap.add_argument("--gin-steps", type=int, default=40, help="timed GraphCL steps per repetition")
    ap.add_argument("--gin-warmup", type=int, default=5)
    ap.add_argument("--simclr-steps", type=int, default=10, help="timed SimCLR steps per repetition")
    ap.add_argument("--simclr-warmup", type=int, default=2)
    ap.add_argument("--moco-steps", type=int, default=10, help="timed MoCo v3 steps per repetition")
    ap.add_argument("--moco-warmup", type=int, default=2)
    ap.add_argument("--mvgrl-steps", type=int, default=10, help="timed MVGRL steps per repetition")
    ap.add_argument("--mvgrl-warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2, help="threads on each side (GOMAXPROCS, torch.set_num_threads)")
    ap.add_argument("--data", help="data root holding tu/NCI1, cifar10 and tu_gin_format/COLLAB (default $BATCHSAMPLER_DATA, else ../shared/data)")
    ap.add_argument("--out", default=os.path.join("runs", "bench-vs-pytorch"), help="parent of the results directory")
    ap.add_argument("--go", default=os.environ.get("GO", "go"), help="the go command")
    ap.add_argument("--omp-wait-policy", default=os.environ["OMP_WAIT_POLICY"], type=str.lower, choices=["passive", "active"],
                    help="OMP_WAIT_POLICY of PyTorch's OpenMP threads (default passive, or the environment's)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds one Go benchmark run may take")
    ap.add_argument("--views-cache", default=None,
                    help="directory keeping the PyTorch MVGRL views between sittings (the dense inverse of every graph: "
                         "about 20 minutes for COLLAB on a loaded host); off by default")
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.gin_steps, a.gin_warmup, a.simclr_steps, a.simclr_warmup = 1, 5, 1, 2, 1
        a.moco_steps, a.moco_warmup, a.mvgrl_steps, a.mvgrl_warmup = 2, 1, 2, 1
    for k in ("rounds", "gin_steps", "simclr_steps", "moco_steps", "mvgrl_steps", "threads"):
        if getattr(a, k) < 1:
            die("--%s must be at least 1" % k.replace("_", "-"))
    works = [w.strip() for w in a.only.split(",") if w.strip()]
    for w in works:
        if w not in WORKS:
            die("--only: unknown workload %r; expected a comma-separated list of %s" % (w, ", ".join(WORKS)))
    works = [w for w in WORKS if w in works]
    if not works:
        die("--only: no workload given; expected a comma-separated list of %s" % ", ".join(WORKS))
    if shutil.which(a.go) is None:
        die("the go command %r was not found (set --go or GO)" % a.go)

    torch.set_num_threads(a.threads)
    root, how = data_root(a.data)
    graphs, d_in, px, mean, std = None, None, None, None, None
    if "graphcl" in works:
        graphs, d_in = read_tu(root, how)
        print("NCI1: %d graphs, %d node labels (data root %s)" % (len(graphs), d_in, root), flush=True)
    if "simclr" in works or "moco" in works:
        px, mean, std, cifar_files = read_cifar(root, how)
        print("CIFAR-10 subset: %d training images from %d files (data root %s)" % (px.shape[0], len(cifar_files), root), flush=True)

    tmp = tempfile.mkdtemp(prefix="bench-vs-pytorch-")
    try:
        binary = os.path.join(tmp, "train.test")
        print("building the Go benchmarks: %s test -c ./train" % a.go, flush=True)
        p = subprocess.run([a.go, "test", "-c", "-o", binary, "./train"], cwd=REPO, capture_output=True, text=True)
        if p.returncode != 0:
            die("go test -c ./train failed:\n" + p.stdout + p.stderr)
        mvgrl = {}  # dataset -> (graphs, views, d_in)
        for w in works:
            if not w.startswith("mvgrl_"):
                continue
            key = w[len("mvgrl_"):]
            mvgrl[key] = mvgrl_dataset(key, root, how, tmp, a.go, a.views_cache)
        info = machine_info(a.threads, a.go)
        if info["blas"].endswith("/blas/libblas.so.3"):
            # Debian's reference BLAS: PyTorch's matrix products (the GIN's)
            # run several times slower than with OpenBLAS.
            print("warning: PyTorch uses the reference BLAS (%s), which makes its GIN step several times "
                  "slower; install an optimised one first (apt-get install libopenblas0-pthread)" % info["blas"],
                  file=sys.stderr, flush=True)
        started = datetime.datetime.now()
        load0 = os.getloadavg()
        print("load average at start: %.2f %.2f %.2f" % load0, flush=True)
        t0 = time.time()
        rounds = []
        for r in range(a.rounds):
            order = ("go", "torch") if r % 2 == 0 else ("torch", "go")
            rd = {"order": " then ".join("Go" if s == "go" else "PyTorch" for s in order), "go": {}, "torch": {}}
            for work in works:
                for side in order:
                    seed = 1000 * r + 1
                    if work == "graphcl" and side == "go":
                        rd["go"][work] = go_graphcl(binary, a.gin_steps, a.gin_warmup, a.threads, root, a.timeout)
                    elif work == "graphcl":
                        rd["torch"][work] = torch_graphcl(graphs, d_in, a.gin_steps, a.gin_warmup, seed)
                    elif work == "simclr" and side == "go":
                        rd["go"][work] = go_simclr(binary, a.simclr_steps, a.simclr_warmup, a.threads, root, a.timeout)
                    elif work == "simclr":
                        rd["torch"][work] = torch_simclr(px, mean, std, a.simclr_steps, a.simclr_warmup, seed)
                    elif work == "moco" and side == "go":
                        rd["go"][work] = go_moco(binary, a.moco_steps, a.moco_warmup, a.threads, root, a.timeout)
                    elif work == "moco":
                        rd["torch"][work] = torch_moco(px, mean, std, a.moco_steps, a.moco_warmup, seed)
                    elif side == "go":
                        rd["go"][work] = go_mvgrl(binary, work[len("mvgrl_"):], a.mvgrl_steps, a.mvgrl_warmup, a.threads, root, a.timeout)
                    else:
                        mg, mviews, md_in = mvgrl[work[len("mvgrl_"):]]
                        rd["torch"][work] = torch_mvgrl(mg, mviews, md_in, a.mvgrl_steps, a.mvgrl_warmup, seed)
            if "graphcl" in works:
                for s_ in ("go", "torch"):
                    g = rd[s_]["graphcl"]
                    g["model_ms"] = g["step_ms"] - g["views_ms"]
            parts = []
            for w in works:
                if w == "graphcl":
                    parts.append("GraphCL step Go %.1f ms, PyTorch %.1f ms" % (rd["go"][w]["step_ms"], rd["torch"][w]["step_ms"]))
                elif w == "simclr":
                    parts.append("SimCLR step Go %.0f img/s (Winograd %.0f), PyTorch %.0f img/s: Go speed-up %.2f× (Winograd %.2f×)" % (
                        rd["go"][w]["step_img_s"], rd["go"][w]["step_winograd_img_s"], rd["torch"][w]["step_img_s"],
                        rd["go"][w]["step_img_s"] / rd["torch"][w]["step_img_s"],
                        rd["go"][w]["step_winograd_img_s"] / rd["torch"][w]["step_img_s"]))
                elif w == "moco":
                    parts.append("MoCo v3 step Go %.0f img/s (Winograd %.0f), PyTorch %.0f img/s: Go speed-up %.2f× (Winograd %.2f×)" % (
                        rd["go"][w]["step_img_s"], rd["go"][w]["step_winograd_img_s"], rd["torch"][w]["step_img_s"],
                        rd["go"][w]["step_img_s"] / rd["torch"][w]["step_img_s"],
                        rd["go"][w]["step_winograd_img_s"] / rd["torch"][w]["step_img_s"]))
                else:
                    parts.append("%s step Go %.0f ms (CPU %.0f ms), PyTorch %.0f ms (CPU %.0f ms)" % (
                        w, rd["go"][w]["step_ms"], rd["go"][w]["cpu_ms"], rd["torch"][w]["step_ms"], rd["torch"][w]["cpu_ms"]))
            print("round %d/%d (%s): %s" % (r + 1, a.rounds, rd["order"], "; ".join(parts)), flush=True)
            rounds.append(rd)
        elapsed = time.time() - t0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load1 = os.getloadavg()
    print("load average at end: %.2f %.2f %.2f" % load1, flush=True)

    table = summarise(rounds)
    first = rounds[0]
    checks, parameters, sides = {}, {}, []
    mean_of = lambda side, w, k: sum(r[side][w][k] for r in rounds) / len(rounds)  # noqa: E731
    if "graphcl" in works:
        gcmp = compare_params(first["go"]["graphcl"]["params"] or [], first["torch"]["graphcl"]["params"])
        parameters["gin"] = gcmp
        checks["gin_params"] = param_check_line("GIN", gcmp)
        checks["graph_sizes"] = ("GraphCL batch sizes, mean over all timed view batches (the two sides draw their own random "
                                 "graphs and augmentations, so these agree only within sampling noise): nodes in view 1 Go %.0f, "
                                 "PyTorch %.0f; view 2 Go %.0f, PyTorch %.0f; adjacency entries view 1 Go %.0f, PyTorch %.0f; "
                                 "view 2 Go %.0f, PyTorch %.0f." % tuple(mean_of(s_, "graphcl", k) for k in ("nodes_view1", "nodes_view2", "adj_view1", "adj_view2") for s_ in ("go", "torch")))
        sides += [
            "Go GraphCL: `train.test -test.bench '^BenchmarkVsTorchGraphCL$'` (train/vstorch_bench_test.go): "
            "the same step as BenchmarkGraphCLStepNCI1 — " + (first["go"]["graphcl"]["desc"] or "") +
            "; views = augment view 2 and pack both views (what the step does before the GIN).",
            "PyTorch GraphCL: scripts/bench_vs_pytorch.py torch_graphcl: the TU files read by the script, the four "
            "augmentations in numpy with the Go counts (⌊n·ratio⌋) and Go's subgraph growth, packing into "
            "index tensors, GIN with index_add_ aggregation and pooling, nn.BatchNorm1d in training mode, "
            "graphcl_loss (log-sum-exp form), torch.optim.Adam lr 0.01; both views through the model separately.",
        ]
    if "simclr" in works:
        scmp = compare_params(first["go"]["simclr"]["params"] or [], first["torch"]["simclr"]["params"])
        parameters["resnet14"] = scmp
        checks["resnet_params"] = param_check_line("ResNet-14", scmp)
        checks["flops"] = "ResNet-14 forward FLOPs per 32×32 image (convolutions and head, multiply-adds × 2): Go %s, PyTorch %d%s." % (
            first["go"]["simclr"]["flops"], first["torch"]["simclr"]["flops"],
            " (equal)" if first["go"]["simclr"]["flops"] == first["torch"]["simclr"]["flops"] else " (DIFFERENT)")
        sides += [
            "Go SimCLR: `train.test -test.bench '^BenchmarkVsTorchSimCLR$'`: BenchmarkSimCLRStep/resnet14 on the "
            "CIFAR-10 subset — " + (first["go"]["simclr"]["desc"] or "") + "; noaug = augment.image none "
            "(gather + normalise); views = both views' augmentation alone.",
            "PyTorch SimCLR: torch_simclr: the same ResNet-14 (nn.Conv2d without bias, nn.BatchNorm2d, "
            "1×1-convolution shortcuts), head 64-64-128, NT-Xent τ 0.5 (cross-entropy over the 2B stacked views), "
            "torch.optim.Adam lr 1e-3, each view through the network separately (BatchNorm statistics per view, "
            "as in Go); augmentation = simclr_views (batched torch ops, same policy and parameter ranges); noaug "
            "= gather + normalise.",
        ]
    if "moco" in works:
        ocmp = compare_params(first["go"]["moco"]["params"] or [], first["torch"]["moco"]["params"])
        parameters["mocov3"] = ocmp
        checks["moco_params"] = param_check_line(
            "MoCo v3 (online ResNet-14, projector and predictor trainable; the momentum encoder and projector, "
            "named momentum.<online name>, listed as not trainable on both sides: Go's mocoV3.Params and "
            "PyTorch's requires_grad=False)", ocmp, "non-trainable values (momentum copies and running statistics)")
        hp = moco_hparam_problems(first["go"]["moco"]["hparams"], first["torch"]["moco"]["total_steps"])
        parameters["mocov3"]["problems"] += ["hyperparameter " + x for x in hp]
        checks["moco_hparams"] = ("MoCo v3 hyperparameters logged by the Go benchmark (configs/mocov3-cifar10-subset.yaml) "
                                  "against the script's MOCO: " + ("all equal (%s)." % ", ".join(
                                      "%s %s" % (k, v) for k, v in sorted(first["go"]["moco"]["hparams"].items()))
                                      if not hp else "MISMATCH: " + "; ".join(hp)))
        checks["moco_flops"] = "MoCo v3 online forward FLOPs per image (ResNet-14, projector, predictor): Go %s, PyTorch %d%s." % (
            first["go"]["moco"]["flops"], first["torch"]["moco"]["flops"],
            " (equal)" if first["go"]["moco"]["flops"] == first["torch"]["moco"]["flops"] else " (DIFFERENT)")
        sides += [
            "Go MoCo v3: `train.test -test.bench '^BenchmarkVsTorchMoCoV3$'` (train/vstorch_bench_test.go): "
            "configs/mocov3-cifar10-subset.yaml with model.arch resnet14 and augment.image simclr, the training loop's "
            "step (method Step, LARS from the config at constant lr, AfterStep's momentum update) — " +
            (first["go"]["moco"]["desc"] or "") + ".",
            "PyTorch MoCo v3: torch_moco, written from facebookresearch/moco-v3 (moco/builder.py MoCo_ResNet: "
            "_build_mlp's projector and predictor, the momentum encoder copied without gradient, contrastive_loss "
            "with the 2τ factor, symmetric; moco/optimizer.py LARS) with the SimCLR workload's ResNet-14 (no head) "
            "as base encoder, MOCO's widths and hyperparameters, each view through each network separately "
            "(BatchNorm statistics per view, as in Go), the momentum update in place (torch._foreach_mul_/_add_) "
            "before the keys as the reference does, simclr_views for both views.",
        ]
    for w in works:
        if not w.startswith("mvgrl_"):
            continue
        mcmp = compare_params(first["go"][w]["params"] or [], first["torch"][w]["params"])
        parameters[w] = mcmp
        checks[w + "_params"] = param_check_line("MVGRL (%s)" % MVGRL_DATA[w[len("mvgrl_"):]]["name"], mcmp)
        checks[w + "_sizes"] = ("MVGRL %s batch sizes, mean over the timed steps (each side draws its own graphs, so these agree "
                                "within sampling noise): nodes Go %.0f, PyTorch %.0f; adjacency entries Go %.0f, PyTorch %.0f; "
                                "diffusion entries Go %.0f, PyTorch %.0f." % ((MVGRL_DATA[w[len("mvgrl_"):]]["name"],) + tuple(
                                    mean_of(s_, w, k) for k in ("nodes", "adj", "diff") for s_ in ("go", "torch"))))
    if any(w.startswith("mvgrl_") for w in works):
        sides += [
            "Go MVGRL: `train.test -test.bench '^BenchmarkVsTorchMVGRL$/<dataset>'` (train/vstorch_bench_test.go): the "
            "graph table's MVGRL cell (table.GraphConfigYAML) — two GCN encoders of 4 layers × 128 (Linear, sparse "
            "propagation, bias, PReLU; per-layer sum pooling), node and graph heads (3 × Linear+PReLU and a linear "
            "shortcut), InfoGraph's JSD local–global loss in both directions, Adam lr 1e-3; a step packs both views "
            "of 128 graphs drawn with replacement; views (Â and the PPR diffusion α 0.2, ε 1e-4, COLLAB top_k 64) "
            "computed once. " + "; ".join(first["go"][w]["desc"] or "" for w in works if w.startswith("mvgrl_")) + ".",
            "PyTorch MVGRL: torch_mvgrl, written from kavehhassani/mvgrl graph/train.py (its GCNLayer, GCN, MLP and "
            "Model with the same parameter names; local_global_loss_ with measure JSD) with the same widths as the Go "
            "configs, both views as torch.sparse_coo_tensor over the packed nodes (torch.sparse.mm) instead of the "
            "reference's dense padded bmm, no padding mask (none is needed without padding), views computed once with "
            "the reference's dense inverse (mvgrl_views); the graphs are the TU files (NCI1) or COLLAB as the Go "
            "reader loads it, exported with `cmd/train -export-tu`; torch.optim.Adam lr 1e-3.",
        ]
    checks["not_identical"] = ("Not identical by construction: the random draws (graphs, augmentations, images, "
                               "initial weights) come from different generators, so losses are not compared; "
                               "the Go loss kernels compute in float64, PyTorch in float32; PyTorch keeps a "
                               "num_batches_tracked counter the Go side has no use for; PyTorch's augmentation is "
                               "batched tensor code (2 threads) and its graph augmentation numpy per graph with "
                               "neighbour lists cached per dataset graph, Go's is per image/graph on goroutines." +
                               (" MoCo v3: both sides run a constant learning rate (the shipped config warms up and "
                                "decays it: no cost difference); Go updates the momentum encoder after the optimizer "
                                "step (AfterStep, with the coming step's momentum), the reference before the keys "
                                "of the next step: one update per step either way; both views take SimCLR's "
                                "augmentation (the shipped config's mocov3 views also solarize the second one)."
                                if "moco" in works else ""))
    cfg = {
        "command": " ".join([os.path.relpath(sys.argv[0], REPO)] + sys.argv[1:]),
        "rounds": a.rounds, "works": works, "gin_steps": a.gin_steps, "gin_warmup": a.gin_warmup,
        "simclr_steps": a.simclr_steps, "simclr_warmup": a.simclr_warmup,
        "moco_steps": a.moco_steps, "moco_warmup": a.moco_warmup,
        "mvgrl_steps": a.mvgrl_steps, "mvgrl_warmup": a.mvgrl_warmup, "data_root": root,
        "sides": sides,
    }

    stamp = started.strftime("%Y%m%d-%H%M%S")
    out_dir = os.path.join(a.out if os.path.isabs(a.out) else os.path.join(REPO, a.out), stamp)
    os.makedirs(out_dir, exist_ok=True)
    md = render(info, cfg, rounds, table, checks, load0, load1, started.strftime("%Y-%m-%d %H:%M:%S"), elapsed)
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(md)
    for rd in rounds:  # the parameter lists once, not per round
        for s_ in ("go", "torch"):
            for w in works:
                rd[s_][w].pop("params", None)
    res = {"machine": info, "config": cfg, "load_average": {"start": load0, "end": load1},
           "started": started.isoformat(timespec="seconds"), "elapsed_s": elapsed,
           "rows": table, "rounds": rounds, "checks": checks, "parameters": parameters}
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    print()
    print(md)
    print("written: %s/results.md and results.json" % os.path.relpath(out_dir, os.getcwd()))
    if any(c["problems"] for c in parameters.values()):
        die("the Go and PyTorch parameters (or MoCo v3's hyperparameters) differ (see above)")


if __name__ == "__main__":
    main()
