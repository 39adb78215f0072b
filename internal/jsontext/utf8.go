package jsontext

import "unicode/utf8"

// InvalidText returns the offset in data (JSON text) of the first string
// byte that is not valid UTF-8, or of a \u escape of a surrogate that is
// not half of a pair, or -1 when there is none: where encoding/json would
// put U+FFFD in place of what was sent. Text outside strings is not
// checked (it is ASCII in valid JSON); malformed JSON is left to the
// decoder, which reports it.
func InvalidText(data []byte) int {
	in := false
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case !in:
			if c == '"' {
				in = true
			}
			i++
		case c == '"':
			in = false
			i++
		case c == '\\':
			if i+1 < len(data) && data[i+1] == 'u' {
				r, ok := hex4(data, i+2)
				if !ok {
					return -1 // malformed: the decoder says so
				}
				switch {
				case r >= 0xDC00 && r < 0xE000:
					return i // a low surrogate alone
				case r >= 0xD800 && r < 0xDC00:
					if i+12 > len(data) || data[i+6] != '\\' || data[i+7] != 'u' {
						return i
					}
					if r2, ok := hex4(data, i+8); !ok || r2 < 0xDC00 || r2 >= 0xE000 {
						return i
					}
					i += 12
					continue
				}
				i += 6
				continue
			}
			i += 2
		case c >= 0x80:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return i
			}
			i += size
		default:
			i++
		}
	}
	return -1
}
