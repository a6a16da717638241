// Package progress shows the progress of training runs on a terminal (a
// progress bar) or in a log (plain lines): the train.Observer of the
// commands, kept out of the library.
package progress

import (
	"fmt"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/batchsampler-go/batchsampler/train"
)

// Observer shows a progress bar on standard error when tty is true and
// plain log lines otherwise: one per epoch, and during an evaluation one per
// tenth done, at most one per evalLogEvery. prefix goes before every run's
// name (e.g. "MUTAG/graphcl " when several experiments share the output).
func Observer(tty bool, prefix string) train.Observer {
	logf := func(msg string) { fmt.Fprintf(os.Stderr, "%s %s%s\n", time.Now().Format("15:04:05"), prefix, msg) }
	var (
		bar      *progressbar.ProgressBar // training steps
		evalBar  *progressbar.ProgressBar // the current phase of an evaluation (terminal)
		perEpoch int
		// The current evaluation phase: its total, last count, last tenth
		// logged and when.
		evalTotal, evalDone, evalTenth int
		evalLogged                     time.Duration
	)
	// newBar makes a bar; predict shows the bar's own estimate of the time
	// left.
	newBar := func(total int, desc string, predict bool) *progressbar.ProgressBar {
		return progressbar.NewOptions(total,
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(predict),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	// endEval removes the evaluation's bar (the training bar redraws on its
	// next step).
	endEval := func() {
		if evalBar != nil {
			evalBar.Clear()
			evalBar = nil
		}
		evalTotal, evalDone, evalTenth, evalLogged = 0, 0, 0, 0
	}
	h := train.Observer{Log: func(msg string) {
		if evalBar != nil {
			evalBar.Clear()
		}
		if bar != nil {
			bar.Clear()
		}
		logf(msg)
	}}
	h.RunStart = func(run string, start, total int) {
		endEval()
		if total == 0 { // train.epochs: 0, nothing to show
			bar = nil
			return
		}
		if tty {
			bar = newBar(total, prefix+run, true)
			_ = bar.Set(start)
		} else if start < total {
			logf(fmt.Sprintf("%s: steps %d..%d", run, start+1, total))
		}
		perEpoch = 0
	}
	h.Step = func(s train.StepInfo) {
		endEval()
		where := fmt.Sprintf("run %d/%d %s", s.RunIndex, s.Runs, s.Run)
		clock := fmt.Sprintf("%s so far, ~%s left", s.SoFar.Round(time.Second), s.Left.Round(time.Second))
		if bar != nil {
			bar.Describe(fmt.Sprintf("%s%s epoch %d loss %.4f (%s)", prefix, where, s.Epoch, s.Loss, clock))
			_ = bar.Set(s.Step)
			return
		}
		if perEpoch == 0 && s.Epoch > 1 {
			perEpoch = s.Step - 1
		}
		if s.Step == s.TotalSteps || (perEpoch > 0 && s.Step%perEpoch == 0) || s.Step == 1 {
			logf(fmt.Sprintf("%s: step %d/%d epoch %d loss %.4f (%.1fs; experiment %s)", where, s.Step, s.TotalSteps, s.Epoch, s.Loss, s.Elapsed.Seconds(), clock))
		}
	}
	h.Eval = func(run string, done, total int, elapsed time.Duration) {
		if total <= 0 {
			return
		}
		if total != evalTotal || done < evalDone { // a new phase
			endEval()
			evalTotal = total
		}
		evalDone = done
		left := ""
		if done > 0 && done < total {
			left = fmt.Sprintf(", ~%s left", evalTimeLeft(done, total, elapsed))
		}
		if tty {
			if evalBar == nil {
				if bar != nil {
					bar.Clear()
				}
				// The bar's own estimate would start at the first unit's end:
				// the description shows the run's estimate instead.
				evalBar = newBar(total, prefix+run+" evaluating", false)
			}
			_ = evalBar.Set(done)
			evalBar.Describe(prefix + run + " evaluating" + left)
			return
		}
		if tenth := done * 10 / total; tenth > evalTenth && done < total && elapsed-evalLogged >= evalLogEvery {
			evalTenth, evalLogged = tenth, elapsed
			logf(fmt.Sprintf("%s: evaluating, %d%% (%d/%d)%s", run, done*100/total, done, total, left))
		}
	}
	h.RunEnd = func(string) {
		endEval()
		if bar != nil {
			bar.Finish()
			bar = nil
		}
	}
	return h
}

// evalLogEvery is the least time between two plain log lines of an
// evaluation's progress (a short evaluation logs none).
const evalLogEvery = 5 * time.Second

// evalTimeLeft extrapolates the time left of an evaluation from the time
// its first done units took, rounded for display (1m20s, 45s, 3.2s).
func evalTimeLeft(done, total int, elapsed time.Duration) time.Duration {
	left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
	if left >= 10*time.Second {
		return left.Round(time.Second)
	}
	return left.Round(100 * time.Millisecond)
}
