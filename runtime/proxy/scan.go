package proxy

import "encoding/json"

// topMembers splits a JSON object into its members without decoding
// them: the values are slices of body. It returns nil for anything but
// an object of well-formed members (the caller then finds no values).
// A byte loop: choosing a rule must cost microseconds.
func topMembers(body []byte) map[string]json.RawMessage {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil
	}
	out := make(map[string]json.RawMessage, 8)
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return out
	}
	for i < len(body) {
		if body[i] != '"' {
			return nil
		}
		end := skipString(body, i)
		if end < 0 {
			return nil
		}
		key := body[i+1 : end-1]
		var name string
		if bytesHasByte(key, '\\') {
			if json.Unmarshal(body[i:end], &name) != nil {
				return nil
			}
		} else {
			name = string(key)
		}
		i = skipSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return nil
		}
		i = skipSpace(body, i+1)
		vend := skipValue(body, i)
		if vend < 0 {
			return nil
		}
		out[name] = json.RawMessage(body[i:vend])
		i = skipSpace(body, vend)
		if i >= len(body) {
			return nil
		}
		switch body[i] {
		case ',':
			i = skipSpace(body, i+1)
		case '}':
			return out
		default:
			return nil
		}
	}
	return nil
}

func bytesHasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"', or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
// Nested values are skipped by counting brackets outside strings.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := skipString(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}
