package emit

import (
	"fmt"
	"strconv"
	"strings"
)

// The shell-hook bundle emitters, one per packaging format. Each keeps the
// layout its harness documents (see the packaging evidence in the atlas).

// claudePlugin: .claude-plugin/plugin.json, hooks/hooks.json using
// ${CLAUDE_PLUGIN_ROOT}, skills/, commands/, .mcp.json; plus a local
// marketplace that carries a copy of the plugin (relative sources resolve
// inside the marketplace root only).
func claudePlugin(b *bundle) {
	regs := b.registrations()
	b.json(".claude-plugin/plugin.json", b.manifest(nil))
	if len(regs) > 0 {
		b.json("hooks/hooks.json", map[string]any{"hooks": b.matcherGroups(regs)})
	}
	b.copySkills("skills")
	b.copyCommands("commands")
	if len(b.p.MCPServers) > 0 {
		b.json(".mcp.json", map[string]any{"mcpServers": b.mcpServers()})
	}
	b.common(names(regs))

	market := "artifacts/" + b.p.Name + "/marketplaces/claude"
	entry := map[string]any{"name": b.p.Name, "source": "./plugins/" + b.p.Name, "description": b.p.Description, "version": b.p.Version}
	owner := map[string]any{"name": "sitter"}
	if b.p.Author.Name != "" {
		owner["name"] = b.p.Author.Name
		entry["author"] = map[string]any{"name": b.p.Author.Name}
	}
	b.files = append(b.files, File{Path: market + "/.claude-plugin/marketplace.json", Mode: 0o644, Bytes: mustJSON(map[string]any{
		"name":    b.p.Name + "-marketplace",
		"owner":   owner,
		"plugins": []any{entry},
	})})
	n := len(b.files) - 1
	for _, f := range b.files[:n] {
		if rel, ok := strings.CutPrefix(f.Path, b.dir+"/"); ok {
			b.files = append(b.files, File{Path: market + "/plugins/" + b.p.Name + "/" + rel, Bytes: f.Bytes, Mode: f.Mode})
		}
	}
}

// codexPlugin: .codex-plugin/plugin.json naming skills, hooks and MCP
// servers at the root; hooks/hooks.json in Codex's (Claude-shaped) format
// with ${PLUGIN_ROOT}; a marketplace entry at .agents/plugins/marketplace.json.
func codexPlugin(b *bundle) {
	regs := b.registrations()
	extra := map[string]any{}
	if len(b.p.Skills) > 0 {
		extra["skills"] = "./skills/"
		b.copySkills("skills")
	}
	if len(regs) > 0 {
		extra["hooks"] = "./hooks/hooks.json"
		b.json("hooks/hooks.json", map[string]any{"hooks": b.matcherGroups(regs)})
	}
	if len(b.p.MCPServers) > 0 {
		extra["mcpServers"] = "./.mcp.json"
		b.json(".mcp.json", map[string]any{"mcpServers": b.mcpServers()})
	}
	b.json(".codex-plugin/plugin.json", b.manifest(extra))
	b.json(".agents/plugins/marketplace.json", map[string]any{
		"name":    b.p.Name + "-marketplace",
		"plugins": []any{map[string]any{"name": b.p.Name, "source": map[string]any{"source": "local", "path": "./"}, "description": b.p.Description}},
	})
	b.common(names(regs))
}

// geminiExtension: gemini-extension.json (name, version, description,
// contextFileName, mcpServers), hooks/hooks.json in Gemini's settings
// format with ${extensionPath} and millisecond timeouts (extension hooks
// are not read from gemini-extension.json), commands as TOML, skills, and a
// context file listing the skills and commands.
func geminiExtension(b *bundle) {
	regs := b.registrations()
	m := map[string]any{"name": b.p.Name, "version": b.p.Version, "description": b.p.Description, "contextFileName": "GEMINI.md"}
	if len(b.p.MCPServers) > 0 {
		m["mcpServers"] = b.mcpServers()
	}
	if o, ok := b.p.Overrides[b.h.ID]; ok {
		for k, v := range o.Manifest {
			m[k] = v
		}
	}
	b.json("gemini-extension.json", m)
	if len(regs) > 0 {
		b.json("hooks/hooks.json", map[string]any{"hooks": b.matcherGroups(regs)})
	}
	b.copySkills("skills")
	for _, c := range b.p.Commands {
		var t strings.Builder
		if c.Description != "" {
			fmt.Fprintf(&t, "description = %s\n", tomlString(c.Description))
		}
		fmt.Fprintf(&t, "prompt = %s\n", tomlString(c.Prompt))
		b.add("commands/"+c.Name+".toml", []byte(t.String()), 0o644)
	}
	var ctx strings.Builder
	fmt.Fprintf(&ctx, "# %s\n\n%s\n", b.p.Name, b.p.Description)
	if len(b.p.Skills) > 0 {
		ctx.WriteString("\nSkills of this extension (read the SKILL.md when the task matches):\n\n")
		for _, s := range b.p.Skills {
			fmt.Fprintf(&ctx, "- skills/%s/SKILL.md: %s\n", s.Name, s.Description)
		}
	}
	b.add("GEMINI.md", []byte(ctx.String()), 0o644)
	b.common(names(regs))
}

