//go:build !linux

package written

// Memo remembers nothing without inotify.
type Memo struct{}

// Watch watches nothing.
type Watch struct{}

// Begin watches nothing.
func (m *Memo) Begin(dfd int, name string) Watch { return Watch{} }

// Abort does nothing.
func (m *Memo) Abort(w Watch) {}

// Put keeps nothing.
func (m *Memo) Put(path string, dfd int, name string, w Watch, text string) {}

// Get misses.
func (m *Memo) Get(path string) (string, Info, bool) { return "", Info{}, false }

// Forget does nothing.
func (m *Memo) Forget(path string) {}

// Close does nothing.
func (m *Memo) Close() error { return nil }
