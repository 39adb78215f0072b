package sandbox

import "testing"

// BenchmarkPrepare is the cost of deciding a command's sandbox (the mounts,
// the git repository's protections, the invocation) on every terminal/create,
// with what nvim-acp's own files add (Neovim's data read-only where shown,
// saved chats and the log hidden, its state hidden).
func BenchmarkPrepare(b *testing.B) {
	w := newWorld(b)
	p, c := w.policy(), w.command()
	w.mkdir(b, "home/.local/share/nvim/acp/history")
	p.Protect = []string{w.home + "/.config/nvim", w.home + "/.local/share/nvim"}
	p.Hide = []string{w.home + "/.local/share/nvim/acp/history", w.home + "/.local/state/nvim/acp.log"}
	p.Private = []string{w.root + "/state/acp"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := p.Prepare(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExplain reads 1 MiB of output (the default output_byte_limit)
// for denials.
func BenchmarkExplain(b *testing.B) {
	w := newWorld(b)
	r, err := w.policy().Prepare(w.command())
	if err != nil {
		b.Fatal(err)
	}
	line := "ok  \texample.com/tiny/pkg\t0.014s some ordinary output of a build\n"
	out := make([]byte, 0, 1<<20)
	for len(out)+len(line) < 1<<20 {
		out = append(out, line...)
	}
	out = append(out, "sh: 1: cannot create "+w.home+"/.bashrc: Read-only file system\n"...)
	text := string(out)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n := r.Explain(text); len(n) != 1 {
			b.Fatal(n)
		}
	}
}
