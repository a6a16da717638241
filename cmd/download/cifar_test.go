package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cifarArchive packs data/testdata/SRC under the folder top, as the
// official archives do.
func cifarArchive(t *testing.T, src, top string) []byte {
	t.Helper()
	src = filepath.Join("..", "..", "data", "testdata", src)
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	members := map[string]string{top + "/": ""}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		members[top+"/"+e.Name()] = string(b)
	}
	return tarGz(t, members)
}

func TestDownloadCIFAR(t *testing.T) {
	for _, ds := range []struct {
		dataset, src, top, train, wantOut string
	}{
		{"cifar-10", "cifar10", "cifar-10-batches-bin", "-config configs/simclr-cifar10.yaml -set data.root=", "5 training images 3x32x32, 10 classes"},
		{"CIFAR100", "cifar100", "cifar-100-binary", "-config configs/simclr-cifar10.yaml -set data.source=cifar100 -set data.path=cifar-100-binary -set data.root=", "2 training images 3x32x32, 100 classes"},
	} {
		good := cifarArchive(t, ds.src, ds.top)
		h := md5.Sum(good)
		sum := hex.EncodeToString(h[:])
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(good) }))
		defer srv.Close()
		url := srv.URL + "/c.tar.gz"
		zeros := strings.Repeat("0", 32)
		for _, tc := range []struct {
			name, md5 string
			wantErr   []string
		}{
			{"good archive", sum, nil},
			{"md5 mismatch", zeros, []string{"download " + url + ": checksum mismatch: expected md5 " + zeros + ", received md5 " + sum}},
		} {
			t.Run(ds.dataset+"/"+tc.name, func(t *testing.T) {
				root := filepath.Join(t.TempDir(), "root")
				var out, errOut bytes.Buffer
				err := run(context.Background(), []string{"-dataset", ds.dataset, "-root", root, "-url", url, "-md5", tc.md5}, &out, &errOut)
				if tc.wantErr != nil {
					wantFailure(t, err, tc.wantErr, root)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				target := filepath.Join(root, ds.top)
				for _, w := range []string{"md5 " + sum + "  " + url, "checksum verified", target + ": " + ds.wantOut, "md5 verified: true",
					" is in " + target + "; train with: go run ./cmd/train " + ds.train + root + "\n"} {
					if !strings.Contains(out.String(), w) {
						t.Errorf("output\n%s\ndoes not contain %q", out.String(), w)
					}
				}
				if got := listTree(t, root); len(got) != 1+4 || got[0] != ds.top {
					t.Errorf("root holds %v: want %s/ and its 4 files only", got, ds.top)
				}
			})
		}
	}
}
