package train

import (
	"context"
	"os"

	"github.com/batchsampler-go/batchsampler/internal/gctune"
)

// startTestGCTuner gives the package's tests the collector settings of
// cmd/train and cmd/table (internal/gctune: about 256 MB of headroom past
// the live heap instead of GOGC's 100%) unless GOGC is set. The tests run
// the shipped configs one after the other, and the largest of them (the
// image configs' compiled ResNet steps, COLLAB's graphs and SVM protocol)
// keep hundreds of MB live: at GOGC 100 the test binary's peak was about
// twice that. Results do not depend on when memory is collected.
func startTestGCTuner() (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	return gctune.Default().Start(context.Background())
}
