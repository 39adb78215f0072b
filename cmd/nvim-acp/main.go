// Command nvim-acp is the Go host of the nvim-acp Neovim plugin. Neovim
// starts it with jobstart({bin}, {rpc = true}); it speaks msgpack-RPC to
// Neovim on stdio and the Agent Client Protocol to the agents it spawns.
//
//	nvim-acp [--log FILE]   run as Neovim's RPC child
//	nvim-acp demo-agent     run the bundled demo agent on stdio (ACP)
//	nvim-acp mcp --socket PATH   (started by agents) the editor's MCP server on stdio, see editormcp
//	nvim-acp watchdog ...   (internal) ends what a dead host left, see watchdog.go
//	nvim-acp sandbox-check  try a sandboxed command (bubblewrap); say why it fails
//	nvim-acp --version
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/neovim/go-client/nvim"

	"github.com/nvim-acp/nvim-acp/demoagent"
	"github.com/nvim-acp/nvim-acp/editormcp"
	"github.com/nvim-acp/nvim-acp/host"
	"github.com/nvim-acp/nvim-acp/internal/pollfile"
	"github.com/nvim-acp/nvim-acp/internal/scrub"
	"github.com/nvim-acp/nvim-acp/proctree"
	"github.com/nvim-acp/nvim-acp/sandbox"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "watchdog" || os.Args[1] == "watchdog-run") {
		watchdog(os.Args[1:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "demo-agent" {
		if err := demoagent.Run(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "demo-agent:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "mcp" {
		mcpChild(os.Args[2:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "sandbox-check" {
		os.Exit(sandboxCheck())
	}
	logPath := flag.String("log", "", "log file (default: none)")
	level := flag.String("log-level", "info", "debug, info, warn or error")
	version := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *version {
		fmt.Println("nvim-acp", host.Version)
		return
	}
	if err := run(*logPath, *level); err != nil {
		fmt.Fprintln(os.Stderr, "nvim-acp:", err)
		os.Exit(1)
	}
}

// sandboxCheck runs a command in the sandbox commands get and prints
// "ok: BWRAP (VERSION)" or "error: WHY (WHAT TO DO)"; :checkhealth acp
// shows it.
func sandboxCheck() int {
	if err := sandbox.Probe(context.Background()); err != nil {
		fmt.Println("error:", err)
		if errors.Is(err, sandbox.ErrNoBwrap) {
			fmt.Println("hint:", sandbox.Install)
		}
		return 1
	}
	bwrap, _, _ := sandbox.Find()
	v, _ := exec.Command(bwrap, "--version").Output()
	fmt.Printf("ok: %s (%s)\n", bwrap, strings.TrimSpace(string(v)))
	return 0
}

func run(logPath, level string) error {
	// stdout is the RPC channel: keep everything else off it. Both pipes
	// go through Go's poller (pollfile): the host waits on Neovim after
	// every message.
	stdout := os.Stdout
	defer runtime.KeepAlive(stdout) // its finalizer would close fd 1
	rpcOut := pollfile.Of(stdout)
	os.Stdout = os.Stderr

	// Secrets (keys typed at a login prompt) are masked in every log line.
	secrets := scrub.New()
	var w io.Writer = io.Discard
	if logPath != "" {
		if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
			return fmt.Errorf("log dir: %w", err)
		}
		f, err := openLog(logPath, maxLogBytes)
		if err != nil {
			return err
		}
		defer f.Close()
		w = secrets.Writer(f)
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		lvl = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl})).With("host_pid", os.Getpid())
	slog.SetDefault(log)

	// Neovim's answers are read through a pipe's worth of buffer, not the
	// client's 4 KB: a diagnostics answer of 75 KB was 19 reads.
	in := bufio.NewReaderSize(pollfile.Of(os.Stdin), 64<<10)
	nv, err := nvim.New(in, rpcOut, rpcOut, func(format string, a ...any) {
		log.Debug(fmt.Sprintf(format, a...))
	})
	if err != nil {
		return fmt.Errorf("rpc: %w", err)
	}
	if p := os.Getenv("NVIM_ACP_CPUPROFILE"); p != "" {
		// Profiling (make bench, issue hunting): a CPU profile of the whole
		// run, written when Neovim goes away. "%p" in the name is the pid
		// (a bench starts several hosts).
		f, err := os.Create(strings.ReplaceAll(p, "%p", strconv.Itoa(os.Getpid())))
		if err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	defer dumpOnSignal(w)()
	h := host.New(nv, log, secrets)
	if err := h.Register(); err != nil {
		return err
	}
	// The watchdog first (it must not be our child), then the subreaper:
	// orphans of what we start stay ours, and the host reaps them.
	wd, err := startWatchdog(h.OwnerPrefix(), logPath)
	if err != nil {
		log.Warn("no watchdog: what the host starts may outlive a host crash", "err", err)
	} else {
		defer wd.Close()
	}
	if err := proctree.Subreaper(); err != nil {
		log.Warn("not a child subreaper: orphans of agents and commands go to init", "err", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	log.Info("host started", "version", host.Version)
	err = h.Run(ctx)
	if wd != nil {
		// Shutdown ended what the host started; a last look (in its own
		// tree: it is a child subreaper) for anything started since, and
		// the watchdog need not look at all.
		if n := proctree.Kill(0, h.OwnerPrefix()); n > 0 {
			log.Info("killed processes started during the shutdown", "count", n)
		}
		wd.Done()
	}
	log.Info("host exiting", "err", err)
	if err != nil {
		return fmt.Errorf("rpc: %w", err)
	}
	return nil
}

// mcpChild is `nvim-acp mcp --socket PATH`: the stdio MCP server an agent
// starts for the editor of its session (the token in $NVIM_ACP_MCP_TOKEN).
func mcpChild(args []string) {
	fs := flag.NewFlagSet("mcp", flag.ExitOnError)
	socket := fs.String("socket", "", "the host's MCP socket")
	_ = fs.Parse(args)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	if err := editormcp.RunChild(ctx, *socket, os.Getenv(editormcp.EnvToken), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "nvim-acp", err)
		os.Exit(1)
	}
}

// dumpOnSignal writes every goroutine's stack to w (the log) on SIGUSR1,
// until the returned stop is called: a host that seems stuck is looked
// into without stopping it (the e2e suite does so on a failure).
func dumpOnSignal(w io.Writer) (stop func()) {
	sig := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-sig:
				var b strings.Builder
				_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
				fmt.Fprintf(w, "--- goroutines (SIGUSR1) ---\n%s--- end of goroutines ---\n", b.String())
			}
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}
