package fsbridge

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// BenchmarkReadUnloadedSmall: fs/read_text_file of a 1 KiB file five
// directories deep with no buffer: the per-request cost of resolving the
// path, checking the policy, opening and verifying the file.
func BenchmarkReadUnloadedSmall(b *testing.B) {
	br, _, root := benchBridge(b)
	dir := filepath.Join(root, "a", "b", "c", "d", "e")
	os.MkdirAll(dir, 0o755)
	p := filepath.Join(dir, "f.txt")
	data := make([]byte, 1024)
	for i := range data {
		data[i] = 'x'
		if i%64 == 63 {
			data[i] = '\n'
		}
	}
	os.WriteFile(p, data, 0o644)
	req := acp.ReadTextFileRequest{Path: p}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := br.ReadTextFile(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteUnloadedSmall: fs/write_text_file of a 1 KiB file five
// directories deep with no buffer (resolve, verified directory, temp file,
// fsync, rename).
func BenchmarkWriteUnloadedSmall(b *testing.B) {
	br, _, root := benchBridge(b)
	dir := filepath.Join(root, "a", "b", "c", "d", "e")
	os.MkdirAll(dir, 0o755)
	p := filepath.Join(dir, "f.txt")
	req := acp.WriteTextFileRequest{Path: p, Content: "x\n"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := br.WriteTextFile(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
