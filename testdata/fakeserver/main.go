// Command fakeserver serves testdata/fakeagent over the network, as the
// agent servers nvim-acp connects to do (transport/transporttest), so that
// every transport plays the same scripted scenarios as stdio: each
// connection (or client) gets its own fakeagent process
// ($FAKE_AGENT_SCENARIO and $FAKE_AGENT_LOG are passed on) and the server
// bridges its stdio.
//
//	fakeserver -kind KIND -agent PATH [-inproc] [-addr HOST:PORT] [-token T] [-cert FILE] [-max-body N] [-sndbuf N]
//
// KIND is sse (elephant.ai), http (ZeptoClaw) or acp (the ACP RFD: WebSocket
// and streamable HTTP at /acp). It prints "listening on HOST:PORT" when it
// is ready. With -token, every request must carry "Authorization: Bearer T"
// (401 otherwise). With -cert, it serves TLS (https, wss) with a
// certificate of its own for 127.0.0.1 and localhost, made afresh at each
// start and written to FILE (PEM) for clients to trust. With -max-body, a
// POST of more than N bytes is refused with 413, as real servers limit
// them (ZeptoClaw: ~110 KB, elephant.ai: 4 MiB). With -inproc, the
// scenario is played in the server's own process (package player) instead
// of by an agent process: no relay of another process's stdio, as an agent
// server serving its agent in-process has (benchmarks tell the server's
// cost from the client's with it). With -sndbuf, each connection's kernel
// send buffer is held at N bytes (as a pipe holds 64 KiB), not auto-tuned
// to MiBs, and the RFD's streamable HTTP holds at most N bytes for each
// event stream before it stops reading its agent: how much the server
// keeps queued when the client is behind.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"github.com/nvim-acp/nvim-acp/testdata/fakeagent/player"
	"github.com/nvim-acp/nvim-acp/transport/transporttest"
)

func main() {
	kind := flag.String("kind", "acp", "sse, http or acp")
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	agent := flag.String("agent", "", "the agent to run")
	token := flag.String("token", "", "bearer token every request must carry")
	certFile := flag.String("cert", "", "serve TLS; write the certificate here")
	maxBody := flag.Int64("max-body", 0, "refuse POSTs of more bytes (413)")
	inproc := flag.Bool("inproc", false, "play the scenario in this process, not by running the agent")
	sndbuf := flag.Int("sndbuf", 0, "hold each connection's kernel send buffer at this many bytes")
	flag.Parse()
	h, err := transporttest.Handler(*kind, func() (*transporttest.Agent, error) {
		run := start
		if *inproc {
			run = startInProcess
		}
		a, err := run(*agent)
		if a != nil {
			a.Queue = *sndbuf
		}
		return a, err
	}, *token)
	if err != nil {
		log.Fatal(err)
	}
	if *maxBody > 0 {
		h = limitBody(h, *maxBody)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if *sndbuf > 0 {
		ln = sndbufListener{ln, *sndbuf}
	}
	if *certFile != "" {
		cert, err := selfSigned(*certFile)
		if err != nil {
			log.Fatal(err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	log.Fatal((&http.Server{Handler: h}).Serve(ln))
}

// limitBody refuses POSTs of more than n bytes with 413.
func limitBody(h http.Handler, n int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && (r.ContentLength > n || r.ContentLength < 0) {
			http.Error(w, `{"error":"payload too large"}`, http.StatusRequestEntityTooLarge)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// selfSigned makes a certificate for 127.0.0.1 and localhost, signed by
// its own key, and writes it to file.
func selfSigned(file string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "fakeserver"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(file, pemCert, 0o644); err != nil {
		return tls.Certificate{}, fmt.Errorf("write the certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
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

// startInProcess plays $FAKE_AGENT_SCENARIO in this process, logging to
// $FAKE_AGENT_LOG as the agent would; self is the fakeagent program (its
// spawn steps run it). An exit step ends this agent only.
func startInProcess(self string) (*transporttest.Agent, error) {
	sc, err := player.Load(os.Getenv("FAKE_AGENT_SCENARIO"))
	if err != nil {
		return nil, err
	}
	var logW io.WriteCloser
	if p := os.Getenv("FAKE_AGENT_LOG"); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		logW = f
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	end := func() {
		inR.Close()
		outW.Close()
	}
	go func() {
		defer end()
		if logW != nil {
			defer logW.Close()
		}
		cfg := player.Config{Scenario: sc, Self: self, Exit: func(int) {
			end()
			runtime.Goexit()
		}}
		if logW != nil {
			cfg.Log = logW
		}
		player.Serve(inR, outW, cfg)
	}()
	return transporttest.NewAgent(inW, outR, end), nil
}

// sndbufListener sets the send buffer of each connection it accepts.
type sndbufListener struct {
	net.Listener
	size int
}

func (l sndbufListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		if err := tc.SetWriteBuffer(l.size); err != nil {
			log.Printf("sndbuf: %v", err)
		}
	}
	return c, err
}
