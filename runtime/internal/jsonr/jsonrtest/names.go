// Package jsonrtest helps the tests of jsonr's fast paths.
package jsonrtest

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Names is the JSON member names of struct type t's fields, in order, as
// encoding/json names them.
func Names(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// CheckFields fails t unless fields, a fast path's list, names exactly
// the JSON members of v's type: a field added to the struct and not to
// its fast path would otherwise be skipped as an unknown key.
func CheckFields(t *testing.T, v any, fields []string) {
	t.Helper()
	typ := reflect.TypeOf(v)
	if want := Names(typ); !slices.Equal(fields, want) {
		t.Errorf("%s: fast path fields %q, struct has %q", typ, fields, want)
	}
}
