package transport

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAgentPipesHoldAWholeFile: the agent's stdin and stdout pipes hold
// pipeBytes, so a 660 KB file crosses in one write, where the kernel lets
// a process grow its pipes.
func TestAgentPipesHoldAWholeFile(t *testing.T) {
	t.Parallel() // closing an agent that ignores its stdin takes 5 s
	probe, probeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	growPipe(probe)
	allowed := pipeSize(t, probe) >= pipeBytes
	probe.Close()
	probeW.Close()
	if !allowed {
		t.Skip("this kernel does not let the user grow a pipe to 1 MiB")
	}
	p, err := Start(Command{Name: "pipes", Argv: []string{"sleep", "60"}, Tag: "transport-test/"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if n := pipeSize(t, p.stdoutR); n < pipeBytes {
		t.Errorf("the agent's stdout pipe holds %d bytes, want %d", n, pipeBytes)
	}
	msg := make([]byte, 660<<10)
	if n, err := p.TryWrite(msg); err != nil || n != len(msg) {
		t.Errorf("one write of 660 KB to an agent not reading took %d bytes (%v), want all", n, err)
	}
}

// pipeSize is the capacity of f's pipe.
func pipeSize(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var ferr error
	if err := rc.Control(func(fd uintptr) { n, ferr = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }); err != nil || ferr != nil {
		t.Fatalf("F_GETPIPE_SZ: %v %v", err, ferr)
	}
	return n
}
