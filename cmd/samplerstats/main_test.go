package main

import "testing"

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
