package terminal

// RawSince returns the raw PTY output of id from offset off (bytes since the
// command started) for a live view that follows the output without a copy
// per read: data are the bytes from off on, or only the newest max of them
// when more are waiting (max > 0); skipped counts the bytes before data that
// were jumped over or are no longer kept (Options.RawTail); next is the
// offset after data. While the command runs faster than the view reads, the
// view shows the newest output and the agent's text capture still gets
// every byte.
func (m *Manager) RawSince(id string, off int64, max int) (data []byte, next int64, skipped int64, err error) {
	t, err := m.lookup(id)
	if err != nil {
		return nil, off, 0, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.raw.buf
	first := t.raw.lost // offset of b[0]
	end := first + int64(len(b))
	if off >= end {
		return nil, end, 0, nil
	}
	from := off
	if from < first {
		from = first
	}
	if max > 0 && end-from > int64(max) {
		from = end - int64(max)
	}
	return append([]byte(nil), b[from-first:]...), end, from - off, nil
}
