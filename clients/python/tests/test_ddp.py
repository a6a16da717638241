"""Acceptance test of examples/ddp_simclr.py: the Go server and the example
as 2 processes of one gloo process group.

Each rank is started as torchrun starts it (RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR, MASTER_PORT in its environment; Debian's torchrun 1.13 fails
under Python 3.11 before starting a worker), or with
BATCHSAMPLER_TEST_TORCHRUN=1 by torchrun itself. It checks:

  * on every step the union of the ranks' slices is the server's global
    batch and the slices are disjoint;
  * rank 0's loss equals a single-process NT-Xent loss on the same global
    batch and parameters within 1e-5, and DDP's averaged gradients equal
    the single-process gradients (the gather, the loss scale and the global
    BatchNorm are right);
  * a job killed mid-epoch (SIGKILL) and restarted from its checkpoint,
    against a server restarted from its -state file, gets exactly the
    batches (and losses) of an uninterrupted job, through a refresh after
    the restart;
  * a world-size mismatch fails at once with the server's 409
    world_mismatch (started with --spawn 2, the example's
    torch.multiprocessing path).

Run: /usr/bin/python3 -m unittest discover -s clients/python/tests -p test_ddp.py -v
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")
EXAMPLE = os.path.join(EXAMPLES, "ddp_simclr.py")

from bsserver import Server, binary  # noqa: E402
from batchsampler_client import ServiceBatchSampler, shard_rows  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None

PYTHON = sys.executable
STEPS = 20
# N = 96 (the example's default), B = 16: 6 steps an epoch; refreshes
# before steps 0, 7 and 14; the killed job checkpoints after steps 3 and 7
# and dies when step 10 begins (mid-epoch), so the restarted job redoes
# steps 8 and 9 and crosses the refresh before step 14.
SERVE = ["-b", "16", "-m", "40", "-k", "6", "-refresh-every", "7", "-total-steps", str(STEPS), "-seed", "3",
         "-alpha", "0.3:0.1"]
JOB = ["--ckpt-every", "4", "--timeout", "300"]  # a rank waiting longer for the others fails, saying why
KILL_AT = 10


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(world, args, log):
    """Starts the example's `world` ranks as one process group; returns the
    processes (stdout and stderr of rank r in log.rank<r>.out/.err)."""
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), OMP_NUM_THREADS="1",
               PYTHONDONTWRITEBYTECODE="1")
    procs = []
    if os.environ.get("BATCHSAMPLER_TEST_TORCHRUN") == "1":
        with open(f"{log}.out", "w") as out, open(f"{log}.err", "w") as err:
            procs.append(subprocess.Popen(["torchrun", "--nproc_per_node", str(world), "--master_port",
                                           env["MASTER_PORT"], EXAMPLE, *args], env=env, stdout=out, stderr=err))
        return procs
    for r in range(world):
        e = dict(env, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(world))
        with open(f"{log}.rank{r}.out", "w") as out, open(f"{log}.rank{r}.err", "w") as err:
            procs.append(subprocess.Popen([PYTHON, EXAMPLE, *args], env=e, stdout=out, stderr=err))
    return procs


def wait(procs, timeout=480):
    """Return codes of the processes (killed after timeout)."""
    deadline = time.monotonic() + timeout
    codes = []
    for p in procs:
        try:
            codes.append(p.wait(timeout=max(1, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
    return codes


def read_log(prefix, world=2):
    """{step: [rank 0's record, rank 1's record]} of a job's JSON lines."""
    steps = {}
    for r in range(world):
        with open(f"{prefix}.rank{r}.jsonl") as f:
            for line in f:
                rec = json.loads(line)
                steps.setdefault(rec["step"], [None] * world)[r] = rec
    return steps


def nt_xent(z1, z2, temperature):
    """The single-process NT-Xent (SimCLR) loss of a batch: mean over its
    2L anchors, written independently of the example's."""
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.T / temperature
    sim.fill_diagonal_(float("-inf"))
    n = len(z1)
    return F.cross_entropy(sim, torch.cat([torch.arange(n, 2 * n), torch.arange(n)]))


