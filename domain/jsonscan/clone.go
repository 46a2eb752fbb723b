package jsonscan

// Clone returns a deep copy of a value decoded from JSON into any (maps of
// string to any, slices of any, and scalars), sharing no map or slice with
// v. An empty array stays an empty array (never nil, which encodes as
// null).
func Clone(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = Clone(x)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = Clone(x)
		}
		return s
	}
	return v
}
