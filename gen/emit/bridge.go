package emit

import (
	"fmt"
	"sort"
	"strings"
)

// The programmatic-family bundle emitters: a generated TypeScript module
// subscribes to the harness's in-process events (only those the plugin
// handles), sends each to `sitter hook <harness> <event>` through the
// bundle's launcher with spawnSync, and applies the reply keys the atlas's
// render rules define (see the bridge protocol at the top of
// atlas/harnesses/opencode.cue and pi.cue).

// bridgeCall is the shared TypeScript that runs the launcher.
func bridgeCall(harness string) string {
	return `import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// The bundle root: this module sits at its top (OpenCode) or in extensions/ (Pi).
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = HERE.endsWith("/extensions") ? dirname(HERE) : HERE;

// call runs "sitter hook ` + harness + ` <event>" with the payload on stdin and
// returns the reply object ({} for the no-op or any failure: a hook never
// breaks its harness). It is synchronous on purpose: some harnesses do not
// wait for asynchronous handlers of loop events.
function call(event: string, payload: unknown): Record<string, any> {
  let input: string;
  try {
    input = JSON.stringify(payload, (k, v) => (k === "signal" || typeof v === "function" ? undefined : v));
  } catch (err) {
    process.stderr.write("sitter: cannot encode the ` + harness + ` " + event + " payload: " + String(err) + "\n");
    return {};
  }
  const r = spawnSync(join(ROOT, "bin", "sitter-hook"), ["` + harness + `", event], {
    input,
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  if (r.stderr) process.stderr.write(r.stderr);
  if (r.error || !r.stdout || !r.stdout.trim()) return {};
  try {
    const reply = JSON.parse(r.stdout);
    return reply && typeof reply === "object" && !Array.isArray(reply) ? reply : {};
  } catch {
    process.stderr.write("sitter: unreadable reply for ` + harness + ` " + event + "\n");
    return {};
  }
}

// replaceInPlace swaps an object's contents: the harness keeps its reference.
function replaceInPlace(target: Record<string, any>, value: Record<string, any>) {
  for (const k of Object.keys(target)) delete target[k];
  Object.assign(target, value);
}
`
}

func tsList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// opencodeBusEvents are the events OpenCode delivers through its `event`
// hook rather than as hooks of their own.
func isBusEvent(name string) bool {
	return strings.HasPrefix(name, "session.") || strings.HasPrefix(name, "permission.") ||
		strings.HasPrefix(name, "file.") || strings.HasPrefix(name, "command.executed") || strings.HasPrefix(name, "message.")
}

// opencodePlugin: a package whose index.ts is an OpenCode plugin module.
func opencodePlugin(b *bundle) {
	regs := b.registrations()
	var hooks, bus, stops []string
	for _, r := range regs {
		if isBusEvent(r.event.Name) {
			bus = append(bus, r.event.Name)
		} else {
			hooks = append(hooks, r.event.Name)
		}
		if r.event.Phase.Name == "stop" {
			stops = append(stops, r.event.Name)
		}
	}
	sort.Strings(hooks)
	sort.Strings(bus)
	sort.Strings(stops)
	var ts strings.Builder
	fmt.Fprintf(&ts, "// %s\n", Marker(b.p.Dir+" and "+b.h.File))
	ts.WriteString(bridgeCall(b.h.ID))
	fmt.Fprintf(&ts, `
const HOOKS: string[] = %s;
const BUS: string[] = %s;
// STOPS end a turn: their payload also carries the session's last
// assistant text (lastAssistantMessage), which the bus event lacks.
const STOPS: string[] = %s;

// lastAssistant is the text of the session's last assistant message.
async function lastAssistant(client: any, sessionID: string): Promise<string | undefined> {
  try {
    const res = await client.session.messages({ path: { id: sessionID } });
    const msgs: any[] = Array.isArray(res?.data) ? res.data : Array.isArray(res) ? res : [];
    for (let i = msgs.length - 1; i >= 0; i--) {
      if (msgs[i]?.info?.role !== "assistant") continue;
      return (msgs[i].parts ?? []).filter((p: any) => p?.type === "text" && typeof p.text === "string").map((p: any) => p.text).join("\n");
    }
  } catch {
    // no message: the stop decision goes on without it
  }
  return undefined;
}

// partId makes an OpenCode-style ascending part id: "prt_", 12 hex digits
// of time and a counter, 14 random base62 characters.
let partCounter = 0;
function partId(): string {
  const stamp = (BigInt(Date.now()) * 0x1000n + BigInt(partCounter++ & 0xfff)).toString(16).padStart(12, "0").slice(-12);
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let rand = "";
  for (let i = 0; i < 14; i++) rand += alphabet[Math.floor(Math.random() * alphabet.length)];
  return "prt_" + stamp + rand;
}

// apply carries out a reply on a hook's output object.
function apply(output: any, reply: Record<string, any>) {
  if (!output || typeof output !== "object") return;
  if (reply.args && typeof reply.args === "object" && output.args && typeof output.args === "object") replaceInPlace(output.args, reply.args);
  if (typeof reply.appendText === "string" && Array.isArray(output.parts)) {
    // OpenCode saves every part with its own id and its message's ids; a
    // bare {type, text} part fails the whole run (1.18.33).
    output.parts.push({ id: partId(), sessionID: output.message?.sessionID, messageID: output.message?.id, type: "text", text: reply.appendText, synthetic: true });
  }
  if (typeof reply.appendOutput === "string" && typeof output.output === "string") output.output += "\n" + reply.appendOutput;
  if (typeof reply.system === "string" && Array.isArray(output.system)) output.system.push(reply.system);
  if (typeof reply.context === "string" && Array.isArray(output.context)) output.context.push(reply.context);
  if (typeof reply.error === "string") throw new Error(reply.error);
}

export const %s = async ({ client, directory }: any) => {
  const hooks: Record<string, any> = {};
  for (const name of HOOKS) {
    hooks[name] = async (input: any, output: any) => apply(output, call(name, { input, output, directory }));
  }
  if (BUS.length > 0) {
    hooks.event = async ({ event }: any) => {
      if (!event || !BUS.includes(event.type)) return;
      const sessionID = event.properties?.sessionID ?? event.properties?.info?.id;
      const payload: Record<string, any> = { event, directory };
      if (STOPS.includes(event.type) && sessionID) payload.lastAssistantMessage = await lastAssistant(client, sessionID);
      const reply = call(event.type, payload);
      if (typeof reply.prompt === "string" && sessionID) {
        await client.session.prompt({ path: { id: sessionID }, body: { parts: [{ type: "text", text: reply.prompt }] } });
      }
    };
  }
  return hooks;
};
`, tsList(hooks), tsList(bus), tsList(stops), "Sitter"+GoName(b.p.Name))
	b.add("index.ts", []byte(ts.String()), 0o644)
	b.json("package.json", map[string]any{
		"name": b.p.Name + "-opencode", "version": b.p.Version, "description": b.p.Description,
		"type": "module", "main": "index.ts", "private": true,
	})
	b.common(names(regs))
}

