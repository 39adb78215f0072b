package textcache

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestGetPutEvict(t *testing.T) {
	k1 := Key{Ino: 1, Size: 4, MTime: 10, CTime: 10}
	tests := []struct {
		name string
		run  func(c *Cache) (string, bool)
		want string
		ok   bool
	}{
		{"same version", func(c *Cache) (string, bool) {
			c.Put("/a", k1, "aaa\n")
			return c.Get("/a", k1)
		}, "aaa\n", true},
		{"other ctime", func(c *Cache) (string, bool) {
			c.Put("/a", k1, "aaa\n")
			k := k1
			k.CTime++
			return c.Get("/a", k)
		}, "", false},
		{"other path", func(c *Cache) (string, bool) {
			c.Put("/a", k1, "aaa\n")
			return c.Get("/b", k1)
		}, "", false},
		{"oldest evicted past the bound", func(c *Cache) (string, bool) {
			for _, p := range []string{"/a", "/b", "/c", "/d", "/e"} { // 5 x 120 bytes > 500
				c.Put(p, k1, strings.Repeat("x", 60))
			}
			return c.Get("/a", k1)
		}, "", false},
		{"recently used kept", func(c *Cache) (string, bool) {
			for _, p := range []string{"/a", "/b", "/c", "/d"} {
				c.Put(p, k1, strings.Repeat("x", 60))
			}
			c.Get("/a", k1)
			c.Put("/e", k1, strings.Repeat("x", 60))
			if _, ok := c.Get("/b", k1); ok {
				return "/b kept", true
			}
			return c.Get("/a", k1)
		}, strings.Repeat("x", 60), true},
		{"at most maxEntries files", func(*Cache) (string, bool) {
			c := New(1<<20, nil) // room for many more bytes
			for i := 0; i <= maxEntries; i++ {
				c.Put(fmt.Sprint("/f", i), k1, "x")
			}
			return c.Get("/f0", k1)
		}, "", false},
		{"young: never served by its version", func(c *Cache) (string, bool) {
			c.PutYoung("/a", k1, "aaa\n")
			return c.Get("/a", k1)
		}, "", false},
		{"young: served for the same bytes", func(c *Cache) (string, bool) {
			c.PutYoung("/a", k1, "aaa\n")
			return c.Match("/a", []byte("aaa\n"))
		}, "aaa\n", true},
		{"young: not for other bytes", func(c *Cache) (string, bool) {
			c.PutYoung("/a", k1, "aaa\n")
			return c.Match("/a", []byte("aab\n"))
		}, "", false},
		{"young: replaced once settled", func(c *Cache) (string, bool) {
			c.PutYoung("/a", k1, "aaa\n")
			c.Put("/a", k1, "aaa\n")
			return c.Get("/a", k1)
		}, "aaa\n", true},
		{"settled: matched by bytes too", func(c *Cache) (string, bool) {
			c.Put("/a", k1, "aaa\n")
			return c.Match("/a", []byte("aaa\n"))
		}, "aaa\n", true},
		{"young at a generation: served for it", func(c *Cache) (string, bool) {
			c.PutYoungAt("/a", k1, "aaa\n", 7)
			return c.GetYoung("/a", k1, 7)
		}, "aaa\n", true},
		{"young at a generation: not for another", func(c *Cache) (string, bool) {
			c.PutYoungAt("/a", k1, "aaa\n", 7)
			return c.GetYoung("/a", k1, 8)
		}, "", false},
		{"young at a generation: not for another version", func(c *Cache) (string, bool) {
			c.PutYoungAt("/a", k1, "aaa\n", 7)
			k := k1
			k.MTime++
			return c.GetYoung("/a", k, 7)
		}, "", false},
		{"young at a generation: not by its version", func(c *Cache) (string, bool) {
			c.PutYoungAt("/a", k1, "aaa\n", 7)
			return c.Get("/a", k1)
		}, "", false},
		{"young at no generation: never", func(c *Cache) (string, bool) {
			c.PutYoung("/a", k1, "aaa\n")
			return c.GetYoung("/a", k1, 0)
		}, "", false},
		{"young: takes the generation it was read again in", func(c *Cache) (string, bool) {
			c.PutYoung("/a", k1, "aaa\n")
			c.PutYoungAt("/a", k1, "aaa\n", 9)
			return c.GetYoung("/a", k1, 9)
		}, "aaa\n", true},
		{"young: other bytes read in a generation replace it", func(c *Cache) (string, bool) {
			c.PutYoungAt("/a", k1, "aaa\n", 9)
			c.PutYoungAt("/a", k1, "bbb\n", 10)
			if _, ok := c.GetYoung("/a", k1, 9); ok {
				return "the old generation's", true
			}
			return c.GetYoung("/a", k1, 10)
		}, "bbb\n", true},
		{"settled: not served as young", func(c *Cache) (string, bool) {
			c.Put("/a", k1, "aaa\n")
			return c.GetYoung("/a", k1, 1)
		}, "", false},
		{"too large for the cache", func(c *Cache) (string, bool) {
			c.Put("/a", k1, strings.Repeat("a", 200))
			return c.Get("/a", k1)
		}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.run(New(500, nil))
			if got != tt.want || ok != tt.ok {
				t.Fatalf("got %q %v, want %q %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestEncoded(t *testing.T) {
	text := "line \"1\"\n\tline 2 é\nline 3\u2028\n"
	c := New(1<<20, nil)
	c.Put("/a", Key{Ino: 1}, text)
	young := "young \"text\"\n"
	c.PutYoung("/y", Key{Ino: 2}, young)
	second := strings.Index(text, "\t")
	tests := []struct {
		name string
		s    string
		ok   bool
	}{
		{"whole text", text, true},
		{"a slice from the start", text[:second], true},
		{"a slice from the middle", text[second:], true},
		{"an equal copy is not the cached text", strings.Clone(text), false},
		{"a young text (read again unchanged: Match)", young, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc, ok := c.Encoded(tt.s)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			want, _ := json.Marshal(tt.s)
			if string(enc) != string(want[1:len(want)-1]) {
				t.Fatalf("encoded %s, want %s", enc, want)
			}
		})
	}
}
