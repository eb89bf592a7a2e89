// sitter's answer to `import … from '@a5c-ai/babysitter-sdk'` inside a
// process, and the process context the runner hands to process().
// Written by sitter to its cache; see runtime/run/js.go.

export class Suspend extends Error {
  constructor(effects) {
    super('sitter: process suspended on pending effects');
    this.name = 'Suspend';
    this.effects = effects;
  }
}

export class HaltSignal extends Error {
  constructor(reason) {
    super(reason || 'halted');
    this.name = 'HaltSignal';
    this.reason = reason || '';
  }
}

export function defineTask(id, impl, options = {}) {
  if (typeof id !== 'string' || !id.trim()) throw new Error('defineTask requires a non-empty string id');
  if (typeof impl !== 'function') throw new Error(`defineTask(${id}) requires a function`);
  return Object.freeze({
    id: id.trim(),
    options,
    async build(args, taskCtx) {
      const def = await impl(args, taskCtx);
      if (!def || typeof def !== 'object') throw new Error(`task ${id} must return a task definition object`);
      return def;
    },
  });
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let lastTime = -1;
let lastRand = null;

// ulid returns a monotonic ULID, like the SDK's effect ids.
export function ulid(randomBytes) {
  const now = Date.now();
  let r;
  if (now === lastTime && lastRand) {
    r = Uint8Array.from(lastRand);
    for (let i = 9; i >= 0; i--) { r[i] = (r[i] + 1) & 255; if (r[i] !== 0) break; }
  } else {
    r = randomBytes(10);
  }
  lastTime = now; lastRand = r;
  let out = '';
  let t = now;
  for (let i = 0; i < 10; i++) { out = CROCKFORD[t % 32] + out; t = Math.floor(t / 32); }
  let bits = 0, value = 0, rs = '';
  for (const b of r) {
    value = (value << 8) | b; bits += 8;
    while (bits >= 5) { rs += CROCKFORD[(value >>> (bits - 5)) & 31]; bits -= 5; }
  }
  return out + rs;
}

// shape describes a value's structure, not its content: the part of an
// invocation key that survives changing values in the args.
export function shape(v) {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return '[' + Array.from(new Set(v.map(shape))).sort().join('|') + ']';
  if (typeof v === 'object') return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + shape(v[k])).join(',') + '}';
  return typeof v;
}

function rehydrate(e) {
  const err = new Error(e && e.message ? e.message : 'task failed');
  if (e && e.name) err.name = e.name;
  if (e && e.stack) err.stack = e.stack;
  if (e && e.data !== undefined) err.data = e.data;
  err.taskError = e;
  return err;
}

const breakpointTask = defineTask('__sdk.breakpoint', (args) => ({
  kind: 'breakpoint',
  title: args.label,
  metadata: { payload: args.payload, requestedAt: args.requestedAt, label: args.label, expert: args.expert, tags: args.tags, strategy: args.strategy },
}));

const orchestratorTask = defineTask('__sdk.orchestratorTask', (args) => ({
  kind: 'orchestrator_task',
  title: args.label,
  metadata: { payload: args.payload, orchestratorTask: true },
}));

const sleepTask = defineTask('__sdk.sleep', (args) => ({
  kind: 'sleep',
  title: `sleep:${args.iso}`,
  sleep: { iso: args.iso, targetEpochMs: args.targetEpochMs },
  metadata: { targetEpochMs: args.targetEpochMs, iso: args.iso },
}));

