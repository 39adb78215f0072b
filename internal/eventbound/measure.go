package eventbound

// Measure is what Bound limits in v: how deeply maps and lists nest (a
// scalar is 0), their entries and items, and the bytes of its strings
// (keys included).
func Measure(v any) (depth, items, bytes int) {
	switch t := v.(type) {
	case string:
		return 0, 0, len(t)
	case map[string]any:
		for k, x := range t {
			d, i, b := Measure(x)
			depth = max(depth, d)
			items += i + 1
			bytes += b + len(k)
		}
		return depth + 1, items, bytes
	case []any:
		for _, x := range t {
			d, i, b := Measure(x)
			depth = max(depth, d)
			items += i + 1
			bytes += b
		}
		return depth + 1, items, bytes
	}
	return 0, 0, 0
}
