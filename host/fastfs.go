package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/fsbridge"
	"github.com/nvim-acp/nvim-acp/internal/gate"
	"github.com/nvim-acp/nvim-acp/internal/jsontext"
)

// The fs/* fast path. fs/read_text_file and fs/write_text_file carry whole
// files as JSON strings; through acp-go-sdk a 660 KB buffer crossed
// encoding/json four to six times per request (the SDK's envelope, our
// params, the result, the SDK's RawMessage compaction) and that cost
// several times what the agent itself spends. So the gate hands every
// line to fastFS.intercept before the SDK sees it: a well-formed fs/*
// request (parseFSRequest: one pass, declining anything encoding/json might
// read differently) is served here and its response written straight to
// the agent's stdin, a read's content as the escaped text of the buffer,
// escaped once per buffer version (jsontext.Text, kept in the buffer cache).
// Everything else, including fs/* requests the parser declines, goes
// through the SDK as before and is served by the same code (serveRead,
// serveWrite).
//
// The path keeps the SDK's semantics: each request runs in its own
// goroutine after the session/update notifications read before it
// (gate.barrier), $/cancel_request cancels it, the agent's exit cancels
// it, and responses are whole lines written under the same lock as the
// SDK's own messages (agentWriter).
type fastFS struct {
	a *Agent

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // by raw JSON id

	// Requests are served by workers kept waiting on work (at most
	// maxIdleWorkers of them, blocked without timers) rather than a new
	// goroutine each: a new one's stack grew (copied) to the depth of a
	// read on every request.
	work     chan fastJob
	idle     atomic.Int32
	lifeOnce sync.Once
	life     context.Context // cancelled when the agent exits

	nowOnce    sync.Once
	nowCtx     context.Context // reads served on the reader (nil: none; see nowOK)
	drainedCtx context.Context // nowCtx for a read whose queues were drained after it came (readQueues)
	reads      readMemo        // the last read parsed (intercept's, on the reader only)
	nowN       atomic.Int64    // requests served on the reader (tests)
	sentN      atomic.Int64    // of those, answered on the reader too (tests)
}

// maxIdleWorkers bounds the workers left waiting for the next request.
const maxIdleWorkers = 4

// fastJob is one request for a worker.
type fastJob struct {
	ctx    context.Context
	cancel context.CancelFunc
	key    string
	req    fsRequest
}

// lifetime is a context cancelled when the agent exits: one goroutine per
// agent waits for that, not one per request.
func (f *fastFS) lifetime() context.Context {
	f.lifeOnce.Do(func() {
		var cancel context.CancelFunc
		f.life, cancel = context.WithCancel(context.Background())
		f.work = make(chan fastJob)
		go func() {
			<-f.a.exited
			cancel()
		}()
	})
	return f.life
}

// worker serves job, then waits for more while fewer than maxIdleWorkers
// wait; it ends with the agent.
func (f *fastFS) worker(job fastJob) {
	for {
		f.run(job)
		if f.idle.Add(1) > maxIdleWorkers {
			f.idle.Add(-1)
			return
		}
		select {
		case job = <-f.work:
			f.idle.Add(-1)
		case <-f.life.Done():
			f.idle.Add(-1)
			return
		}
	}
}

// run serves one request and forgets it.
func (f *fastFS) run(job fastJob) {
	defer func() {
		f.mu.Lock()
		delete(f.inflight, job.key)
		f.mu.Unlock()
		job.cancel()
	}()
	f.serve(job.ctx, job.req)
}

// agentWriter serializes whole messages to the agent's stdin: acp-go-sdk's
// (one Write per message) and the fast path's.
type agentWriter struct {
	mu     sync.Mutex
	w      io.Writer
	whole  bool        // w must get each message in one Write (tracing)
	failed atomic.Bool // a write failed: the agent's stdin is closed
	calls  *gate.Calls // sees each of the SDK's messages (request)
}

func (w *agentWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.calls != nil {
		w.calls.Written(p)
	}
	return w.note(w.w.Write(p))
}

// note records a failed write (see failed).
func (w *agentWriter) note(n int, err error) (int, error) {
	if err != nil {
		w.failed.Store(true)
	}
	return n, err
}

// writeMessage writes the concatenation of parts as one message. Small
// messages go out in one write; a large content part is written in place,
// not copied.
func (w *agentWriter) writeMessage(parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.whole || n <= 64<<10 {
		buf := make([]byte, 0, n)
		for _, p := range parts {
			buf = append(buf, p...)
		}
		_, err := w.note(w.w.Write(buf))
		return err
	}
	for _, p := range parts {
		if _, err := w.note(w.w.Write(p)); err != nil {
			return err
		}
	}
	return nil
}