// createContext builds ctx for one replay. input is what sitter sent:
// results (by invocation key), requested (keys of effects already asked
// for), processId, runId, runDir, now.
export function createContext(input, deps) {
  const state = { step: 0, occurrences: new Map(), requested: new Map(), logs: [] };
  const results = input.results || {};
  const requested = input.requested || {};
  const now = () => new Date(input.now);

  // invocationKey is the SDK's `processId:stepId:taskId`, so sitter and the
  // SDK continue each other's runs. Runs journaled by sitter before it used
  // the SDK's keys named effects by task, label and argument shape: a key
  // the journal knows only in that older form is answered in it.
  function invocationKey(t, stepId, args, opts) {
    if (opts.key !== undefined && opts.key !== null) return `${input.processId}:${t.id}:key:${opts.key}`;
    const key = `${input.processId}:${stepId}:${t.id}`;
    const base = `${input.processId}:${t.id}:${opts.label ?? ''}:${deps.hash(shape(args))}`;
    const n = (state.occurrences.get(base) || 0) + 1;
    state.occurrences.set(base, n);
    const legacy = `${base}:${n}`;
    const known = (k) => results[k] || requested[k];
    return !known(key) && known(legacy) ? legacy : key;
  }

  async function task(def, args, opts = {}) {
    let t = def;
    if (!t || typeof t !== 'object') throw new Error('ctx.task requires a task defined with defineTask(id, fn)');
    if (typeof t.build !== 'function') {
      // A plain task definition object: { kind, title, … }.
      const plain = t;
      t = { id: plain.id || plain.taskId || plain.title || plain.kind, build: async () => plain };
    }
    const stepId = 'S' + String(++state.step).padStart(6, '0');
    const key = invocationKey(t, stepId, args, opts);
    const r = results[key];
    if (r) {
      if (r.status === 'ok') return r.value;
      throw rehydrate(r.error);
    }
    let effect;
    if (requested[key]) {
      effect = { key, effectId: requested[key], existing: true };
    } else {
      const effectId = deps.ulid();
      const taskCtx = { effectId, runId: input.runId, runDir: input.runDir, invocationKey: key, taskId: t.id, label: opts.label, labels: opts.labels };
      const taskDef = await t.build(args, taskCtx);
      if (!taskDef || typeof taskDef.kind !== 'string' || !taskDef.kind) throw new Error(`task ${t.id} did not provide a kind`);
      // The SDK's labels: the call's label, then the definition's, deduplicated.
      const own = [...(opts.label ? [opts.label] : []), ...(opts.labels || [])];
      const labels = Array.from(new Set([...own, ...(Array.isArray(taskDef.labels) ? taskDef.labels : [])].filter((l) => typeof l === 'string' && l.trim()).map((l) => l.trim())));
      const label = opts.label ?? labels[0] ?? taskDef.title ?? t.id;
      effect = { key, effectId, stepId, taskId: t.id, kind: taskDef.kind, label, labels: labels.length ? labels : undefined, taskDef, args: args === undefined ? null : args };
    }
    if (!state.requested.has(key)) state.requested.set(key, effect);
    throw new Suspend([effect]);
  }

  async function all(thunks) {
    if (!Array.isArray(thunks)) throw new TypeError('parallel.all expects an array of functions');
    const out = [];
    const pending = [];
    for (let i = 0; i < thunks.length; i++) {
      if (typeof thunks[i] !== 'function') throw new TypeError(`parallel.all() expects functions, but element ${i} is ${typeof thunks[i]}: wrap it as () => ctx.task(…)`);
      try {
        out.push(await thunks[i]());
      } catch (e) {
        if (e instanceof Suspend) { pending.push(...e.effects); continue; }
        throw e;
      }
    }
    if (pending.length) throw new Suspend(groupParallel(pending));
    return out;
  }

  // groupParallel dedupes a batch by effect and, as the SDK does for a
  // batch of two or more, marks its effects with one parallelGroupId: the
  // first 16 hex digits of the SHA-1 of their keys, each followed by "|".
  function groupParallel(effects) {
    const batch = Array.from(new Map(effects.map((e) => [e.effectId, e])).values());
    if (batch.length > 1) {
      const id = deps.sha1(batch.map((e) => e.key + '|').join('')).slice(0, 16);
      for (const e of batch) e.parallelGroupId = id;
    }
    return batch;
  }

  const ctx = {
    runId: input.runId,
    processId: input.processId,
    now,
    task,
    breakpoint: (payload, opts = {}) => {
      const label = opts.label || (payload && typeof payload === 'object' && typeof payload.label === 'string' && payload.label) || 'breakpoint';
      return task(breakpointTask, { payload, label, requestedAt: now().toISOString(), expert: opts.expert, tags: opts.tags, strategy: opts.strategy }, { ...opts, label });
    },
    sleepUntil: async (target, opts = {}) => {
      const epoch = typeof target === 'number' ? target : typeof target === 'string' ? Date.parse(target) : target instanceof Date ? target.getTime() : NaN;
      if (!Number.isFinite(epoch) || epoch < 0) throw new Error(`ctx.sleepUntil: invalid target ${String(target)}`);
      if (epoch <= input.now) return;
      const iso = new Date(epoch).toISOString();
      await task(sleepTask, { targetEpochMs: epoch, iso }, { ...opts, label: opts.label ?? `sleep:${iso}` });
    },
    orchestratorTask: (payload, opts = {}) => {
      const label = opts.label ?? 'orchestrator-task';
      return task(orchestratorTask, { payload: payload === undefined ? null : payload, label }, { ...opts, label });
    },
    // The SDK's ctx.hook runs plugin hook scripts from inside the process;
    // sitter keeps processes free of side effects, so it only logs.
    hook: async (hookType) => {
      state.logs.push(`ctx.hook(${hookType}) skipped: sitter runs no hooks from processes`);
      return { executedHooks: [], skipped: true };
    },
    parallel: { all, map: (items, fn) => all(items.map((item, i) => () => fn(item, i))) },
    halt: (reason) => { throw new HaltSignal(typeof reason === 'string' ? reason : ''); },
    log: (...args) => {
      const parts = args.filter((a) => a !== undefined).map((a) => (typeof a === 'string' ? a : JSON.stringify(a)));
      if (parts.length) state.logs.push(parts.join(' '));
    },
  };
  return { ctx, state };
}

export default { defineTask };