// piPackage: a pi package (keyword pi-package) whose extension subscribes
// with pi.on; skills and commands (as prompts) ride along.
func piPackage(b *bundle) {
	regs := b.registrations()
	var events []string
	for _, r := range regs {
		events = append(events, r.event.Name)
	}
	var ts strings.Builder
	fmt.Fprintf(&ts, "// %s\n", Marker(b.p.Dir+" and "+b.h.File))
	ts.WriteString(bridgeCall(b.h.ID))
	fmt.Fprintf(&ts, `
const EVENTS: string[] = %s;

// After a compaction or reload Pi hands handlers a stale ctx whose getters
// throw; the session goes on, so what a read cannot say is what the last
// good read said.
let last: Record<string, any> = {};

function read(f: () => any): any {
  try {
    return f();
  } catch {
    return undefined;
  }
}

function context(ctx: any) {
  const sm = read(() => ctx?.sessionManager);
  const now: Record<string, any> = {
    cwd: read(() => ctx?.cwd),
    sessionId: read(() => sm?.getSessionId?.()),
    sessionFile: read(() => sm?.getSessionFile?.()),
    model: read(() => ctx?.model?.id),
  };
  for (const k of Object.keys(now)) now[k] ??= last[k];
  last = now;
  return now;
}

export default function (pi: any) {
  for (const name of EVENTS) {
    pi.on(name, (event: any, ctx: any) => {
      // The stop phase is the last turn of a run: no tool results pending
      // and no error; earlier turns are not forwarded.
      if (name === "turn_end") {
        const reason = event?.message?.stopReason;
        if ((event?.toolResults?.length ?? 0) > 0 || reason === "error" || reason === "aborted") return;
      }
      const reply = call(name, { ...event, ctx: context(ctx) });
      if (typeof reply.followUp === "string") {
        pi.sendUserMessage(reply.followUp, { deliverAs: "followUp" });
        delete reply.followUp;
      }
      if (reply.nextTurn && typeof reply.nextTurn === "object") {
        pi.sendMessage(reply.nextTurn, { deliverAs: "nextTurn" });
        delete reply.nextTurn;
      }
      if (reply.input && typeof reply.input === "object" && event?.input && typeof event.input === "object") {
        replaceInPlace(event.input, reply.input);
        delete reply.input;
      }
      if (typeof reply.appendText === "string") {
        const content = Array.isArray(event?.content) ? event.content : [];
        reply.content = [...content, { type: "text", text: reply.appendText }];
        delete reply.appendText;
      }
      return Object.keys(reply).length > 0 ? reply : undefined;
    });
  }
}
`, tsList(events))
	b.add("extensions/sitter.ts", []byte(ts.String()), 0o644)
	pi := map[string]any{"extensions": []string{"./extensions"}}
	if len(b.p.Skills) > 0 {
		pi["skills"] = []string{"./skills"}
		b.copySkills("skills")
	}
	if len(b.p.Commands) > 0 {
		pi["prompts"] = []string{"./prompts"}
		b.copyCommands("prompts")
	}
	b.json("package.json", map[string]any{
		"name": b.p.Name + "-pi", "version": b.p.Version, "description": b.p.Description,
		"keywords": []string{"pi-package"}, "pi": pi, "private": true,
	})
	b.common(names(regs))
}
