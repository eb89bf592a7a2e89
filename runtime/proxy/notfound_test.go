package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestUnknownPathSaysWhatIsServed: a client whose base URL is off (a
// doubled /v1, a typo) gets a 404 in its protocol's error shape naming
// the paths the proxy serves, not net/http's bare "404 page not found";
// with routes too.
func TestUnknownPathSaysWhatIsServed(t *testing.T) {
	plain := newRig(t, OpenAIChat, nil).proxy.URL
	routed := newRoutesRig(t, threeRoutes, nil).proxy.URL
	for _, base := range []string{plain, routed} {
		for path, shape := range map[string]string{
			"/v1/v1/messages":                         "anthropic",
			"/v1/v1/chat/completions":                 "openai",
			"/v1beta/v1beta/models/g:generateContent": "gemini",
		} {
			resp, err := http.Post(base+path, "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e struct {
				Type  string
				Error struct{ Message, Status string }
			}
			json.Unmarshal(b, &e)
			msg := e.Error.Message
			if resp.StatusCode != 404 || !strings.Contains(msg, "no route for POST "+path) || !strings.Contains(msg, "/v1/messages, /v1/chat/completions, /v1/responses") || !strings.Contains(msg, "base URL") {
				t.Errorf("%s: %d %s; want 404 naming the path, the routes served and the base URL", path, resp.StatusCode, b)
			}
			if got := map[bool]string{e.Type == "error": "anthropic", e.Error.Status != "": "gemini"}[true]; shape != "openai" && got != shape {
				t.Errorf("%s: body %s is not in the %s error shape", path, b, shape)
			}
		}
	}
}
