package configs

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestRead: the embedded copy is the file as shipped; an unknown name is
// an error listing the shipped configs.
func TestRead(t *testing.T) {
	for _, name := range []string{"simcse-stsb.yaml", "simcse-stsb-dcl.yaml", "simcse-stsb-hcl.yaml"} {
		got, err := Read(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the embedded copy differs from the file", name)
		}
	}
	if _, err := Read("nope.yaml"); err == nil || !strings.Contains(err.Error(), `"nope.yaml": not among the shipped configs`) || !strings.Contains(err.Error(), "simcse-stsb.yaml") {
		t.Errorf("unknown config: %v", err)
	}
}
