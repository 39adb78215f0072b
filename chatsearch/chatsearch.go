// Package chatsearch finds text in the saved chats (chatlog's transcripts,
// lua/acp/history): every project's directory under one root, each chat a
// transcript "<id>.txt" beside its index entry "<id>.meta.json". The
// chats are read newest first by a few workers at once and the hits of
// each chat are handed on as soon as that chat is read, so the first
// results come after the first chats, not after all of them.
package chatsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Hit is one line of a saved chat holding the text looked for.
type Hit struct {
	Path string `msgpack:"path"` // the transcript
	Line int    `msgpack:"line"` // 1-based
	Col  int    `msgpack:"col"`  // 0-based byte offset of the match in the line
	// Text is the line, cut to about MaxText bytes around the match.
	Text string `msgpack:"text"`
	// Who says the message the line is in: its "## " header ("You", the
	// agent's name), "" before the first header.
	Who string `msgpack:"who"`
	// HeaderLine is the 1-based line of that header (0: none): where the
	// message starts.
	HeaderLine int `msgpack:"header_line"`
}

// Chat is the hits of one saved chat, with its index entry.
type Chat struct {
	Path string         `msgpack:"path"`
	Meta map[string]any `msgpack:"meta"` // the .meta.json, nil when unreadable
	Hits []Hit          `msgpack:"hits"`
	More bool           `msgpack:"more"` // the chat holds more hits than MaxPerChat
}

// Options bound a search. Zero values take the defaults.
type Options struct {
	MaxPerChat int // hits kept per chat (default 20)
	MaxHits    int // hits in all; the search stops there (default 1000)
	MaxText    int // bytes of a hit's line (default 200)
	Workers    int // chats read at once (default GOMAXPROCS, at most 8)
	// Dirs limits the search to these project directories under the root
	// (their base names); none: every project.
	Dirs []string
}

func (o Options) withDefaults() Options {
	if o.MaxPerChat <= 0 {
		o.MaxPerChat = 20
	}
	if o.MaxHits <= 0 {
		o.MaxHits = 1000
	}
	if o.MaxText <= 0 {
		o.MaxText = 200
	}
	if o.Workers <= 0 {
		o.Workers = min(runtime.GOMAXPROCS(0), 8)
	}
	return o
}

// Summary is how a search ended.
type Summary struct {
	Chats     int  // chats read
	Hits      int  // hits handed on
	Truncated bool // stopped at MaxHits
}

// ErrEmptyQuery is returned for a query of only spaces.
var ErrEmptyQuery = errors.New("chatsearch: nothing to search for")