// tryWriter is a writer to the agent that can begin a message without
// waiting (transport.Process's stdin, and the tracing and recording
// writers over it): TryWrite writes what fits now of the concatenation of
// parts, in one system call, and WriteRest writes the rest of that message,
// waiting as Write does, before any other message.
type tryWriter interface {
	CanTryWrite() bool
	TryWrite(parts ...[]byte) (int, error)
	WriteRest(p []byte) (int, error)
}

// canSendNow reports whether sendNow can work on w.
func (w *agentWriter) canSendNow() bool { return canTryWrite(w.w) }

// sendNow writes the concatenation of parts as one message without
// waiting, and reports whether it did: false (nothing written) when
// another message is being written or w cannot write without waiting
// (canSendNow false).
// What the pipe does not take at once is written by a goroutine of its own,
// which holds the lock until the message is whole (the agent reads its
// stdin slowly, or not at the moment: the caller must not wait for that).
func (w *agentWriter) sendNow(parts ...[]byte) bool {
	tw, ok := w.w.(tryWriter)
	if !ok || !tw.CanTryWrite() || !w.mu.TryLock() {
		return false
	}
	k, err := w.note(tw.TryWrite(parts...))
	rest := partsFrom(parts, k)
	if err != nil || len(rest) == 0 {
		w.mu.Unlock()
		return true // written, or the agent's stdin is gone (as writeMessage)
	}
	// The parts are the caller's and never change (a cached encoding, or
	// made for this message): the rest is written from them, not copied.
	go func() {
		defer w.mu.Unlock()
		for _, p := range rest {
			if _, err := w.note(tw.WriteRest(p)); err != nil {
				return
			}
		}
	}()
	return true
}

// partsFrom is parts from byte k of their concatenation on: views of
// them, nothing copied (nil if none is left).
func partsFrom(parts [][]byte, k int) [][]byte {
	for i, p := range parts {
		if k < len(p) {
			return append([][]byte{p[k:]}, parts[i+1:]...)
		}
		k -= len(p)
	}
	return nil
}

// concatFrom is the concatenation of parts from byte k on (nil if none).
func concatFrom(parts [][]byte, k int) []byte {
	var rest []byte
	for _, p := range partsFrom(parts, k) {
		rest = append(rest, p...)
	}
	return rest
}

var cancelMethod = []byte(`$/cancel_request"`)

// hasQuoted reports whether line holds a '"' followed by inner. inner
// starts with a byte rarer than '"' in JSON: bytes.Index skips to it with
// one vector search, where a needle starting with '"' stops at every
// string (a read request: 10 ns against 150).
func hasQuoted(line, inner []byte) bool {
	for from := 0; ; {
		i := bytes.Index(line[from:], inner)
		if i < 0 {
			return false
		}
		if i += from; i > 0 && line[i-1] == '"' {
			return true
		}
		from = i + 1
	}
}

// intercept serves line if it is an fs/* request the fast path takes, and
// reports whether it did (the SDK must then not see it).
func (f *fastFS) intercept(line []byte) bool {
	if len(line) < 4096 && hasQuoted(line, cancelMethod) {
		f.cancelFrom(line) // and the SDK sees it too, for its own requests
		return false
	}
	// The method comes first in every agent's requests we know; a line
	// without "fs/ near its start is left to the SDK without a full scan.
	if !hasQuoted(line[:min(len(line), 256)], []byte(`fs/`)) {
		return false
	}
	req, ok := f.reads.parse(line)
	if !ok {
		if req, ok = parseFSRequest(line, f.a.h.bufs.like); !ok {
			return false
		}
		f.reads.rememberRead(line, req)
	}
	if f.serveNow(req) {
		return true
	}
	req.id = bytes.Clone(req.id) // a worker answers after line is reused
	ctx, cancel := context.WithCancel(f.lifetime())
	job := fastJob{ctx: ctx, cancel: cancel, key: string(req.id), req: req}
	f.mu.Lock()
	if f.inflight == nil {
		f.inflight = map[string]context.CancelFunc{}
	}
	f.inflight[job.key] = cancel
	f.mu.Unlock()
	select {
	case f.work <- job: // a waiting worker
	default:
		go f.worker(job)
	}
	return true
}

