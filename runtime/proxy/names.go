package proxy

import (
	"crypto/sha256"
	"encoding/hex"
)

// shortenTools makes tool names fit the upstream's limit (OpenAI and
// Gemini: 64; MCP names are often longer), as LiteLLM does: the first
// characters, "_" and 8 hex digits of a hash. It returns the map back to
// the client's names, nil when nothing changed.
func shortenTools(r *Request, limit int) map[string]string {
	if limit <= 0 {
		return nil
	}
	back := map[string]string{}
	short := func(n string) string {
		if len(n) <= limit {
			return n
		}
		h := sha256.Sum256([]byte(n))
		s := n[:limit-9] + "_" + hex.EncodeToString(h[:4])
		back[s] = n
		return s
	}
	for i := range r.Tools {
		r.Tools[i].Name = short(r.Tools[i].Name)
	}
	for i := range r.Messages {
		for j := range r.Messages[i].Parts {
			p := &r.Messages[i].Parts[j]
			if p.ToolName != "" {
				p.ToolName = short(p.ToolName)
			}
		}
	}
	if r.ToolChoice != nil && r.ToolChoice.Name != "" {
		r.ToolChoice.Name = short(r.ToolChoice.Name)
	}
	if len(back) == 0 {
		return nil
	}
	return back
}

// toolLimit is the longest tool name the provider takes.
func (p *Provider) toolLimit() int {
	if p.MaxToolName > 0 {
		return p.MaxToolName
	}
	if p.Protocol == Anthropic {
		return 0
	}
	return 64
}

// estimateTokens is a local count: about four bytes a token, system
// prompt and tools included (CLIProxyAPI #679 counted without them).
func estimateTokens(req *Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			n += len(p.Text) + len(p.Args) + len(p.ToolName)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	return (n + 3) / 4
}