@unittest.skipIf(torch is None, "torch is not installed (apt-get install python3-torch): the DDP example needs it")
class DDPExampleTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        binary()
        cls.tmp = tempfile.mkdtemp(prefix="bsddp")
        sys.path.insert(0, EXAMPLES)
        import ddp_simclr
        cls.ex = ddp_simclr
        cls.defaults = ddp_simclr.parse_args(["--url", "http://unused"])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def stderr_of(self, log, world=2):
        out = []
        for r in range(world):
            for name in (f"{log}.rank{r}.err", f"{log}.err"):
                if os.path.exists(name):
                    with open(name) as f:
                        out.append(f"{name}:\n{f.read()[-3000:]}")
        return "\n".join(out)

    def test_ddp_job(self):
        t0 = time.monotonic()
        state = self.path("server-b.state")
        with Server(*SERVE) as a:
            b = Server(*SERVE, "-state", state)
            try:
                # Job A runs uninterrupted; job B, at the same time, is
                # killed when step KILL_AT begins.
                pa = launch(2, ["--url", a.url, "--log", self.path("a"), "--dump", self.path("dump-a"),
                                "--ckpt", self.path("a.ckpt"), *JOB], self.path("a"))
                pb = launch(2, ["--url", b.url, "--log", self.path("b1"), "--ckpt", self.path("b.ckpt"),
                                "--die-at-step", str(KILL_AT), *JOB], self.path("b1"))
                codes_a, codes_b = wait(pa), wait(pb)
                self.assertEqual(codes_a, [0, 0], self.stderr_of(self.path("a")))
                if len(pb) == 2:  # torchrun reports its workers' deaths in its own code
                    self.assertEqual(codes_b, [-signal.SIGKILL] * 2, self.stderr_of(self.path("b1")))
            finally:
                b.stop()  # SIGTERM: the server saves its state
            self.assertTrue(os.path.exists(state))
            with Server(*SERVE, "-state", state) as b2:
                pb = launch(2, ["--url", b2.url, "--log", self.path("b2"), "--ckpt", self.path("b.ckpt"), *JOB],
                            self.path("b2"))
                self.assertEqual(wait(pb), [0] * len(pb), self.stderr_of(self.path("b2")))
                self.assertIn("resumed from", self.stderr_of(self.path("b2")))
                info_b = ServiceBatchSampler(b2.url).info()
            whole = ServiceBatchSampler(a.url)
            global_batches = [whole.batch(s) for s in range(STEPS)]
            info_a = whole.info()
        jobs_seconds = time.monotonic() - t0

        log_a, log_b1, log_b2 = read_log(self.path("a")), read_log(self.path("b1")), read_log(self.path("b2"))
        self.assertEqual(sorted(log_a), list(range(STEPS)))

        # 1. The ranks' slices: disjoint, together the server's global batch.
        for s in range(STEPS):
            r0, r1 = log_a[s]
            self.assertFalse(set(r0["indices"]) & set(r1["indices"]), f"step {s}: the ranks' slices overlap")
            self.assertEqual(r0["indices"] + r1["indices"], global_batches[s], f"step {s}")
            self.assertEqual(r0["global_size"], len(global_batches[s]))
            self.assertEqual(r0["loss"], r1["loss"], f"step {s}: the ranks report different global losses")
        self.assertEqual(info_a["refreshes"], 3)

        # 2. Rank 0's loss and DDP's gradients against one process on the
        # same global batch and parameters (plain BatchNorm1d, the NT-Xent
        # above).
        a = self.defaults
        x = self.ex.make_dataset(a.n, a.dim, a.data_seed)
        worst_loss, worst_grad, worst_local = 0.0, 0.0, float("inf")
        for s in range(STEPS):
            dump = torch.load(os.path.join(self.path("dump-a"), f"step{s}.pt"))
            self.assertEqual(dump["step"], s)
            model = self.ex.build_model(a.dim, a.hidden, a.out, norm=torch.nn.BatchNorm1d)
            model.load_state_dict(dump["state"])
            idx = torch.tensor(global_batches[s])
            views = torch.cat([self.ex.augment(x[idx], idx, s, a.seed, 1), self.ex.augment(x[idx], idx, s, a.seed, 2)])
            z = model(views)
            loss = nt_xent(z[: len(idx)], z[len(idx):], a.temperature)
            loss.backward()
            diff = abs(loss.item() - log_a[s][0]["loss"])
            self.assertLessEqual(diff, 1e-5, f"step {s}: rank 0's loss {log_a[s][0]['loss']}, one process {loss.item()}")
            worst_loss = max(worst_loss, diff)
            for name, p in model.named_parameters():
                g = dump["grads"][name]
                err = (p.grad - g).abs().max().item()
                worst_grad = max(worst_grad, err)
                self.assertTrue(torch.allclose(p.grad, g, rtol=1e-4, atol=1e-6),
                                f"step {s}: gradient of {name} differs by up to {err:.3g} from one process's")
            # The check can fail: the loss with rank 0's half only (its own
            # negatives, per-rank BatchNorm) is another number.
            with torch.no_grad():
                h = len(log_a[s][0]["indices"])
                own = torch.cat([views[:h], views[len(idx): len(idx) + h]])
                zl = model(own)
                worst_local = min(worst_local, abs(nt_xent(zl[:h], zl[h:], a.temperature).item() - log_a[s][0]["loss"]))
        self.assertGreater(worst_local, 1e-3)

        # 3. The killed and restarted job B: the batches and losses of A.
        self.assertEqual(sorted(log_b1), list(range(KILL_AT)), "the killed job's steps")
        self.assertEqual(min(log_b2), 8, "the restarted job resumes from the checkpoint after step 7")
        self.assertEqual(max(log_b2), STEPS - 1)
        worst_restart = 0.0
        for log in (log_b1, log_b2):
            for s, recs in log.items():
                for r in (0, 1):
                    self.assertEqual(recs[r]["indices"], log_a[s][r]["indices"], f"step {s} rank {r}")
                worst_restart = max(worst_restart, abs(recs[0]["loss"] - log_a[s][0]["loss"]))
        self.assertLessEqual(worst_restart, 1e-6)
        self.assertEqual(info_b["next_step"], STEPS)
        self.assertEqual(info_b["refreshes"], info_a["refreshes"])
        print(f"\nDDP job: 2 ranks x {STEPS} steps; |rank 0 loss - one process| <= {worst_loss:.2g}, "
              f"gradients <= {worst_grad:.2g}; own-half-only loss differs by >= {worst_local:.3g}; "
              f"restart vs uninterrupted loss <= {worst_restart:.2g}; jobs {jobs_seconds:.1f} s", file=sys.stderr)

    def test_world_mismatch_fails_fast(self):
        # A job of 3 ranks that is gone left rank 2's shard of a refresh;
        # a job of 2 ranks must fail at once with the 409, not wait.
        with Server(*SERVE) as srv:
            emb = np.random.default_rng(0).standard_normal((96, 4)).astype(np.float32)
            lo, hi = shard_rows(96, 2, 3)
            ServiceBatchSampler(srv.url, rank=2, world_size=3, num_instances=96).refresh(emb[lo:hi])
            log = self.path("mismatch")
            with open(log + ".err", "w") as err:
                p = subprocess.Popen([PYTHON, EXAMPLE, "--url", srv.url, "--spawn", "2", "--timeout", "300"],
                                     env=dict(os.environ, OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1"),
                                     stdout=subprocess.DEVNULL, stderr=err)
                code = wait([p], timeout=480)[0]
            with open(log + ".err") as f:
                text = f.read()
            self.assertNotEqual(code, 0)
            self.assertIn("409 world_mismatch", text)
            self.assertIn("a sharded upload for world 3 over N = 96 is in progress (ranks [2] received)", text)
            info = ServiceBatchSampler(srv.url).info()
            self.assertEqual(info["shards"], {"world": 3, "n": 96, "received_ranks": [2]})


if __name__ == "__main__":
    unittest.main()
