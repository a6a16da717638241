"""The Go server for the Python tests: its binary ($BATCHSAMPLER_BIN, or
built once per process with `go build`) and a Server process on a free
loopback port."""

import atexit
import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

_bin = None


def binary():
    """The batchsampler binary (SkipTest without one and without go)."""
    global _bin
    if _bin is None:
        _bin = os.environ.get("BATCHSAMPLER_BIN")
    if not _bin:
        if shutil.which("go") is None:
            raise unittest.SkipTest("no $BATCHSAMPLER_BIN and no go to build the server")
        tmp = tempfile.mkdtemp(prefix="bsbin")
        atexit.register(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "batchsampler")
        subprocess.run(["go", "build", "-o", path, "./cmd/batchsampler"], cwd=REPO, check=True, timeout=600)
        _bin = path
    return _bin


class Server:
    """A `batchsampler serve` process on a free loopback port (-quiet unless
    quiet=False: then its log goes to the file log)."""

    def __init__(self, *args, env=None, quiet=True, log=None):
        flags = ["-quiet"] if quiet else []
        self._log = open(log, "a") if log else subprocess.DEVNULL
        self.proc = subprocess.Popen([binary(), "serve", "-addr", "127.0.0.1:0", *flags, *args],
                                     stdout=subprocess.PIPE, stderr=self._log if not quiet else subprocess.PIPE,
                                     text=True, env=env)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise RuntimeError(f"server did not start: {line!r} {err}")
        self.url = line.split()[-1]

    def stop(self):
        """SIGTERM (the server saves its -state file) and wait."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        if self.proc.stderr:
            self.proc.stderr.close()
        if self._log is not subprocess.DEVNULL:
            self._log.close()
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
