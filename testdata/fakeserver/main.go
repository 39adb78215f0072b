// Command fakeserver serves testdata/fakeagent over the network, as the
// agent servers nvim-acp connects to do (transport/transporttest), so that
// every transport plays the same scripted scenarios as stdio: each
// connection (or client) gets its own fakeagent process
// ($FAKE_AGENT_SCENARIO and $FAKE_AGENT_LOG are passed on) and the server
// bridges its stdio.
//
//	fakeserver -kind KIND -agent PATH [-addr HOST:PORT] [-token T]
//
// KIND is sse (elephant.ai), http (ZeptoClaw) or acp (the ACP RFD: WebSocket
// and streamable HTTP at /acp). It prints "listening on HOST:PORT" when it
// is ready. With -token, every request must carry "Authorization: Bearer T"
// (401 otherwise).
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"

	"github.com/nvim-acp/nvim-acp/transport/transporttest"
)

func main() {
	kind := flag.String("kind", "acp", "sse, http or acp")
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	agent := flag.String("agent", "", "the agent to run")
	token := flag.String("token", "", "bearer token every request must carry")
	flag.Parse()
	h, err := transporttest.Handler(*kind, func() (*transporttest.Agent, error) { return start(*agent) }, *token)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	log.Fatal((&http.Server{Handler: h}).Serve(ln))
}

// start runs the agent program, ended with the server.
func start(path string) (*transporttest.Agent, error) {
	cmd := exec.Command(path)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Our own pipe: Wait may run while its output is still read.
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		stdout.Close()
		return nil, err
	}
	go cmd.Wait()
	return transporttest.NewAgent(stdin, stdout, func() { cmd.Process.Kill() }), nil
}
