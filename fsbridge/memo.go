package fsbridge

import (
	"sync"
	"unsafe"
)

// sameString reports whether a and b are the same string value: the same
// bytes in memory, not merely equal. Go strings are immutable, so while a
// is kept alive, identity means equal content without looking at it.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// textMemo remembers, per path, the last text that passed checkText, so the
// same buffer text read again (the host reuses its copy of an unchanged
// buffer) is not scanned again. It holds that text, which keeps the
// identity check sound.
type textMemo struct {
	mu sync.Mutex
	ok map[string]string
}

func (m *textMemo) seen(path, text string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.ok[path]
	return ok && sameString(t, text)
}

func (m *textMemo) remember(path, text string) {
	if len(text) < 4096 {
		return // scanning it is cheaper than remembering it
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ok == nil {
		m.ok = map[string]string{}
	}
	m.ok[path] = text
}

// Freeze computes b's Text once and keeps it: Text on b (and on copies of
// it made afterwards) returns the same string without joining the lines
// again. The lines must not change afterwards.
func (b *Buffer) Freeze() {
	b.text = b.Text()
	b.frozen = true
}
