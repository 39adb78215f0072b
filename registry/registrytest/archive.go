// Package registrytest builds agent archives for tests of registry installs.
package registrytest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io/fs"
	"testing"
	"time"
)

// Script is a tiny agent executable: it prints "hello from agent ARGS".
const Script = "#!/bin/sh\necho \"hello from agent $*\"\n"

// Entry is one member of a test archive.
type Entry struct {
	Name string
	Body string
	Mode int64
	Type byte   // tar type flag (tar.TypeDir, tar.TypeSymlink, tar.TypeLink); 0 = regular file
	Link string // symlink or hard link target
}

// Agent is a realistic archive: the executable "test-agent", a data file
// that is not executable, a directory and a symlink inside.
func Agent() []Entry {
	return []Entry{
		{Name: "share/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "share/notes.txt", Body: "data\n", Mode: 0o644},
		{Name: "test-agent", Body: Script, Mode: 0o755},
		{Name: "share/agent-link", Type: tar.TypeSymlink, Link: "../test-agent"},
	}
}

// TarGz returns entries as a .tar.gz.
func TarGz(t testing.TB, entries []Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.Type
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: e.Name, Mode: e.Mode, Typeflag: typ, Linkname: e.Link, ModTime: time.Unix(1700000000, 0)}
		if typ == tar.TypeReg {
			hdr.Size = int64(len(e.Body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.Body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Zip returns entries as a .zip, symlinks and modes as Unix zip tools
// store them.
func Zip(t testing.TB, entries []Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.Name, Method: zip.Deflate}
		body := e.Body
		switch e.Type {
		case tar.TypeSymlink:
			h.SetMode(fs.ModeSymlink | 0o777)
			body = e.Link
		case tar.TypeDir:
			h.SetMode(fs.ModeDir | 0o755)
		default:
			h.SetMode(fs.FileMode(e.Mode))
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