// cursorPlugin: .cursor-plugin/plugin.json pointing at hooks/hooks.json in
// Cursor's {version:1, hooks:{event:[{command, matcher?, timeout}]}} format,
// skills as rules, commands.
func cursorPlugin(b *bundle) {
	regs := b.registrations()
	extra := map[string]any{}
	if len(regs) > 0 {
		extra["hooks"] = "./hooks/hooks.json"
		b.json("hooks/hooks.json", map[string]any{"version": 1, "hooks": b.flatHooks(regs, "command", "timeout")})
	}
	if len(b.p.Skills) > 0 {
		extra["skills"] = "./skills/"
		b.copySkills("skills")
		extra["rules"] = "./rules/"
		for _, s := range b.p.Skills {
			rule := fmt.Sprintf("---\ndescription: %s\nalwaysApply: false\n---\n\nRead skills/%s/SKILL.md of this plugin when the task matches.\n", yamlScalar(s.Description), s.Name)
			b.add("rules/"+s.Name+".mdc", []byte(rule), 0o644)
		}
	}
	if len(b.p.Commands) > 0 {
		extra["commands"] = "./commands/"
		b.copyCommands("commands")
	}
	if len(b.p.MCPServers) > 0 {
		extra["mcpServers"] = map[string]any{"mcpServers": b.mcpServers()}
	}
	b.json(".cursor-plugin/plugin.json", b.manifest(extra))
	b.common(names(regs))
}

// copilotPlugin: plugin.json with hooks.json in Copilot's
// {version:1, hooks:{event:[{type, bash, timeoutSec, matcher?}]}} format,
// skills, commands. Copilot gives plugin hooks no root variable, so the
// commands name the launcher relative to the plugin's cwd; `sitter plugin
// install` writes absolute paths into .github/hooks/<plugin>.json instead.
func copilotPlugin(b *bundle) {
	regs := b.registrations()
	extra := map[string]any{}
	if len(regs) > 0 {
		extra["hooks"] = "./hooks.json"
		b.json("hooks.json", map[string]any{"version": 1, "hooks": b.flatHooks(regs, "bash", "timeoutSec")})
	}
	if len(b.p.Skills) > 0 {
		extra["skills"] = "./skills/"
		b.copySkills("skills")
	}
	if len(b.p.Commands) > 0 {
		extra["commands"] = "./commands/"
		b.copyCommands("commands")
	}
	if len(b.p.MCPServers) > 0 {
		extra["mcpServers"] = map[string]any{"mcpServers": b.mcpServers()}
	}
	b.json("plugin.json", b.manifest(extra))
	b.common(names(regs))
}

// flatHooks is the {event: [{type?, <commandKey>, <timeoutKey>, matcher?}]}
// shape of Cursor and Copilot.
func (b *bundle) flatHooks(regs []registration, commandKey, timeoutKey string) map[string]any {
	hooks := map[string]any{}
	for _, r := range regs {
		e := map[string]any{commandKey: b.command(r.event.Name), timeoutKey: r.timeoutIn(b.h.Packaging.TimeoutUnit)}
		if commandKey == "bash" {
			e["type"] = "command"
		}
		if r.matcher != "" {
			e["matcher"] = r.matcher
		}
		hooks[r.event.Name] = []any{e}
	}
	return hooks
}

// tomlString quotes s as a TOML basic string (multi-line when needed).
func tomlString(s string) string {
	if !strings.Contains(s, "\n") {
		return strconv.Quote(s)
	}
	esc := strings.ReplaceAll(s, `\`, `\\`)
	esc = strings.ReplaceAll(esc, `"""`, `\"\"\"`)
	return `"""` + "\n" + esc + `"""`
}

// yamlScalar quotes a one-line YAML value.
func yamlScalar(s string) string {
	return strconv.Quote(strings.ReplaceAll(s, "\n", " "))
}
