package testenv

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SlurmDirVar names the directory of the one-node cluster of
// scripts/slurm-local.sh (default /tmp/batchsampler-slurm); RequireSlurmVar,
// set to 1 (.ci/run sets it once the cluster is up), turns the skips of
// Slurm into failures.
const (
	SlurmDirVar     = "BATCHSAMPLER_SLURM_DIR"
	RequireSlurmVar = "BATCHSAMPLER_REQUIRE_SLURM"
)

// Slurm returns the environment in which sbatch reaches a Slurm cluster
// that is up: $SLURM_CONF, or the slurm.conf of scripts/slurm-local.sh.
// Without sbatch on PATH, or without a cluster that answers with a node up,
// it skips the test saying why (fails when $BATCHSAMPLER_REQUIRE_SLURM=1).
func Slurm(tb testing.TB) []string {
	tb.Helper()
	skip := tb.Skipf
	if os.Getenv(RequireSlurmVar) == "1" {
		skip = tb.Fatalf
	}
	if _, err := exec.LookPath("sbatch"); err != nil {
		skip("no sbatch on PATH: apt-get install slurm-wlm munge, then scripts/slurm-local.sh start (.ci/run does both)")
		return nil
	}
	env := os.Environ()
	conf := os.Getenv("SLURM_CONF")
	if conf == "" {
		dir := os.Getenv(SlurmDirVar)
		if dir == "" {
			dir = "/tmp/batchsampler-slurm"
		}
		if p := filepath.Join(dir, "slurm.conf"); fileExists(p) {
			conf = p
			env = append(env, "SLURM_CONF="+p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sinfo", "-h", "-N", "-o", "%T")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	state := strings.TrimSpace(string(out))
	up := false
	for _, s := range strings.Fields(state) {
		switch strings.TrimRight(s, "*~#$@+-") {
		case "idle", "mixed", "allocated", "completing":
			up = true
		}
	}
	if err != nil || !up {
		where := "the default slurm.conf"
		if conf != "" {
			where = conf
		}
		skip("the Slurm cluster of %s is not up (sinfo: %q, %v): start one with scripts/slurm-local.sh start", where, state, err)
		return nil
	}
	return env
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Sbatch submits a job with sbatch --parsable --wait and the args, in
// env (from Slurm), and waits for it (all its array tasks) to end, at
// most timeout (then it cancels the job). outputs is the glob of the job's
// output files, printed when it fails.
func Sbatch(tb testing.TB, env []string, timeout time.Duration, outputs string, args ...string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sbatch", append([]string{"--parsable", "--wait"}, args...)...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	var id string
	sc := bufio.NewScanner(stdout)
	if sc.Scan() {
		id, _, _ = strings.Cut(strings.TrimSpace(sc.Text()), ";")
	}
	for sc.Scan() {
	}
	err = cmd.Wait()
	if ctx.Err() != nil && id != "" {
		c := exec.Command("scancel", id)
		c.Env = env
		c.Run()
	}
	if err != nil {
		var logs strings.Builder
		files, _ := filepath.Glob(outputs)
		for _, f := range files {
			b, _ := os.ReadFile(f)
			fmt.Fprintf(&logs, "--- %s\n%s", f, b)
		}
		tb.Fatalf("sbatch %s (job %s): %v after %s\n%s\n%s", strings.Join(args, " "), id, err, time.Since(start).Round(time.Millisecond), stderr.String(), logs.String())
	}
	tb.Logf("sbatch job %s: %s in %s", id, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
}
