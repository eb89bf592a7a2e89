// sitter's process runner: replays a process once. stdin: the replay input
// (JSON); fd 3: one JSON answer, {status: waiting|completed|failed|halted|
// runtime-error, …}. The process's own console output goes to stderr.
import { register } from 'node:module';
import { readFileSync, writeSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { createContext, Suspend, HaltSignal, ulid } from './sdk.mjs';

for (const m of ['log', 'info', 'debug']) console[m] = (...a) => console.error(...a);

function send(v) {
  writeSync(3, JSON.stringify(v));
}

function serializeError(e) {
  if (e instanceof Error) {
    const o = { name: e.name, message: e.message };
    if (e.stack) o.stack = e.stack;
    if (e.data !== undefined) o.data = e.data;
    return o;
  }
  return { name: 'Error', message: String(e) };
}

const input = JSON.parse(readFileSync(0, 'utf8'));
if (input.shim) register('./hooks.mjs', import.meta.url);
const deps = {
  hash: (s) => createHash('sha256').update(s).digest('hex').slice(0, 16),
  ulid: () => ulid(randomBytes),
};

let fn;
try {
  const mod = await import(pathToFileURL(input.entry).href);
  fn = (input.exportName && mod[input.exportName]) ?? mod.process ?? mod.default;
  if (typeof fn !== 'function') throw new Error(`export '${input.exportName || 'process'}' of ${input.entry} is not a function`);
} catch (e) {
  send({ status: 'runtime-error', error: serializeError(e) });
  process.exit(0);
}

const { ctx, state } = createContext(input, deps);
let answer;
try {
  const output = await fn(input.inputs, ctx);
  answer = { status: 'completed', output: output === undefined ? null : output };
} catch (e) {
  if (e instanceof Suspend) answer = { status: 'waiting' };
  else if (e instanceof HaltSignal) answer = { status: 'halted', reason: e.reason };
  else answer = { status: 'failed', error: serializeError(e) };
}
// A process that caught a suspension still waits for what it asked for.
if (state.requested.size) answer = { status: 'waiting' };
if (answer.status === 'waiting') answer.effects = Array.from(state.requested.values());
answer.logs = state.logs;
send(answer);
process.exit(0);