// cancelFrom cancels the fast request a $/cancel_request names.
func (f *fastFS) cancelFrom(line []byte) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "$/cancel_request" {
		return
	}
	var buf bytes.Buffer
	if json.Compact(&buf, m.Params.RequestID) != nil {
		return
	}
	f.mu.Lock()
	cancel := f.inflight[buf.String()]
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// serve answers one fast request, through the same routes as Agent.handle
// (dispatch.go).
func (f *fastFS) serve(ctx context.Context, req fsRequest) {
	a := f.a
	a.gate.Barrier(ctx)
	var msg [][]byte
	id := acp.SessionId(req.sessionID)
	if req.method == acp.ClientMethodFsReadTextFile {
		res, rerr := readFile.call(ctx, a, acp.ReadTextFileRequest{SessionId: id, Path: req.path, Line: req.line, Limit: req.limit})
		if rerr == nil {
			msg = readResponse(req.id, a.h.bufs.encode(res.Content))
		} else {
			msg = response(req.id, nil, rerr)
		}
	} else {
		// The answer goes as soon as the write has succeeded, while the
		// bridge reports the change (fsbridge.WithAnswer; the turn's end
		// waits for the report, Session.prompt).
		answered := false
		wctx := fsbridge.WithAnswer(ctx, func() {
			answered = true
			msg := response(req.id, [][]byte{[]byte(`{}`)}, nil)
			if !a.out.sendNow(msg...) {
				go func() {
					if err := a.out.writeMessage(msg...); err != nil {
						a.log.Debug("fs response not written", "method", req.method, "err", err)
					}
				}()
			}
		})
		_, rerr := writeFile.call(wctx, a, acp.WriteTextFileRequest{SessionId: id, Path: req.path, Content: req.content})
		if answered {
			if rerr != nil { // cannot be: nothing fails after the answer
				a.log.Warn("fs write failed after its answer", "path", req.path, "err", rerr)
			}
			return
		}
		msg = response(req.id, [][]byte{[]byte(`{}`)}, rerr)
	}
	if err := a.out.writeMessage(msg...); err != nil {
		a.log.Debug("fs response not written", "method", req.method, "err", err)
	}
}

// serveNow serves req on the calling goroutine, the gate's reader, when it
// is a read that can be answered without waiting, and reports whether it
// did; otherwise nothing was done and a worker serves it (serve).
//
// The reader must never wait on Neovim: a Neovim request waiting on the
// agent (a prompt being sent, a permission answer) would wait on this
// goroutine in turn. Nothing here does:
//   - the gate's barrier is only checked (Settled), not waited on: with a
//     session/update still being handled the worker path takes the read;
//   - the session and its bridge are looked up, never created or waited for
//     (a.mu and s.fsb.mu are held only around map and field accesses);
//   - the bridge reads under fsbridge.WithNoWait (see there): the path must
//     be located at once inside the workspace (no question), and a loaded
//     buffer's text comes only from the host's own copy, when the change
//     signal says Neovim changed nothing since its key was confirmed
//     (bufCache.held), and a file no buffer holds from the text cache or,
//     when small, from bytes in memory now (a read that fails rather than
//     wait for the disk); any other case is fsbridge.ErrWouldWait;
//   - the response is written only when the pipe takes it now
//     (agentWriter.sendNow: TryLock, a non-blocking write, the rest by a
//     goroutine), so an agent that is not reading its stdin cannot stall
//     the reader either.
func (f *fastFS) serveNow(req fsRequest) bool {
	a := f.a
	if req.method != acp.ClientMethodFsReadTextFile || !f.nowOK() || !a.gate.Settled() {
		return false
	}
	id := acp.SessionId(req.sessionID)
	s := a.session(id)
	if s == nil {
		return false
	}
	b := s.heldBridge()
	if b == nil {
		return false
	}
	ctx := f.nowCtx
	if a.h.readQ.drain(a.h) {
		ctx = f.drainedCtx // the queues drained now, after the request came
	}
	res, err := b.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: id, Path: req.path, Line: req.line, Limit: req.limit})
	if errors.Is(err, fsbridge.ErrWouldWait) {
		return false
	}
	s.fsReads.Store(true)
	f.nowN.Add(1)
	var msg [][]byte
	if rerr := bridgeError(err); rerr != nil {
		msg = response(req.id, nil, rerr)
	} else {
		msg = readResponse(req.id, a.h.bufs.encode(res.Content))
	}
	if !a.out.sendNow(msg...) {
		// Another message is being written: this one follows it.
		go func() {
			if err := a.out.writeMessage(msg...); err != nil {
				a.log.Debug("fs response not written", "method", req.method, "err", err)
			}
		}()
		return true
	}
	f.sentN.Add(1)
	return true
}

