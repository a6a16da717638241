package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	if err := run([]string{"-n", "400", "-c", "4", "-d", "6", "-b", "16", "-k", "5", "-m", "K,50,N", "-alpha", "0,0.5", "-batches", "10"}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-m", "x"}, {"-alpha", "y"}, {"-n", "0"}, {"-walk", "jump"}, {"-nope"}} {
		if err := run(args); err == nil {
			t.Errorf("run(%v) accepted", args)
		}
	}
}

// TestHelpIsNotAnError: -h prints the usage and succeeds.
func TestHelpIsNotAnError(t *testing.T) {
	if err := run([]string{"-h"}); err != nil {
		t.Errorf("-h: %v", err)
	}
}

// Bad flag values are refused before anything runs, naming the flag as
// typed, not the Go fields behind it (Config.M, Config.K).
func TestFlagErrorsNameTheFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-k", "-5"}, "-k -5: want a positive number of neighbours"},
		{[]string{"-k", "0"}, "-k 0:"},
		{[]string{"-m", "K,10", "-k", "20"}, "-m: M = 10 is below -k 20"},
		{[]string{"-m", "0"}, "-m: M = 0"},
		{[]string{"-b", "1"}, "-b 1:"},
		{[]string{"-n", "100", "-b", "200"}, "-b 200:"},
		{[]string{"-c", "0"}, "-c 0:"},
		{[]string{"-d", "-1"}, "-d -1:"},
		{[]string{"-batches", "0"}, "-batches 0:"},
		{[]string{"-alpha", "1.5"}, "-alpha: 1.5"},
		{[]string{"-within", "-1"}, "-within -1:"},
		{[]string{"-sharing", "all"}, `-sharing "all"`},
		{[]string{"-walk", "jump"}, `-walk "jump"`},
	} {
		err := run(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Config.") {
			t.Errorf("run(%v): error %v, want one saying %q (and no Go field)", tc.args, err, tc.want)
		}
	}
}
