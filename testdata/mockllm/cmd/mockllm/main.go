// Command mockllm serves a scripted mock LLM on loopback for trying real
// agents offline (see testdata/mockllm/README.md).
//
//	go run ./testdata/mockllm/cmd/mockllm -scenario read-edit -log requests.jsonl -var cwd=$PWD
//
// It prints its base URL on the first line of stdout and serves until
// interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/nvim-acp/nvim-acp/testdata/mockllm"
)

type varsFlag map[string]string

func (v varsFlag) String() string { return fmt.Sprint(map[string]string(v)) }

func (v varsFlag) Set(s string) error {
	k, x, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want name=value, got %q", s)
	}
	v[k] = x
	return nil
}

func main() {
	vars := varsFlag{}
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (loopback)")
	scenario := flag.String("scenario", "default", "built-in scenario ("+strings.Join(mockllm.Builtin(), ", ")+") or a JSON file")
	logPath := flag.String("log", "", "append one JSON line per request to this file")
	whole := flag.Bool("whole", false, "log messages' texts and tool results uncut (to read the whole conversation)")
	flag.Var(vars, "var", "name=value filling {{name}} in the scenario (repeatable), e.g. cwd=/work/dir")
	flag.Parse()
	if err := run(*addr, *scenario, *logPath, *whole, vars); err != nil {
		fmt.Fprintln(os.Stderr, "mockllm:", err)
		os.Exit(1)
	}
}

func run(addr, scenario, logPath string, whole bool, vars map[string]string) error {
	sc, err := mockllm.Load(scenario)
	if err != nil {
		return err
	}
	var log io.Writer
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("open log: %w", err)
		}
		defer f.Close()
		log = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := mockllm.New(sc, vars, log)
	srv.Whole = whole
	url, err := srv.Start(ctx, addr)
	if err != nil {
		return err
	}
	fmt.Println(url)
	fmt.Fprintf(os.Stderr, "mockllm: scenario %s on %s\n", sc.Name, url)
	<-ctx.Done()
	return nil
}
