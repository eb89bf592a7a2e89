package golden

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"

	"sitter.dev/sitter/generated/registry"
	"sitter.dev/sitter/runtime/hook"
)

// FuzzNormalize feeds arbitrary bytes to every harness's generated
// Normalize, for every native event and for the payload-named fallback: it
// must return an event or an error, never panic, and whatever it returns
// must render without panicking.
//
//	go test ./gen/golden -run '^$' -fuzz FuzzNormalize -fuzztime 30s
func FuzzNormalize(f *testing.F) {
	paths, _ := filepath.Glob("testdata/normalize/*/*.txtar")
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if s := section(ar, "payload.json"); s != nil {
			f.Add(s.Data)
		}
	}
	for _, seed := range []string{"", "{}", "[]", "null", `{"session_id": 5}`, `{"toolArgs": "{\"command\":1}"}`, `{"input": {"sessionID": []}}`, `{"workspace_roots": ["/a", 1]}`, "{\"a\":"} {
		f.Add([]byte(seed))
	}
	reg := registry.Registry()
	f.Fuzz(func(t *testing.T, payload []byte) {
		for _, d := range reg.Descriptors {
			names := []string{""}
			for _, e := range d.Events {
				names = append(names, e.Name)
			}
			for _, n := range names {
				ev, err := d.Normalize(payload, n)
				if err != nil {
					continue
				}
				d.Render(ev, hook.Result{Decision: hook.Deny, Reason: "r", AdditionalContext: "c", UpdatedInput: ev.Raw})
			}
		}
	})
}
