package filelock

import (
	"path/filepath"
	"testing"
)

func TestAcquireTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	f, held, err := Acquire(path)
	if err != nil || held || f == nil {
		t.Fatalf("first Acquire: f %v, held %v, err %v", f, held, err)
	}
	g, held, err := Acquire(path)
	if err != nil || !held || g != nil {
		t.Fatalf("second Acquire while held: f %v, held %v, err %v; want held", g, held, err)
	}
	Release(f, path)
	f, held, err = Acquire(path)
	if err != nil || held {
		t.Fatalf("Acquire after Release: held %v, err %v", held, err)
	}
	Release(f, path)
}
