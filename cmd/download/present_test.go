package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A dataset already under the data root and reading back is not fetched
// again: download says it is there, verifies it and succeeds without the
// network (the server is gone for the second command); -force fetches it
// again.
func TestDatasetAlreadyThere(t *testing.T) {
	md5Hex := func(b []byte) string { h := md5.Sum(b); return hex.EncodeToString(h[:]) }
	toy := toyZip(t)
	cifar := cifarArchive(t, "cifar10", "cifar-10-batches-bin")
	stl := stl10Archive(t, stl10Files())
	arch := textArchives(t, nil)
	for _, tc := range []struct {
		name string
		body []byte
		args []string
		want []string // in the second command's output
	}{
		{"TU", toy, []string{"-dataset", "TOY", "-sha256", sha256Hex(toy)}, []string{"TOY is already in ROOT/tu/TOY", "4 graphs", "TOY is in ROOT/tu/TOY; train with:"}},
		{"TU, kept zip", toy, []string{"-dataset", "TOY", "-sha256", sha256Hex(toy), "-keep-zip"}, []string{"TOY is already in ROOT/tu/TOY", "ROOT/tu/TOY.zip: sha256 " + sha256Hex(toy) + " verified against -sha256"}},
		{"CIFAR-10", cifar, []string{"-dataset", "cifar-10", "-md5", md5Hex(cifar)}, []string{"cifar-10 is already in ROOT/cifar-10-batches-bin", "5 training images", "train with:"}},
		{"STL-10", stl, []string{"-dataset", "stl-10", "-md5", md5Hex(stl)}, []string{"stl-10 is already in ROOT/stl10_binary", "training", "train with:"}},
		{"STS-B", arch["sts"], []string{"-dataset", "sts", "-sha256", sha256Hex(arch["sts"])}, []string{"sts is already in ROOT/sts", "STS Benchmark, pairs: 16 train", "train with:"}},
		{"SentEval STS", nil, []string{"-dataset", "senteval-sts", "-sha256", "any"}, []string{"STS12 is already in ROOT/senteval/STS/STS12-en-test", "sick is already in ROOT/senteval/SICK", "train with:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			args := append([]string{"-root", root}, tc.args...)
			var srv *httptest.Server
			if tc.body != nil {
				srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(tc.body) }))
				defer srv.Close()
				args = append(args, "-url", srv.URL+"/archive")
			}
			var out bytes.Buffer
			if err := run(context.Background(), args, &out, &out); err != nil {
				t.Fatalf("first download: %v\n%s", err, out.String())
			}
			// Offline: the server is gone.
			if srv != nil {
				srv.Close()
			} else {
				old := textURLs
				textURLs = map[string]string{}
				for k := range old {
					textURLs[k] = "http://127.0.0.1:1/gone"
				}
				defer func() { textURLs = old }()
			}
			out.Reset()
			if err := run(context.Background(), args, &out, &out); err != nil {
				t.Fatalf("second download of a dataset already there: %v\n%s", err, out.String())
			}
			got := out.String()
			for _, w := range tc.want {
				if w = strings.ReplaceAll(w, "ROOT", root); !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			if strings.Contains(got, "downloading") {
				t.Errorf("downloaded again:\n%s", got)
			}
			if srv != nil {
				// -force downloads it again (and fails here: the server is gone).
				if err := run(context.Background(), append(args, "-force"), &out, &out); err == nil {
					t.Error("-force did not download")
				}
			}
		})
	}
}
