package proxy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// richRequest exercises every request field.
func richRequest() *Request {
	r := baseRequest(false)
	r.Model = "m-1"
	r.Temperature, r.TopP, r.TopK = ptr(0.5), ptr(0.9), ptr(40)
	r.Stop = []string{"END"}
	r.ToolChoice = &ToolChoice{Mode: "tool", Name: "Bash"}
	r.Messages[0].Parts = append(r.Messages[0].Parts, Part{Kind: PartImage, MIME: "image/png", Data: "iVBORw0KGgo="})
	r.Messages[2].Parts[0].IsError = true
	r.ThinkingBudget = 8192
	return r
}

// support says which protocols carry a request field.
var support = map[string]map[string]bool{
	// Anthropic drops top_k when thinking is on, as its API requires.
	"topK": {Gemini: true},
	// Chat sends reasoning_effort only to reasoning models (gpt-5, o*):
	// others answer 400; m-1 is none.
	"thinking": {Anthropic: true, OpenAIResponses: true, Gemini: true},
	"stop":     {Anthropic: true, OpenAIChat: true, Gemini: true},
	"error":    {Anthropic: true, Gemini: true}, // OpenAI: an "Error: " prefix
}

// TestRequestPairs translates a client request of every protocol to every
// other and checks what the upstream receives.
func TestRequestPairs(t *testing.T) {
	prov := &Provider{BaseURL: "http://up", MaxOutputTokens: 1000}
	for _, in := range protocols {
		for _, up := range protocols {
			t.Run(in+"→"+up, func(t *testing.T) {
				_, _, client, err := adapterFor(in).encodeRequest(richRequest(), prov)
				if err != nil {
					t.Fatal(err)
				}
				req, err := adapterFor(in).decodeRequest(client)
				if err != nil {
					t.Fatal(err)
				}
				if in == Gemini {
					req.Model = "m-1"
				}
				path, _, body, err := adapterFor(up).encodeRequest(req, prov)
				if err != nil {
					t.Fatal(err)
				}
				got, err := adapterFor(up).decodeRequest(body)
				if err != nil {
					t.Fatalf("%s\n%s", err, body)
				}
				both := func(f string) bool {
					return (support[f] == nil || support[f][in]) && (support[f] == nil || support[f][up])
				}
				if got.System != "be brief" {
					t.Errorf("system %q", got.System)
				}
				if got.Temperature != nil && up != Anthropic {
					// Anthropic drops temperature when thinking is on.
					if *got.Temperature != 0.5 {
						t.Errorf("temperature %v", *got.Temperature)
					}
				}
				if (got.TopK != nil) != both("topK") {
					t.Errorf("top_k: %v", got.TopK)
				}
				if both("stop") && !cmp.Equal(got.Stop, []string{"END"}) {
					t.Errorf("stop %v", got.Stop)
				}
				if diff := cmp.Diff(&ToolChoice{Mode: "tool", Name: "Bash"}, got.ToolChoice); diff != "" {
					t.Errorf("tool_choice (-want +got):\n%s", diff)
				}
				if both("thinking") && got.ThinkingBudget == 0 && got.Effort == "" {
					t.Errorf("thinking lost: %s", body)
				}
				var img *Part
				var res *Part
				for _, m := range got.Messages {
					for i, p := range m.Parts {
						switch p.Kind {
						case PartImage:
							img = &m.Parts[i]
						case PartToolResult:
							res = &m.Parts[i]
						}
					}
				}
				if img == nil || img.MIME != "image/png" || img.Data != "iVBORw0KGgo=" {
					t.Errorf("image: %+v\n%s", img, body)
				}
				if res == nil {
					t.Fatalf("no tool result: %s", body)
				}
				switch {
				case both("error") && (!res.IsError || res.Text != "a.txt"):
					t.Errorf("is_error lost: %+v", res)
				case !both("error") && !res.IsError && res.Text != "Error: a.txt":
					t.Errorf("error prefix: %+v", res)
				}
				if up == Gemini && !strings.Contains(path, "/models/m-1:generateContent") {
					t.Errorf("gemini path %s", path)
				}
				var raw map[string]any
				json.Unmarshal(body, &raw)
				if up == Anthropic && raw["max_tokens"] == nil {
					t.Errorf("anthropic upstream without max_tokens")
				}
			})
		}
	}
}

// TestReasoningModel: GPT-5 and o-series take max_completion_tokens and
// no temperature.
func TestReasoningModel(t *testing.T) {
	r := baseRequest(false)
	r.Model, r.Temperature = "gpt-5", ptr(0.2)
	_, _, b, _ := chatAdapter{}.encodeRequest(r, &Provider{})
	s := string(b)
	if !strings.Contains(s, `"max_completion_tokens":100`) || strings.Contains(s, `"max_tokens"`) || strings.Contains(s, "temperature") {
		t.Errorf("%s", s)
	}
}

// TestAzurePath: Azure puts the deployment in the path.
func TestAzurePath(t *testing.T) {
	path, _, _, _ := chatAdapter{}.encodeRequest(baseRequest(false), &Provider{Auth: "api-key"})
	if path != "/deployments/m-1/chat/completions" {
		t.Errorf("%s", path)
	}
	path, _, _, _ = geminiAdapter{}.encodeRequest(baseRequest(true), &Provider{BaseURL: "https://x/v1/projects/p/locations/l/publishers/google"})
	if path != "/models/m-1:streamGenerateContent" {
		t.Errorf("vertex %s", path)
	}
}
