// Module resolution hook: a process's `import … from '@a5c-ai/babysitter-sdk'`
// gets sitter's sdk.mjs, wherever the process file lives.
const SDK = new URL('./sdk.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === '@a5c-ai/babysitter-sdk' || specifier.startsWith('@a5c-ai/babysitter-sdk/')) {
    return { url: SDK, shortCircuit: true };
  }
  return next(specifier, context);
}