// nowOK reports whether reads may be served on the reader (serveNow): the
// agent's stdin can be written without waiting. nowCtx is then the
// context of those reads.
func (f *fastFS) nowOK() bool {
	f.nowOnce.Do(func() {
		if f.a.out.canSendNow() {
			f.nowCtx = fsbridge.WithNoWait(context.WithValue(f.lifetime(), fsOpKey{}, "read"))
			f.drainedCtx = fsbridge.WithDrained(f.nowCtx)
		}
	})
	return f.nowCtx != nil
}

// response is the parts of the response to request id: result's parts,
// or rerr.
func response(id []byte, result [][]byte, rerr *acp.RequestError) [][]byte {
	head := make([]byte, 0, 64+len(id))
	head = append(head, `{"jsonrpc":"2.0","id":`...)
	head = append(head, id...)
	if rerr != nil {
		b, err := json.Marshal(rerr)
		if err != nil {
			// Data that does not encode.
			b, _ = json.Marshal(acp.NewInternalError(map[string]any{"error": rerr.Message}))
		}
		head = append(head, `,"error":`...)
		result = [][]byte{b}
	} else {
		head = append(head, `,"result":`...)
	}
	msg := make([][]byte, 0, len(result)+2)
	msg = append(append(append(msg, head), result...), []byte("}\n"))
	return msg
}

// readMsg is a read's response in one allocation: its head (up to the
// content's opening quote) and its parts (head, the content's encoding,
// readEnd).
type readMsg struct {
	parts [3][]byte
	head  [96]byte
}

var readEnd = []byte("\"}}\n")

// readResponse is response(id, the result {"content": enc}) in one
// allocation where response makes four: a small read's answer is made
// on the agent's reader, between its request and its response.
func readResponse(id, enc []byte) [][]byte {
	m := new(readMsg)
	head := append(m.head[:0], `{"jsonrpc":"2.0","id":`...)
	head = append(head, id...) // an id over 52 bytes grows it: still right
	head = append(head, `,"result":{"content":"`...)
	m.parts = [3][]byte{head, enc, readEnd}
	return m.parts[:]
}

// encode returns s as the inside of a JSON string: from the cached
// encoding of a buffer's or a file's text when s is (a line slice of)
// one, else encoded now.
func (c *bufCache) encode(s string) []byte {
	if len(s) == 0 {
		return nil
	}
	c.mu.Lock()
	var hit *bufEntry
	for _, e := range c.entries {
		if jsontext.Within(e.buf.Text(), s) {
			hit = e
			break
		}
	}
	c.mu.Unlock()
	if hit != nil {
		t := hit.encoded()
		if len(s) >= likeFrom {
			c.remember(t)
		}
		if enc, ok := t.Slice(s); ok {
			return enc
		}
	} else if enc, ok := c.texts.Encoded(s); ok {
		return enc
	}
	if !utf8.ValidString(s) {
		// Not from fs/read_text_file, which only returns UTF-8; encoding/json
		// replaces invalid bytes.
		b, _ := json.Marshal(s)
		return b[1 : len(b)-1]
	}
	return jsontext.AppendEscaped(make([]byte, 0, len(s)+len(s)/8+16), s)
}

// encoded is the entry's text as JSON, built on first use.
func (e *bufEntry) encoded() *jsontext.Text {
	e.encOnce.Do(func() { e.enc = jsontext.NewText(e.buf.Text()) })
	return e.enc
}

// likeTexts bounds the encodings kept for the writes that follow a read
// (bufCache.like): the last few large files read.
const likeTexts = 4

// likeFrom is the size of a read from which its file's encoding is kept
// for the writes that follow: a smaller write's content is decoded at once.
const likeFrom = 64 << 10

// remember keeps t, the encoding of a buffer's text just built for a read,
// for the writes of that file that follow (like).
func (c *bufCache) remember(t *jsontext.Text) {
	c.likeMu.Lock()
	defer c.likeMu.Unlock()
	if len(c.likes) > 0 && c.likes[0] == t {
		return // read again
	}
	kept := append(make([]*jsontext.Text, 0, likeTexts), t)
	for _, x := range c.likes {
		if x != t && len(kept) < likeTexts {
			kept = append(kept, x)
		}
	}
	c.likes = kept
}

// like is the kept encoding (see remember) that data, the inside of a
// write's content from its start, begins like: the agent writing back a
// file it read, changed (nil: none).
func (c *bufCache) like(data []byte) *jsontext.Text {
	c.likeMu.Lock()
	defer c.likeMu.Unlock()
	for _, t := range c.likes {
		if jsontext.StartsLike(data, t) {
			return t
		}
	}
	return nil
}
