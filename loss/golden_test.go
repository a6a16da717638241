package loss

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// updateGolden rewrites the golden file of this architecture
// (go test ./loss -run TestGoldenBits -update-golden).
var updateGolden = flag.Bool("update-golden", false, "rewrite loss/testdata/golden-GOARCH.txt")

// bufHash is a hash.Hash that keeps what is written.
type bufHash struct{ bytes.Buffer }

func (h *bufHash) Sum(b []byte) []byte { return b }
func (h *bufHash) Size() int           { return 0 }
func (h *bufHash) BlockSize() int      { return 1 }

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func bitsOf(v G.Value) []byte {
	var b []byte
	switch d := v.Data().(type) {
	case []float32:
		for _, x := range d {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
	case []float64:
		for _, x := range d {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
	case float32:
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(d))
	case float64:
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(d))
	default:
		panic(fmt.Sprintf("value data %T", d))
	}
	return b
}

// TestGoldenBits evaluates every kind and form of loss, in float32 and
// float64, on fixed inputs through a TapeMachine with gradients (an
// upstream gradient of 1 and of 3, which scales the cached gradient), and
// checks the loss and both gradients bit for bit, and the signatures of
// the graph's ops (String, WriteHash bytes, arity, type, flags), against
// testdata/golden-GOARCH.txt (skipped without one: the architecture decides
// the rounding).
func TestGoldenBits(t *testing.T) {
	var lines []string
	rec := func(name string, b []byte) { lines = append(lines, name+" "+digest(b)) }
	const b, d = 6, 5
	for _, kind := range []string{KindInfoNCE, KindDCL, KindHCL} {
		for _, form := range []string{FormSimCLR, FormGraphCL, FormSimCSE} {
			for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
				for _, scale := range []float64{1, 3} {
					c := Config{Kind: kind, Form: form, Temperature: 0.3, TauPlus: 0.1, Beta: 0.7}
					name := fmt.Sprintf("%s/%s/%v/x%g", kind, form, dt, scale)
					r := rand.New(rand.NewPCG(900, 1))
					z1 := make([]float64, b*d)
					z2 := make([]float64, b*d)
					for i := range z1 {
						z1[i] = r.NormFloat64()
						z2[i] = z1[i] + 0.5*r.NormFloat64()
					}
					g := G.NewGraph()
					n1 := G.NewMatrix(g, dt, G.WithShape(b, d), G.WithName("z1"), G.WithValue(denseOf(dt, z1, b, d)))
					n2 := G.NewMatrix(g, dt, G.WithShape(b, d), G.WithName("z2"), G.WithValue(denseOf(dt, z2, b, d)))
					l, err := Build(c, n1, n2)
					if err != nil {
						t.Fatal(err)
					}
					obj := l
					if scale != 1 {
						k := G.NewConstant(scale)
						if dt == tensor.Float32 {
							k = G.NewConstant(float32(scale))
						}
						obj = G.Must(G.Mul(l, k))
					}
					if _, err := G.Grad(obj, n1, n2); err != nil {
						t.Fatal(err)
					}
					vm := G.NewTapeMachine(g, G.BindDualValues(n1, n2))
					if err := vm.RunAll(); err != nil {
						t.Fatal(err)
					}
					rec(name+".loss", bitsOf(l.Value()))
					for i, n := range []*G.Node{n1, n2} {
						gv, err := n.Grad()
						if err != nil {
							t.Fatal(err)
						}
						rec(fmt.Sprintf("%s.grad%d", name, i), bitsOf(gv))
					}
					var sb strings.Builder
					for _, n := range g.AllNodes() {
						op := n.Op()
						if op == nil {
							continue
						}
						var hb bufHash
						op.WriteHash(&hb)
						h := fnv.New32a()
						op.WriteHash(h)
						if strings.Contains(op.String(), "Contrastive") && op.Hashcode() != h.Sum32() {
							t.Errorf("%s: %v: Hashcode %x, FNV-1a of WriteHash %x", name, op, op.Hashcode(), h.Sum32())
						}
						fmt.Fprintf(&sb, "%d %s | %q | %d | %v | %t %t %d | %v\n", n.ID(), op, hb.String(), op.Arity(), op.Type(),
							op.ReturnsPtr(), op.CallsExtern(), op.OverwritesInput(), n.Shape())
					}
					rec(name+".ops", []byte(sb.String()))
					vm.Close()
				}
			}
		}
	}
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", "golden-"+runtime.GOARCH+".txt")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("no %s for this architecture (create it with -update-golden on a known-good commit)", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	wl := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	if len(wl) != len(lines) {
		t.Errorf("%d golden records, want %d", len(lines), len(wl))
	}
	for i := 0; i < min(len(wl), len(lines)); i++ {
		if wl[i] != lines[i] {
			t.Errorf("record %d:\n got %s\nwant %s", i, lines[i], wl[i])
		}
	}
}
