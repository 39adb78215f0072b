package editormcp

import (
	"fmt"
	"reflect"
	"testing"
)

// run_command's ended terminals are kept a few commands (at most half the
// session's terminals), then released oldest first.
func TestRanReleasesOldest(t *testing.T) {
	for _, tc := range []struct {
		max  int
		want [][]string // released after each of t1, t2, ...
	}{
		{10, [][]string{nil, nil, nil, nil, {"t1"}, {"t2"}}},
		{2, [][]string{nil, {"t1"}, {"t2"}}},
		{0, [][]string{nil, nil, nil, nil, {"t1"}}}, // the default limit keeps 4
	} {
		var r Ran
		for i, want := range tc.want {
			got := r.Add(fmt.Sprintf("t%d", i+1), tc.max)
			if len(got) == 0 && len(want) == 0 {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("max %d, after t%d: released %v, want %v", tc.max, i+1, got, want)
			}
		}
	}
}
