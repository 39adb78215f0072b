//go:build unix && !linux

package fsbridge

import "errors"

func exchange(a, b string) error { return errors.New("renameat2 is Linux only") }
