// Owns reading this process's environment as plain strings (unset entries dropped): what a mode passes
// to its limits, components and agents.

export function processEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) out[k] = v;
  return out;
}
