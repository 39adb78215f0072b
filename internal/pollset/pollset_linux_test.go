package pollset

import (
	"os"
	"testing"
)

func TestReady(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r1, w1, _ := os.Pipe()
	r2, w2, _ := os.Pipe()
	defer func() {
		for _, f := range []*os.File{r1, w1, r2, w2} {
			f.Close()
		}
	}()
	if err := s.Add(int(r1.Fd()), 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(int(r2.Fd()), 5); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(int(r2.Fd()), MaxTags); err == nil {
		t.Fatal("a tag out of range was taken")
	}
	ready := func() uint32 {
		t.Helper()
		m, err := s.Ready()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := ready(); m != 0 {
		t.Fatalf("nothing written: ready %b", m)
	}
	w2.Write([]byte("x"))
	if m := ready(); m != 1<<5 {
		t.Fatalf("one written: ready %b, want %b", m, 1<<5)
	}
	w1.Write([]byte("x"))
	if m := ready(); m != 1|1<<5 {
		t.Fatalf("both written: ready %b", m)
	}
	var b [8]byte
	r2.Read(b[:])
	if m := ready(); m != 1 {
		t.Fatalf("one read: ready %b, want 1", m)
	}
	r1.Read(b[:])
	w2.Close() // hung up: a read would not wait either
	if m := ready(); m != 1<<5 {
		t.Fatalf("writer closed: ready %b, want %b", m, 1<<5)
	}
}
