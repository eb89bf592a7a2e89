package proxy

import (
	"bytes"
	"encoding/json"
)

// A byte scanner over JSON for choosing a rule: it splits objects and
// arrays into slices of the body without decoding them, so that choosing
// a rule costs microseconds and no second decode of the body (the
// provider's Server decodes it once, for translation).

// topMembers sets out[i] to the value of the body's top-level member
// names[i] (nil when absent). It reports false, leaving out partly set,
// for anything but an object of well-formed members.
func topMembers(body []byte, names []string, out [][]byte) bool {
	ok := eachMember(body, func(key, val []byte) bool {
		for i, n := range names {
			if string(key) == n {
				out[i] = val
			}
		}
		return false
	})
	if !ok {
		clear(out)
	}
	return ok
}

// member returns the value of obj's member name, or nil.
func member(obj []byte, name string) []byte {
	var got []byte
	eachMember(obj, func(key, val []byte) bool {
		if string(key) == name {
			got = val
			return true
		}
		return false
	})
	return got
}

// eachMember calls f with each member of the object b (its name
// unescaped, its value as a slice of b) until f returns true. It reports
// whether b is an object of well-formed members (true when f stopped it).
func eachMember(b []byte, f func(key, val []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		end := skipString(b, i)
		if end < 0 {
			return false
		}
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var name string
			if json.Unmarshal(b[i:end], &name) != nil {
				return false
			}
			key = []byte(name)
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return false
		}
		if f(key, b[i:vend]) {
			return true
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return true
		default:
			return false
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

// skipString returns the index after the string starting at b[i] == '"',
// or -1. Its first bytes are read one by one (most strings of a request
// are short: a call of IndexByte costs more than reading them); then it
// jumps from quote to quote (a quote after an odd run of backslashes is
// escaped).
func skipString(b []byte, i int) int {
	j := i + 1
	for end := min(len(b), j+16); j < end; j++ {
		switch b[j] {
		case '"':
			return j + 1
		case '\\':
			j++
		}
	}
	if j > len(b) {
		return -1
	}
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
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
