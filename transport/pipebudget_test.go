package transport

import (
	"errors"
	"testing"
)

// TestBudgetOfQuota: the budget is an eighth of the user's soft pipe
// quota, or a fixed 16 MiB when there is no quota or it cannot be read.
func TestBudgetOfQuota(t *testing.T) {
	for _, c := range []struct {
		name string
		soft string
		err  error
		page int
		want int
	}{
		{"the default quota", "16384\n", nil, 4096, 8 << 20},
		{"a quota of 64 KiB pages", "16384\n", nil, 65536, 128 << 20},
		{"a small quota", "800", nil, 4096, 100 * 4096},
		{"no quota", "0\n", nil, 4096, fallbackPipeBudget},
		{"unreadable", "", errors.New("no /proc"), 4096, fallbackPipeBudget},
		{"not a number", "many\n", nil, 4096, fallbackPipeBudget},
		{"negative", "-1\n", nil, 4096, fallbackPipeBudget},
	} {
		if got := budgetOfQuota([]byte(c.soft), c.err, c.page); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// TestPipeBudgetTakeGive: takes within the limit succeed, one past it fails
// and takes nothing, and what is given back can be taken again.
func TestPipeBudgetTakeGive(t *testing.T) {
	b := newPipeBudget(2 * pipeBytes)
	for i, c := range []struct {
		take, give int
		ok         bool
		inUse      int
	}{
		{take: pipeBytes, ok: true, inUse: pipeBytes},
		{take: pipeBytes, ok: true, inUse: 2 * pipeBytes},
		{take: 1, ok: false, inUse: 2 * pipeBytes},
		{give: pipeBytes, inUse: pipeBytes},
		{take: pipeBytes + 1, ok: false, inUse: pipeBytes},
		{take: pipeBytes, ok: true, inUse: 2 * pipeBytes},
		{give: 2 * pipeBytes, inUse: 0},
	} {
		if c.take > 0 {
			if ok := b.take(c.take); ok != c.ok {
				t.Errorf("step %d: take(%d) = %v, want %v", i, c.take, ok, c.ok)
			}
		} else {
			b.give(c.give)
		}
		if got := b.inUse(); got != c.inUse {
			t.Errorf("step %d: %d in use, want %d", i, got, c.inUse)
		}
	}
}
