package terminal

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

const benchBytes = 50 << 20

// benchGenerator prints benchBytes of text-like lines.
var benchGenerator = "yes 'the quick brown fox jumps over the lazy dog 0123456789 ~!@#' | head -c " + strconv.Itoa(benchBytes)

// resetPeakRSS resets VmHWM (Linux >= 4.0; best effort).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSMB reads VmHWM from /proc/self/status in MB.
func peakRSSMB(b *testing.B) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				b.Fatal(err)
			}
			return float64(kb) / 1024
		}
	}
	b.Skip("no VmHWM")
	return 0
}

func benchTerminal(b *testing.B, withCallback bool) {
	m := NewManager(Options{})
	defer m.Close()
	resetPeakRSS()
	b.SetBytes(benchBytes)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := CreateOptions{Command: "sh", Args: []string{"-c", benchGenerator}}
		var wakes int
		if withCallback {
			o.OnActivity = func() { wakes++ }
		}
		id, err := m.Create(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		st, err := m.WaitForExit(context.Background(), id)
		if err != nil || st.ExitCode == nil || *st.ExitCode != 0 {
			b.Fatalf("exit %v, %v", st, err)
		}
		out, err := m.Output(id)
		if err != nil || !out.Truncated || len(out.Text) < DefaultOutputByteLimit-100 {
			b.Fatalf("output %d bytes, truncated %v, %v", len(out.Text), out.Truncated, err)
		}
		if withCallback && wakes == 0 {
			b.Fatal("OnActivity never called")
		}
		if err := m.Release(id); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(peakRSSMB(b), "peakRSS-MB")
}

// BenchmarkThroughput pushes 50 MB through a PTY into the text capture.
func BenchmarkThroughput(b *testing.B) { benchTerminal(b, false) }

// BenchmarkThroughputOnActivity is BenchmarkThroughput with an OnActivity
// callback, as a live view has.
func BenchmarkThroughputOnActivity(b *testing.B) { benchTerminal(b, true) }

// BenchmarkReferenceCatDevNull runs the generator piped to cat > /dev/null, no PTY.
func BenchmarkReferenceCatDevNull(b *testing.B) {
	resetPeakRSS()
	b.SetBytes(benchBytes)
	for i := 0; i < b.N; i++ {
		if err := exec.Command("sh", "-c", benchGenerator+" | cat > /dev/null").Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(peakRSSMB(b), "peakRSS-MB")
}

// BenchmarkReferencePipe reads the generator through a plain pipe into Go, no PTY.
func BenchmarkReferencePipe(b *testing.B) {
	resetPeakRSS()
	b.SetBytes(benchBytes)
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("sh", "-c", benchGenerator)
		r, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, r)
		if err != nil || n != benchBytes {
			b.Fatalf("read %d, %v", n, err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(peakRSSMB(b), "peakRSS-MB")
}

// BenchmarkReferenceRawPTY reads the generator through a bare PTY without
// any capture: the kernel's PTY ceiling.
func BenchmarkReferenceRawPTY(b *testing.B) {
	resetPeakRSS()
	b.SetBytes(benchBytes)
	buf := make([]byte, 32<<10)
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("sh", "-c", benchGenerator)
		f, err := startPTY(cmd, DefaultRows, DefaultCols)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := f.Read(buf); err != nil {
				break
			}
		}
		_ = cmd.Wait()
		_ = f.Close()
	}
	b.StopTimer()
	b.ReportMetric(peakRSSMB(b), "peakRSS-MB")
}
