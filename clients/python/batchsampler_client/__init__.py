"""PyTorch batch sampler backed by the batchsampler Go server.

The server (``batchsampler serve``, cmd/batchsampler in the Go module) builds
BatchSampler's proximity graph from the embeddings you upload and hands out
every step's global batch, a random walk with restart on that graph. This
module is pure Python + numpy (no build step, no torch import): the class
implements PyTorch's batch-sampler protocol, so

    sampler = ServiceBatchSampler("http://127.0.0.1:8470", embed_fn=embed)
    loader = DataLoader(dataset, batch_sampler=sampler, num_workers=4)

yields the server's batches. With DistributedDataParallel give every rank
``rank`` and ``world_size``: rank r receives its contiguous slice of the one
global batch of each step, so the ranks together see exactly B distinct
instances. A server listening beyond loopback requires a shared secret:
pass ``token=`` (or ``token_file=``), or set $BATCHSAMPLER_TOKEN. See
clients/python/README.md.
"""

import http.client
import io
import json
import os
import socket
import threading
import time
import urllib.parse

import numpy as np

__all__ = ["ServiceBatchSampler", "ServiceError", "RefreshDue", "shard_rows", "TOKEN_ENV"]

TOKEN_ENV = "BATCHSAMPLER_TOKEN"
"""The environment variable the server and this client read the shared secret from."""


def shard_rows(n, rank, world_size):
    """Rows [lo, hi) of ``rank``'s shard of n rows, as the server splits
    them: floor(rank*n/world_size) to floor((rank+1)*n/world_size)."""
    return rank * n // world_size, (rank + 1) * n // world_size


class ServiceError(RuntimeError):
    """An error answer of the server: HTTP ``status``, machine-readable
    ``code`` (bad_npy, non_finite, n_changed, refresh_due, step_gone, ...)
    and the server's message; ``body`` is the whole JSON answer."""

    def __init__(self, status, code, message, body=None):
        super().__init__(f"batchsampler server: {status} {code}: {message}")
        self.status, self.code, self.message, self.body = status, code, message, body or {}


class RefreshDue(ServiceError):
    """A step needs a graph refresh and no embeddings were uploaded for it
    (and the sampler has no ``embed_fn`` to compute them)."""


def _to_numpy(x):
    if hasattr(x, "detach"):  # a torch tensor, without importing torch
        x = x.detach().cpu().numpy()
    return np.ascontiguousarray(x)


