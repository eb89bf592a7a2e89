//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// mcpServerEnv, set in the environment of the test binary, makes it a
// stdio MCP server instead of running tests (TestMain): a harness under
// test starts it as `<test binary>` from its MCP configuration.
const mcpServerEnv = "SITTER_E2E_MCP_SERVER"

// mcpElicitServer is a stdio MCP server (newline-delimited JSON-RPC) with
// one tool, "ask": a call sends the client an elicitation/create request
// (a form asking for one string) and answers the tool call with the
// client's reply: "ELICIT-REPLY <action> <content>".
func mcpElicitServer(in io.Reader, out io.Writer) int {
	enc := json.NewEncoder(out)
	send := func(v map[string]any) {
		v["jsonrpc"] = "2.0"
		enc.Encode(v)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	// pending is the id of the tools/call waiting for the elicitation's answer.
	var pending json.RawMessage
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil {
			continue
		}
		switch {
		case msg.Method == "" && string(msg.ID) == `"elicit-1"` && pending != nil:
			reply := string(msg.Result)
			if msg.Error != nil {
				reply = "error " + string(msg.Error)
			}
			send(map[string]any{"id": pending, "result": map[string]any{
				"content": []any{map[string]any{"type": "text", "text": "ELICIT-REPLY " + reply}},
			}})
			pending = nil
		case msg.Method == "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(msg.Params, &p)
			send(map[string]any{"id": msg.ID, "result": map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "e2e-elicit", "version": "0.0.1"},
			}})
		case msg.Method == "tools/list":
			send(map[string]any{"id": msg.ID, "result": map[string]any{"tools": []any{map[string]any{
				"name":        "ask",
				"description": "Asks the user for a word.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}},
			}}}})
		case msg.Method == "tools/call":
			pending = msg.ID
			send(map[string]any{"id": "elicit-1", "method": "elicitation/create", "params": map[string]any{
				"message": "ELICIT-MESSAGE: which word?",
				"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
					"word": map[string]any{"type": "string"},
				}},
			}})
		case msg.Method != "" && msg.ID != nil:
			// ping and anything else asked: an empty result.
			send(map[string]any{"id": msg.ID, "result": map[string]any{}})
		}
	}
	return 0
}

// mcpConfig writes an MCP configuration (for --mcp-config) naming the test
// binary as the stdio server "e2e" and returns its path.
func mcpConfig(dir string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"e2e": map[string]any{
		"type": "stdio", "command": exe, "args": []string{}, "env": map[string]string{mcpServerEnv: "elicit"},
	}}})
	p := fmt.Sprintf("%s/mcp.json", dir)
	return p, os.WriteFile(p, b, 0o644)
}
