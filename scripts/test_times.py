#!/usr/bin/python3
"""Where `make test`'s time goes: every package's wall time and CPU time,
and its slowest tests (issue 39; `make test-times`; not part of CI).

Runs `go test -count=1 -json ./...` with every test binary started through
GNU time (`go test -exec`), so each package's CPU time (user + system,
its own and that of the processes it waited for: the Python clients, the
commands it runs) is measured beside go test's wall times. On a shared
machine the wall times grow with the load and the CPU times much less:
the CPU column says what a package costs, and its sum over two cores is
the floor of the suite's wall time on an idle 2-core host. The peak RSS
column is GNU time's maximum resident set size of the test binary (or of
the largest process it waited for): the suite's peak is the largest of
them. Writes
test-times.md and test-times.json under --out and prints the table.

Usage: /usr/bin/python3 scripts/test_times.py [--out DIR] [--go GO] [--top N] [packages...]
"""

import argparse
import datetime
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = "github.com/batchsampler-go/batchsampler"


def die(msg):
    print("test_times: " + msg, file=sys.stderr)
    sys.exit(2)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def short(pkg):
    return pkg[len(MODULE):].lstrip("/") or "."


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "runs", "test-times"), help="directory for test-times.md/.json")
    ap.add_argument("--go", default="go", help="the go command")
    ap.add_argument("--top", type=int, default=25, help="slowest tests listed")
    ap.add_argument("--timeout", default="25m", help="go test -timeout")
    ap.add_argument("packages", nargs="*", default=["./..."])
    a = ap.parse_args()
    gnu_time = shutil.which("time", path="/usr/bin:/bin")
    if gnu_time is None:
        die("GNU time (/usr/bin/time, Debian package time) is needed to measure each package's CPU time")

    tmp = tempfile.mkdtemp(prefix="test-times-")
    try:
        cpu_file = os.path.join(tmp, "cpu.txt")
        wrapper = os.path.join(tmp, "exec.sh")
        # go test runs each test binary in its package's directory: the
        # wrapper records that directory with the binary's times.
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nexec %s -a -o %s -f "%%e %%U %%S %%M $PWD" "$@"\n' % (gnu_time, cpu_file))
        os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IXUSR)
        start_load, t0 = loadavg(), time.time()
        cmd = [a.go, "test", "-count=1", "-json", "-timeout", a.timeout, "-exec", wrapper] + a.packages
        p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        wall, end_load = time.time() - t0, loadavg()
        cpu = {}  # package directory -> (wall, user, sys, max RSS in KB)
        if os.path.exists(cpu_file):
            with open(cpu_file) as f:
                for line in f:
                    parts = line.split(None, 4)
                    if len(parts) == 5 and parts[0][0].isdigit():
                        cpu[os.path.realpath(parts[4].strip())] = tuple(float(x) for x in parts[:4])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    pkgs, tests, dirs = {}, [], {}
    for line in p.stdout.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        pkg, act = ev.get("Package"), ev.get("Action")
        if not pkg or act not in ("pass", "fail", "skip") or "Elapsed" not in ev:
            continue
        if ev.get("Test"):
            if "/" not in ev["Test"]:
                tests.append({"package": short(pkg), "test": ev["Test"], "seconds": ev["Elapsed"], "result": act})
        else:
            pkgs[pkg] = {"package": short(pkg), "wall": ev["Elapsed"], "result": act}
    if not pkgs:
        die("go test printed no package results:\n" + p.stderr[-3000:])
    listed = subprocess.run([a.go, "list", "-f", "{{.ImportPath}} {{.Dir}}"] + a.packages, cwd=REPO,
                            capture_output=True, text=True).stdout
    for line in listed.splitlines():
        imp, _, d = line.partition(" ")
        dirs[imp] = os.path.realpath(d)
    for pkg, r in pkgs.items():
        c = cpu.get(dirs.get(pkg, ""))
        r["cpu"] = round(c[1] + c[2], 2) if c else None
        r["rss_mb"] = round(c[3] / 1024) if c else None
    rows = sorted(pkgs.values(), key=lambda r: -(r["cpu"] or 0))
    tests.sort(key=lambda t: -t["seconds"])
    total_cpu = sum(r["cpu"] or 0 for r in rows)

    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    md = ["# `go test` times (%s)" % now, "",
          "Command: `%s` (from `scripts/test_times.py`). CPU: %s, %d logical CPUs. Load average (1, 5, 15 min): "
          "start %s, end %s. Wall time of the whole run %.0f s; CPU time of all test binaries %.0f s (%.1f min on "
          "2 cores at best)." % (" ".join(cmd[:6] + ["-exec", "<GNU time>"] + a.packages), cpu_model(),
                                 os.cpu_count() or 0, start_load, end_load, wall, total_cpu, total_cpu / 120), "",
          "| package | result | wall s | CPU s (user + system, with its subprocesses) | peak RSS MB (the test binary or its largest subprocess) |",
          "|---|---|---|---|---|"]
    for r in rows:
        md.append("| %s | %s | %.1f | %s | %s |" % (r["package"], r["result"], r["wall"],
                                                   "%.1f" % r["cpu"] if r["cpu"] is not None else "?",
                                                   r["rss_mb"] if r["rss_mb"] is not None else "?"))
    md += ["", "Slowest tests (wall s; a package's tests run one at a time unless they call t.Parallel):", "",
           "| package | test | result | wall s |", "|---|---|---|---|"]
    for t in tests[:a.top]:
        md.append("| %s | %s | %s | %.1f |" % (t["package"], t["test"], t["result"], t["seconds"]))
    text = "\n".join(md) + "\n"
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "test-times.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "test-times.json"), "w") as f:
        json.dump({"command": cmd, "cpu": cpu_model(), "load_start": start_load, "load_end": end_load,
                   "wall": wall, "packages": rows, "tests": tests}, f, indent=1)
    print(text)
    print("written: %s/test-times.md and test-times.json" % a.out)
    return 0 if p.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
