"""Tests of the Python client against the Go server.

Run from the repository root with an interpreter that has numpy (and torch
for the DataLoader tests):

    /usr/bin/python3 -m unittest discover -s clients/python/tests -v

The server binary is $BATCHSAMPLER_BIN, or built with `go build` into a
temporary directory. `go test ./cmd/batchsampler -run TestPythonClient`
runs these tests too.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

from bsserver import Server, binary  # noqa: E402
from batchsampler_client import TOKEN_ENV, RefreshDue, ServiceBatchSampler, ServiceError, shard_rows  # noqa: E402

try:
    import torch
    from torch.utils.data import DataLoader, TensorDataset
except ImportError:  # the DataLoader tests skip
    torch = None

N, D, B = 600, 16, 32
COMMON = ["-m", "80", "-k", "8", "-b", str(B), "-seed", "3", "-alpha", "0.2"]

_tmp = None
_bin = None


def setUpModule():
    global _tmp, _bin
    _bin = binary()
    _tmp = tempfile.mkdtemp(prefix="bsclient")


def tearDownModule():
    if _tmp:
        shutil.rmtree(_tmp, ignore_errors=True)


def embeddings(seed=0, n=N):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((6, D))
    return (centres[rng.integers(0, 6, n)] + 1.2 * rng.standard_normal((n, D))).astype(np.float32)


def cli_batches(emb_path, steps, *args):
    """The batches subcommand's output for the same configuration."""
    out = os.path.join(_tmp, "cli.npy")
    subprocess.run([_bin, "batches", "-emb", emb_path, "-out", out, "-steps", str(steps), *COMMON, *args],
                   check=True, capture_output=True, timeout=120)
    return [[int(v) for v in row if v >= 0] for row in np.load(out)]