// Search looks for query in every saved chat under root and calls found,
// from one goroutine, with the hits of each chat holding it, chats newer
// first as far as reading them in parallel allows. The query is a literal
// text; letters match either case unless it holds an upper-case one
// (smart case). A chat that cannot be read is skipped. Search returns when
// every chat was read, MaxHits were found or ctx ended (its error then).
func Search(ctx context.Context, root, query string, opt Options, found func(Chat)) (Summary, error) {
	if strings.TrimSpace(query) == "" {
		return Summary{}, ErrEmptyQuery
	}
	opt = opt.withDefaults()
	paths, err := transcripts(root, opt.Dirs)
	if err != nil {
		return Summary{}, err
	}
	m := newMatcher(query)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	jobs := make(chan string)
	results := make(chan Chat)
	var wg sync.WaitGroup
	for range min(opt.Workers, max(len(paths), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var raw, folded []byte
			for p := range jobs {
				c, ok := scan(p, m, opt, &raw, &folded)
				c.Path = p
				if !ok {
					c.Hits = nil // read, nothing found (or unreadable): counted only
				}
				select {
				case results <- c:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for _, p := range paths {
			select {
			case jobs <- p:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()

	var sum Summary
	for c := range results {
		sum.Chats++
		if len(c.Hits) == 0 || sum.Truncated {
			continue
		}
		if left := opt.MaxHits - sum.Hits; len(c.Hits) >= left {
			c.More = c.More || len(c.Hits) > left
			c.Hits = c.Hits[:left]
			sum.Truncated = true
			cancel() // enough: the workers stop
		}
		sum.Hits += len(c.Hits)
		c.Meta = readMeta(strings.TrimSuffix(c.Path, ".txt") + ".meta.json")
		found(c)
	}
	if sum.Truncated {
		return sum, nil
	}
	return sum, ctx.Err()
}

// transcripts lists the saved chats under root, the newest first.
func transcripts(root string, dirs []string) ([]string, error) {
	if len(dirs) == 0 {
		ents, err := os.ReadDir(root)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil // nothing saved yet
			}
			return nil, fmt.Errorf("chatsearch: %w", err)
		}
		for _, e := range ents {
			if e.IsDir() {
				dirs = append(dirs, e.Name())
			}
		}
	}
	type chat struct {
		path string
		mod  int64
	}
	var all []chat
	for _, d := range dirs {
		if d == "" || strings.ContainsRune(d, '/') || d == "." || d == ".." {
			continue
		}
		dir := filepath.Join(root, d)
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // a project gone since: nothing of it
		}
		for _, e := range ents {
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".txt") {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			all = append(all, chat{filepath.Join(dir, e.Name()), info.ModTime().UnixNano()})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].mod != all[j].mod {
			return all[i].mod > all[j].mod
		}
		return all[i].path > all[j].path
	})
	out := make([]string, len(all))
	for i, c := range all {
		out[i] = c.path
	}
	return out, nil
}

// readMeta is the chat's index entry, nil when it cannot be read.
func readMeta(path string) map[string]any {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var meta map[string]any
	if json.Unmarshal(data, &meta) != nil {
		return nil
	}
	return meta
}

// matcher finds the query in a text: folded to lower case (ASCII letters:
// the byte offsets stay those of the text) unless the query has an upper
// case letter.
type matcher struct {
	needle []byte
	fold   bool
}

func newMatcher(query string) *matcher {
	fold := true
	for _, r := range query {
		if unicode.IsUpper(r) {
			fold = false
			break
		}
	}
	n := []byte(query)
	if fold {
		n = lowerASCII(nil, n)
	}
	return &matcher{needle: n, fold: fold}
}

// lowerASCII appends src with its ASCII letters in lower case to dst.
func lowerASCII(dst, src []byte) []byte {
	dst = append(dst[:0], src...)
	for i, c := range dst {
		if 'A' <= c && c <= 'Z' {
			dst[i] = c + 'a' - 'A'
		}
	}
	return dst
}

// scan reads the transcript at path and finds the query's lines in it;
// raw and folded are the worker's buffers for the text and its folded
// copy. ok is false when it holds none or cannot be read.
func scan(path string, m *matcher, opt Options, raw, folded *[]byte) (Chat, bool) {
	data, err := readInto(path, *raw)
	*raw = data
	if err != nil {
		return Chat{}, false
	}
	hay := data
	if m.fold {
		*folded = lowerASCII(*folded, data)
		hay = *folded
	}
	var c Chat
	line, counted := 1, 0 // line number at offset counted
	for off := 0; off <= len(hay); {
		i := bytes.Index(hay[off:], m.needle)
		if i < 0 {
			break
		}
		at := off + i
		start := bytes.LastIndexByte(data[:at], '\n') + 1
		end := bytes.IndexByte(data[at:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += at
		}
		line += bytes.Count(data[counted:start], []byte{'\n'})
		counted = start
		if len(c.Hits) == opt.MaxPerChat {
			c.More = true
			break
		}
		who, hl := header(data, start, line)
		text, col := excerpt(data[start:end], at-start, len(m.needle), opt.MaxText)
		c.Hits = append(c.Hits, Hit{Line: line, Col: col, Text: text, Who: who, HeaderLine: hl})
		off = end + 1 // one hit per line
	}
	return c, len(c.Hits) > 0
}

// readInto reads the file at path into buf (grown as needed).
func readInto(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf[:0], err
	}
	defer f.Close()
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// header is the "## " line above offset start (the start of line number
// line, 1-based) with its line number, found scanning back.
func header(data []byte, start, line int) (string, int) {
	for s := start; ; {
		if bytes.HasPrefix(data[s:], []byte("## ")) {
			e := bytes.IndexByte(data[s:], '\n')
			if e < 0 {
				e = len(data) - s
			}
			return strings.TrimSpace(string(data[s+3 : s+e])), line
		}
		if s == 0 {
			return "", 0
		}
		s = bytes.LastIndexByte(data[:s-1], '\n') + 1
		line--
	}
}

// excerpt is line cut to about limit bytes around the match at col (n
// bytes), on rune boundaries, marked "…" where cut, with the match's
// column in it.
func excerpt(line []byte, col, n, limit int) (string, int) {
	if len(line) <= limit {
		return strings.ToValidUTF8(string(line), "\uFFFD"), col
	}
	from := max(0, col-(limit-n)/3)
	to := min(len(line), from+limit)
	for from > 0 && !utf8.RuneStart(line[from]) {
		from--
	}
	for to < len(line) && !utf8.RuneStart(line[to]) {
		to++
	}
	var b strings.Builder
	if from > 0 {
		b.WriteString("…")
	}
	col = col - from + b.Len()
	b.WriteString(strings.ToValidUTF8(string(line[from:to]), "\uFFFD"))
	if to < len(line) {
		b.WriteString("…")
	}
	return b.String(), col
}
