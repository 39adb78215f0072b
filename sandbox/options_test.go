package sandbox

import (
	"errors"
	"testing"
	"time"
)

// TestWorksRetriesFailure: a failed probe's answer holds for probeRetry,
// then the probe is tried again; a success holds for good.
func TestWorksRetriesFailure(t *testing.T) {
	now := time.Unix(1000, 0)
	probes := 0
	answers := []error{errors.New("bwrap: timed out"), errors.New("bwrap: timed out"), nil, errors.New("never asked")}
	p := &probed{
		probe: func() (string, error) {
			err := answers[probes]
			probes++
			if err != nil {
				return "", err
			}
			return "/usr/bin/bwrap", nil
		},
		now: func() time.Time { return now },
	}
	steps := []struct {
		after  time.Duration
		works  bool
		probes int
	}{
		{0, false, 1},                        // the first call probes
		{probeRetry - time.Second, false, 1}, // the failure holds
		{time.Second, false, 2},              // then is tried again, fails again
		{probeRetry, true, 3},                // and again, and works
		{time.Hour, true, 3},                 // which holds
	}
	for i, s := range steps {
		now = now.Add(s.after)
		bwrap, err := p.works()
		if (err == nil) != s.works || probes != s.probes {
			t.Fatalf("step %d: works() = %q, %v after %d probes; want works %v after %d", i, bwrap, err, probes, s.works, s.probes)
		}
	}
}
