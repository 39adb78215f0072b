package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/nvim-acp/nvim-acp/fsbridge"
)

// TestBufferKeyPairedWithLua packs and unpacks a buffer's cache key over
// the one table of cases tests/bufkey_test.lua runs Lua's buffers.key on
// (testdata/rules/bufkey.json): packKey of what describe() reports is the
// key Lua computes, and unpackKey (applied's) reads that state back.
func TestBufferKeyPairedWithLua(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "rules", "bufkey.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Cases []struct {
			Want struct {
				FF       string `json:"ff"`
				EOL      bool   `json:"eol"`
				Modified bool   `json:"modified"`
				Bits     int    `json:"bits"`
			} `json:"want"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	if len(spec.Cases) < 8 {
		t.Fatalf("only %d cases read", len(spec.Cases))
	}
	for i, c := range spec.Cases {
		for _, tick := range []int{0, 1, 12345} {
			w := c.Want
			b := fsbridge.Buffer{Tick: tick, FileFormat: w.FF, EOL: w.EOL, Modified: w.Modified}
			key := packKey(&b)
			if want := tick*16 + w.Bits; key != want {
				t.Errorf("case %d, tick %d: packKey(%+v) = %d, want %d", i+1, tick, b, key, want)
			}
			if got := unpackKey(key); !reflect.DeepEqual(got, b) {
				t.Errorf("case %d: key %d reads back as %+v, want %+v", i+1, key, got, b)
			}
		}
	}
}