class ClientTest(unittest.TestCase):

    @unittest.skipIf(torch is None, "torch is not installed")
    def test_dataloader_yields_server_batches(self):
        emb = embeddings()
        emb_path = os.path.join(_tmp, "e.npy")
        np.save(emb_path, emb)
        with Server(*COMMON, "-refresh-every", "7") as srv:
            sampler = ServiceBatchSampler(srv.url, embed_fn=lambda step: emb)
            loader = DataLoader(TensorDataset(torch.arange(N)), batch_sampler=sampler)
            self.assertEqual(len(loader), -(-N // B))
            got = [batch[0].tolist() for batch in loader]
            self.assertEqual(len(got), len(loader))
            for b in got:
                self.assertEqual(len(b), B)
                self.assertEqual(len(set(b)), B)
            # Again through the server (old steps are answered identically)
            # and from the batches subcommand (= the Go Driver, see the Go
            # tests).
            other = ServiceBatchSampler(srv.url)
            self.assertEqual([other.batch(s) for s in range(len(got))], got)
            self.assertEqual(cli_batches(emb_path, len(got), "-refresh-every", "7"), got)
            # The next epoch continues where the first ended.
            second = [batch[0].tolist() for batch in loader]
            self.assertEqual(len(second), len(got))
            self.assertEqual(sampler.step, 2 * len(got))

    def test_global_batch_samplers(self):
        """Every global batch sampler kind is served as the Go Driver forms it."""
        emb = embeddings(4)
        emb_path = os.path.join(_tmp, "eg.npy")
        np.save(emb_path, emb)
        for args in (["-kind", "gcbs"], ["-kind", "spectral", "-draw", "3", "-temperature", "0.2"],
                     ["-kind", "osgd", "-draw", "4", "-q", "2", "-temperature", "0.2"],
                     ["-kind", "kmeans"], ["-kind", "antikmeans"]):
            with self.subTest(kind=args[1]):
                with Server(*COMMON, "-refresh-every", "6", *args) as srv:
                    sampler = ServiceBatchSampler(srv.url, embed_fn=lambda step: emb)
                    got = [sampler.batch(s) for s in range(15)]
                    for b in got:
                        self.assertEqual(len(b), B)
                        self.assertEqual(len(set(b)), B)
                    self.assertEqual(cli_batches(emb_path, 15, "-refresh-every", "6", *args), got)

    def test_two_ranks_see_each_global_batch_once(self):
        emb = embeddings(1)
        with Server(*COMMON, "-refresh-every", "5", "-epochs", "2") as srv:
            results, errors = {}, []

            def rank_loop(rank):
                try:
                    lo, hi = shard_rows(N, rank, 2)
                    s = ServiceBatchSampler(srv.url, rank=rank, world_size=2, num_instances=N,
                                            embed_fn=lambda step: emb[lo:hi], refresh_wait=60)
                    results[rank] = [b for _ in range(2) for b in s]
                except Exception as e:  # reported by the main thread
                    errors.append(e)

            threads = [threading.Thread(target=rank_loop, args=(r,)) for r in (0, 1)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=120)
            self.assertFalse(errors, errors)
            whole = ServiceBatchSampler(srv.url)
            steps = 2 * len(whole)
            self.assertEqual(len(results[0]), steps)
            self.assertEqual(len(results[1]), steps)
            for step in range(steps):
                a, b = results[0][step], results[1][step]
                self.assertEqual(len(a), B // 2)
                self.assertEqual(len(b), B // 2)
                self.assertFalse(set(a) & set(b), f"step {step}: ranks share instances")
                self.assertEqual(a + b, whole.batch(step), f"step {step}")
            self.assertEqual(whole.info()["refreshes"], -(-steps // 5))

    def test_state_dict_resumes_on_a_new_server(self):
        emb = embeddings(2)
        with Server(*COMMON, "-refresh-every", "4") as a:
            s = ServiceBatchSampler(a.url, embed_fn=lambda step: emb)
            it = iter(s)
            first = [next(it) for _ in range(6)]
            state = s.state_dict(include_server_state=True)
            rest = list(it)
        self.assertEqual(state["step"], 6)
        with Server(*COMMON, "-refresh-every", "4") as b:
            r = ServiceBatchSampler(b.url, embed_fn=lambda step: emb)
            r.load_state_dict(state)
            self.assertEqual(r.batch(5), first[5])  # a kept step
            self.assertEqual(list(r), rest)

    def test_errors(self):
        emb = embeddings(3)
        with Server(*COMMON) as srv:
            s = ServiceBatchSampler(srv.url)
            with self.assertRaises(RefreshDue) as cm:
                s.batch(0)
            self.assertIn("refresh due before step 0", str(cm.exception))
            with self.assertRaises(RuntimeError):
                len(s)
            bad = emb.copy()
            bad[4, 1] = np.nan
            with self.assertRaisesRegex(ValueError, "row 4"):
                s.refresh(bad)
            s.refresh(emb)
            self.assertEqual(len(s), -(-N // B))
            with self.assertRaises(ServiceError) as cm:
                s.refresh(emb[:100])
            self.assertEqual((cm.exception.status, cm.exception.code), (409, "n_changed"))
            with self.assertRaises(ServiceError) as cm:
                s._json("POST", "/v1/refresh", b"\x93NUMPY garbage")
            self.assertEqual(cm.exception.code, "bad_npy")
            with self.assertRaises(ServiceError) as cm:
                ServiceBatchSampler(srv.url, rank=0, world_size=1)._json("GET", "/v1/batch?step=0&rank=3&world=2")
            self.assertEqual(cm.exception.code, "bad_rank")
            with self.assertRaises(ValueError):
                ServiceBatchSampler(srv.url, rank=2, world_size=2)
            self.assertEqual(s.health()["status"], "ok")
            self.assertEqual(len(s.batch(0)), B)

    def test_token(self):
        emb = embeddings(4)
        secret = "python-client-secret-0123456789"
        path = os.path.join(_tmp, "token")
        with open(path, "w") as f:
            f.write(secret + "\n")
        env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
        with Server(*COMMON, "-token-file", path, env=env) as srv:
            good = ServiceBatchSampler(srv.url, token_file=path)
            good.refresh(emb)
            first = good.batch(0)
            before = good.state_dict(include_server_state=True)["server_state"]
            for bad in (ServiceBatchSampler(srv.url, token=""), ServiceBatchSampler(srv.url, token="not-" + secret)):
                for call in (lambda s: s.refresh(emb), lambda s: s.batch(1), lambda s: s.info(),
                             lambda s: s.discard_upload(), lambda s: s.save_server_state()):
                    with self.assertRaises(ServiceError) as cm:
                        call(bad)
                    self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthorized"))
                    self.assertNotIn(secret, str(cm.exception))
                self.assertEqual(bad.health()["status"], "ok")
            self.assertEqual(good.state_dict(include_server_state=True)["server_state"], before)
            old = os.environ.get(TOKEN_ENV)
            os.environ[TOKEN_ENV] = secret
            try:
                from_env = ServiceBatchSampler(srv.url)
            finally:
                if old is None:
                    del os.environ[TOKEN_ENV]
                else:
                    os.environ[TOKEN_ENV] = old
            self.assertEqual(from_env.batch(0), first)
            self.assertNotIn(secret, repr(from_env.state_dict()))
            self.assertEqual(len(from_env.batch(1)), B)

    def test_world_mismatch(self):
        emb = embeddings(5)
        with Server(*COMMON) as srv:
            lo, hi = shard_rows(N, 0, 2)
            r0 = ServiceBatchSampler(srv.url, rank=0, world_size=2, num_instances=N)
            self.assertFalse(r0.refresh(emb[lo:hi])["complete"])
            lo3, hi3 = shard_rows(N, 1, 3)
            r1 = ServiceBatchSampler(srv.url, rank=1, world_size=3, num_instances=N, embed_fn=lambda step: emb[lo3:hi3])
            with self.assertRaises(ServiceError) as cm:
                r1.batch(0)  # refresh due: uploads its shard for world 3
            self.assertEqual((cm.exception.status, cm.exception.code), (409, "world_mismatch"))
            self.assertIn("world 2", cm.exception.message)
            self.assertEqual(r0.info()["shards"]["received_ranks"], [0])
            self.assertEqual(r0.discard_upload(), {"discarded_ranks": [0], "world": 2})
            self.assertEqual(r1.refresh(emb[lo3:hi3])["received_ranks"], [1])


if __name__ == "__main__":
    unittest.main()