class ServiceBatchSampler:
    """A batch sampler (``__iter__`` yields lists of indices, ``__len__``)
    whose batches come from a batchsampler server.

    url: the server, e.g. "http://127.0.0.1:8470".
    rank, world_size: this process's place in a DistributedDataParallel job
        (the batch size B is the server's global one; each rank gets about
        B / world_size indices per step).
    embed_fn: optional callable ``embed_fn(step)`` returning this rank's
        embeddings (its shard_rows(N, rank, world_size) rows when
        world_size > 1, all N rows otherwise; numpy array or torch tensor,
        float16/32/64). It is called when the server says a refresh is due
        (before step 0 and every refresh_every steps); without it call
        ``refresh`` yourself before those steps.
    num_instances: N, needed for sharded uploads when the server does not
        know N yet (else taken from the server).
    timeout: seconds for one HTTP request (a refresh builds the graph while
        the upload waits: allow for it).
    refresh_wait: seconds to wait for the other ranks' shards of a refresh.
    token, token_file: the server's shared secret (``serve -token-file``),
        sent as ``Authorization: Bearer``; by default $BATCHSAMPLER_TOKEN.
        It is never part of an error message or of ``state_dict()``.

    Iteration: each ``iter()`` yields the steps from ``self.step`` to the end
    of the epoch ``self.step`` is in, so one DataLoader pass is one epoch;
    ``set_epoch(e)`` jumps to epoch e's first step (as DistributedSampler's
    set_epoch, but it moves the position). ``state_dict()`` saves the next
    step (DataLoader prefetching means the sampler may be a few steps ahead
    of training: the server keeps recent steps, so re-asking is safe).
    """

    def __init__(self, url, rank=0, world_size=1, embed_fn=None, num_instances=None,
                 timeout=3600.0, refresh_wait=3600.0, poll_interval=0.05, token=None, token_file=None):
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is outside world size {world_size}: want 0 <= rank < world_size")
        u = urllib.parse.urlsplit(url)
        if u.scheme != "http" or not u.hostname:
            raise ValueError(f"url {url!r}: want http://host:port")
        self.url = url
        self._host, self._port = u.hostname, u.port or 80
        self.rank, self.world_size = rank, world_size
        self.embed_fn = embed_fn
        self.num_instances = num_instances
        self.timeout, self.refresh_wait, self.poll_interval = timeout, refresh_wait, poll_interval
        if token is None and token_file is not None:
            with open(token_file, encoding="utf-8") as f:
                token = f.read()
        if token is None:
            token = os.environ.get(TOKEN_ENV)
        token = (token or "").strip()
        self._auth = {"Authorization": "Bearer " + token} if token else {}
        self.step = 0
        self._conn = None
        self._lock = threading.Lock()
        self._info = None

    # -- HTTP -------------------------------------------------------------

    def _request(self, method, path, body=None, content_type="application/x-npy"):
        """One request on a kept-alive connection; a broken connection is
        reopened and the request sent again (every request is safe to
        repeat). Returns (status, headers, body bytes)."""
        with self._lock:
            for attempt in range(3):
                if self._conn is None:
                    self._conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
                try:
                    headers = dict(self._auth)
                    if body is not None:
                        headers["Content-Type"] = content_type
                    self._conn.request(method, path, body=body, headers=headers)
                    resp = self._conn.getresponse()
                    return resp.status, resp.headers, resp.read()
                except (http.client.RemoteDisconnected, http.client.BadStatusLine,
                        ConnectionResetError, BrokenPipeError, ConnectionRefusedError) as e:
                    self._conn.close()
                    self._conn = None
                    if attempt == 2:
                        raise ConnectionError(f"batchsampler server {self.url}: {method} {path}: {e}") from e
                    time.sleep(0.1 * (attempt + 1))
                except socket.timeout:
                    self._conn.close()
                    self._conn = None
                    raise

    @staticmethod
    def _error(status, data):
        try:
            body = json.loads(data)
        except ValueError:
            body = {"error": data[:200].decode("utf-8", "replace"), "code": "unknown"}
        cls = RefreshDue if body.get("code") == "refresh_due" else ServiceError
        return cls(status, body.get("code", "unknown"), body.get("error", ""), body)

    def _json(self, method, path, body=None, content_type="application/x-npy"):
        status, _, data = self._request(method, path, body, content_type)
        if status != 200:
            raise self._error(status, data)
        return json.loads(data)

    def close(self):
        """Closes the connection (it is reopened when needed)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()

    # -- server state -----------------------------------------------------

    def health(self):
        """GET /v1/health."""
        return self._json("GET", "/v1/health")

    def info(self):
        """GET /v1/info: configuration, n, batches_per_epoch, total_steps,
        next_step, kept_steps, ..."""
        self._info = self._json("GET", "/v1/info")
        return self._info

    def _known(self, key):
        if self._info is None or not self._info.get("n"):
            self.info()
        return self._info.get(key)

    def discard_upload(self):
        """Discards an unfinished sharded upload on the server (DELETE
        /v1/refresh): after a job that sent part of one is gone, a job of
        another world size is otherwise refused with 409 world_mismatch.
        Returns {"discarded_ranks": [...], "world": w}."""
        res = self._json("DELETE", "/v1/refresh")
        self._info = None
        return res

    def refresh(self, embeddings):
        """Uploads embeddings (POST /v1/refresh): all N rows, or this rank's
        shard_rows(N, rank, world_size) rows when world_size > 1. A
        neighbour table (int32/int64 N×K, from ``batchsampler graph``) is
        accepted too. Returns the server's JSON answer (complete,
        received_ranks, build_seconds when the graph was built at once)."""
        arr = _to_numpy(embeddings)
        if arr.ndim != 2:
            raise ValueError(f"embeddings of shape {arr.shape}: want a 2-D array (rows, dim)")
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            row = int(np.nonzero(~np.isfinite(arr).all(axis=1))[0][0])
            raise ValueError(f"embeddings row {row} has a NaN or Inf value")
        query = {"rank": self.rank, "world": self.world_size}
        if self.world_size > 1:
            n = self.num_instances or self._known("n")
            if not n:
                raise ValueError("a sharded refresh needs N: pass num_instances, or start the server with -n")
            lo, hi = shard_rows(n, self.rank, self.world_size)
            if arr.shape[0] != hi - lo:
                raise ValueError(f"rank {self.rank} of {self.world_size} over N = {n} uploads rows [{lo}, {hi}): "
                                 f"{hi - lo} rows, got {arr.shape[0]}")
            query["n"] = n
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        res = self._json("POST", "/v1/refresh?" + urllib.parse.urlencode(query), buf.getvalue())
        self._info = None
        return res

    # -- batches ----------------------------------------------------------

    def batch(self, step):
        """This rank's indices of the global batch of ``step`` (a list of
        ints). When the server says a refresh is due, ``embed_fn`` (if any)
        is called and its embeddings uploaded, and with several ranks the
        call waits for the other ranks' shards."""
        path = f"/v1/batch?step={step}&rank={self.rank}&world={self.world_size}"
        deadline = None
        uploaded = False
        while True:
            status, _, data = self._request("GET", path)
            if status == 200:
                return np.load(io.BytesIO(data), allow_pickle=False).tolist()
            err = self._error(status, data)
            if not isinstance(err, RefreshDue):
                raise err
            mine = (self.world_size > 1 and err.body.get("world") == self.world_size
                    and self.rank in err.body.get("received_ranks", []))
            if not mine:
                if self.embed_fn is None:
                    raise RefreshDue(err.status, err.code, err.message + " (or give ServiceBatchSampler an embed_fn)", err.body)
                if uploaded and self.world_size == 1:
                    raise err  # uploaded and still due: should not happen
                self.refresh(self.embed_fn(step))
                uploaded = True
                continue
            if deadline is None:
                deadline = time.monotonic() + self.refresh_wait
            elif time.monotonic() > deadline:
                raise TimeoutError(f"refresh before step {step}: waited {self.refresh_wait:.0f} s for the other ranks' "
                                   f"shards (received {err.body.get('received_ranks')})")
            time.sleep(self.poll_interval)

    def __len__(self):
        """Batches per epoch: ceil(N/B) (floor(N/B) when N mod B = 1). The
        server knows N from the first upload: before it, with an embed_fn,
        the first step's refresh is done here."""
        bpe = self._known("batches_per_epoch")
        if not bpe and self.embed_fn is not None:
            self.batch(self.step)  # uploads through embed_fn (and waits for the other ranks)
            bpe = self.info().get("batches_per_epoch")
        if not bpe:
            raise RuntimeError("the server does not know N yet: call refresh() first (or start the server with -n)")
        return bpe

    def epoch_end(self):
        """The step after the last one of the epoch ``self.step`` is in,
        capped at the training length."""
        bpe = len(self)
        end = (self.step // bpe + 1) * bpe
        total = self._known("total_steps")
        return min(end, total) if total else end

    def __iter__(self):
        end = self.epoch_end()
        while self.step < end:
            b = self.batch(self.step)
            self.step += 1
            yield b

    def set_epoch(self, epoch):
        """Moves to the first step of ``epoch``."""
        self.step = epoch * len(self)

    def refresh_due(self, step):
        """Whether the server refreshes the graph before ``step``."""
        t = int(self._known("refresh_every") or 0)
        return step == 0 or (t > 0 and step % t == 0)

    # -- checkpoints ------------------------------------------------------

    def state_dict(self, include_server_state=False):
        """The next step, and with include_server_state the server's whole
        state (GET /v1/state: graph, RNG, kept batches) so that a new server
        can resume exactly (it holds the N×K graph: large for big N; a server
        started with -state keeps its own instead)."""
        d = {"step": self.step, "rank": self.rank, "world_size": self.world_size}
        if include_server_state:
            status, _, data = self._request("GET", "/v1/state")
            if status != 200:
                raise self._error(status, data)
            d["server_state"] = data
        return d

    def load_state_dict(self, state):
        """Restores ``state_dict()``; a saved server state is uploaded (PUT
        /v1/state) — send it from one rank only."""
        self.step = int(state["step"])
        if state.get("server_state") is not None:
            self._json("PUT", "/v1/state", bytes(state["server_state"]), "application/octet-stream")
            self._info = None

    def save_server_state(self):
        """Asks the server to write its -state file now."""
        return self._json("POST", "/v1/state/save")
