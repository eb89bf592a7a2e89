// sitter's process runner: replays a process once. stdin: the replay input
// (JSON); fd 3: one JSON answer, {status: waiting|completed|failed|halted|
// runtime-error, …}, or with mode "exports" {status: exports, exports:
// {name: typeof}}. The process's own console output goes to stderr.
import { register, isBuiltin } from 'node:module';
import vm from 'node:vm';
import { readFileSync, writeSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { pathToFileURL, fileURLToPath } from 'node:url';
import * as sdk from './sdk.mjs';
import { createContext, Suspend, HaltSignal, ulid } from './sdk.mjs';

const SDK = '@a5c-ai/babysitter-sdk';
const isSDK = (s) => s === SDK || s.startsWith(SDK + '/');

class NeedsHook extends Error {}

function synthetic(ns, identifier) {
  const keys = Object.keys(ns);
  return new vm.SyntheticModule(keys, function () { for (const k of keys) this.setExport(k, ns[k]); }, { identifier });
}

// importEntryVM evaluates the entry module with vm.SourceTextModule and
// links its SDK import to sdk.mjs, without a loader hook (whose worker
// thread costs Node ~70 ms at start). Only the entry goes through vm: its
// relative and builtin imports are native imports, which is right because
// sitter checked that no other module of the graph names the SDK. A bare
// package import needs Node's own resolution from the entry's directory:
// then the loader hook is used instead.
async function importEntryVM(entry) {
  const url = pathToFileURL(entry).href;
  const native = async (spec) => {
    if (isSDK(spec)) return sdk;
    if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('file:')) return import(new URL(spec, url).href);
    if (isBuiltin(spec)) return import(spec);
    throw new NeedsHook(spec);
  };
  const src = readFileSync(entry, 'utf8');
  const mod = new vm.SourceTextModule(src, {
    identifier: url,
    initializeImportMeta(meta) { meta.url = url; meta.filename = entry; meta.dirname = fileURLToPath(new URL('.', url)); },
    importModuleDynamically: (spec) => native(spec),
  });
  await mod.link(async (spec) => synthetic(await native(spec), spec));
  await mod.evaluate();
  return mod.namespace;
}

// brokenModule is the file of the entry's static import graph (the entry
// included) that does not parse, with the load error's message, or
// undefined: Node's import error does not say which module it is.
// vm.SourceTextModule parses a module without running it and lists its
// imports; only relative and absolute .mjs/.js imports are followed.
function brokenModule(entry, message) {
  if (!vm.SourceTextModule) return undefined;
  const seen = new Set();
  const walk = (url) => {
    if (seen.has(url)) return undefined;
    seen.add(url);
    let deps;
    try {
      deps = new vm.SourceTextModule(readFileSync(new URL(url), 'utf8'), { identifier: url }).dependencySpecifiers;
    } catch (e) {
      return e instanceof SyntaxError && e.message === message ? fileURLToPath(url) : undefined;
    }
    for (const spec of deps) {
      if (!(spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('file:'))) continue;
      const u = new URL(spec, url);
      u.search = u.hash = '';
      if (!/\.m?js$/.test(u.pathname)) continue;
      const f = walk(u.href);
      if (f) return f;
    }
    return undefined;
  };
  return walk(pathToFileURL(entry).href);
}

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
if (input.shim === 'hook') register('./hooks.mjs', import.meta.url);
const deps = {
  hash: (s) => createHash('sha256').update(s).digest('hex').slice(0, 16),
  sha1: (s) => createHash('sha1').update(s).digest('hex'),
  ulid: () => ulid(randomBytes),
};

let fn;
try {
  let mod;
  if (input.shim === 'vm' && vm.SourceTextModule) {
    try {
      mod = await importEntryVM(input.entry);
    } catch (e) {
      if (!(e instanceof NeedsHook)) throw e;
      register('./hooks.mjs', import.meta.url);
      mod = await import(pathToFileURL(input.entry).href);
    }
  } else {
    if (input.shim === 'vm') register('./hooks.mjs', import.meta.url);
    mod = await import(pathToFileURL(input.entry).href);
  }
  if (input.mode === 'exports') {
    // `run create` asks what the module exports before it makes a run.
    send({ status: 'exports', exports: Object.fromEntries(Object.keys(mod).map((k) => [k, typeof mod[k]])) });
    process.exit(0);
  }
  fn = (input.exportName && mod[input.exportName]) ?? mod.process ?? mod.default;
  if (typeof fn !== 'function') throw new Error(`export '${input.exportName || 'process'}' of ${input.entry} is not a function`);
} catch (e) {
  const answer = { status: 'runtime-error', error: serializeError(e) };
  if (e instanceof SyntaxError) {
    try { answer.syntaxErrorFile = brokenModule(input.entry, e.message); } catch {}
  }
  send(answer);
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
