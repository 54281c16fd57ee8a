// Owns the ACP Registry's own checks of a release, restated here so the release refuses first (SPEC
// §11): the icon rules (SVG, square 16×16, paint only currentColor/none/inherit, no comments) and the
// agent check (empty HOME, no keys: `initialize` answered with an agent or terminal auth method, nothing
// but JSON-RPC on stdout). The entry's schema is registry-entry.ts's.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ICON_SIZE = 16;
const PAINT_OK = new Set(["currentcolor", "none", "inherit"]);

/** What the registry would say is wrong with an icon.svg; empty when it passes. */
export function iconProblems(svg: string): string[] {
  const problems: string[] = [];
  if (svg.includes("<!--")) problems.push("it has a comment (<!-- … -->), which the registry refuses");
  const root = /<svg\b([^>]*)>/i.exec(svg);
  if (!root || svg.slice(0, root.index).replace(/<\?xml[^>]*\?>/, "").trim() !== "") return [...problems, "its root element is not <svg>"];
  const attr = (tag: string, name: string) => new RegExp(`\\s${name}\\s*=\\s*(["'])(.*?)\\1`, "i").exec(tag)?.[2];
  const number = (v: string | undefined) => (v === undefined ? undefined : Number.parseFloat(v));
  let w = number(attr(root[1]!, "width"));
  let h = number(attr(root[1]!, "height"));
  const box = attr(root[1]!, "viewBox")?.trim().split(/[\s,]+/).map(Number);
  if ((w === undefined || h === undefined || Number.isNaN(w) || Number.isNaN(h)) && box?.length === 4) [w, h] = [box[2], box[3]];
  if (w === undefined || h === undefined || Number.isNaN(w) || Number.isNaN(h)) problems.push("it has neither width and height nor a viewBox");
  else if (w !== ICON_SIZE || h !== ICON_SIZE) problems.push(`it is ${w}×${h}, not ${ICON_SIZE}×${ICON_SIZE}${w === h ? "" : " (nor square)"}`);
  let current = false;
  const paint = (where: string, value: string) => {
    const v = value.trim().toLowerCase();
    if (v === "currentcolor") current = true;
    else if (!PAINT_OK.has(v)) problems.push(`${where} is ${JSON.stringify(value.trim())}: a fixed colour (use currentColor or none)`);
  };
  for (const tag of svg.matchAll(/<[a-z][^>]*>/gi)) {
    for (const name of ["fill", "stroke"]) {
      const v = attr(tag[0], name);
      if (v !== undefined) paint(name, v);
    }
    const style = attr(tag[0], "style");
    for (const m of style?.matchAll(/\b(fill|stroke)\s*:\s*([^;]+)/gi) ?? []) paint(`style ${m[1]}`, m[2]!);
  }
  for (const block of svg.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/gi)) {
    for (const m of block[1]!.matchAll(/\b(fill|stroke)\s*:\s*([^;}\s]+)/gi)) paint(`CSS ${m[1]}`, m[2]!);
  }
  if (!current) problems.push("nothing in it is painted in currentColor, so it cannot follow the editor's theme");
  return problems;
}

/** Only what the registry passes to an agent besides HOME; no API keys. */
const PASSED_ENV = ["PATH", "TMPDIR", "TMP", "TEMP"];

/** The initialize the registry's check sends. */
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: 1,
    clientInfo: { name: "ACP Registry check", version: "1.0.0" },
    clientCapabilities: { terminal: true, fs: { readTextFile: true, writeTextFile: true }, _meta: { terminal_output: true, "terminal-auth": true } },
  },
};

/** An auth method's type as the registry reads it: `type`, else a `_meta` marker, else `agent`. */
function authType(m: Record<string, unknown>): string {
  if (typeof m.type === "string") return m.type;
  const meta = m._meta as Record<string, unknown> | undefined;
  if (meta && "terminal-auth" in meta) return "terminal";
  return "agent";
}

/**
 * Runs the registry's agent check on `command` (the entry's cmd and args); undefined when it passes,
 * else what failed. The agent's first line must answer initialize; stdin is then closed and every
 * line it wrote to stdout, until it exits, must be a JSON-RPC message.
 */
export async function registryAgentCheck(command: readonly string[], timeoutMs = 30_000): Promise<string | undefined> {
  const home = mkdtempSync(join(tmpdir(), "tendril-registry-check-"));
  const env: Record<string, string> = { HOME: home, TERM: "dumb" };
  for (const name of PASSED_ENV) if (process.env[name]) env[name] = process.env[name]!;
  try {
    const child = spawn(command[0]!, command.slice(1), { cwd: home, env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => {
      child.on("error", (e) => ((err += String(e)), resolve(127)));
      child.on("exit", (code) => resolve(code));
    });
    child.stdin.on("error", () => {}); // an agent that died before reading: reported below
    child.stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
    const deadline = Date.now() + timeoutMs;
    while (!out.includes("\n") && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
    child.stdin.end();
    const code = await Promise.race([exited, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), Math.max(0, deadline - Date.now())))]);
    if (code === "timeout") child.kill("SIGKILL");
    const stderr = err.trim().split("\n").slice(-5).join("\n");
    const lines = out.split("\n").filter((l) => l.trim() !== "");
    if (lines.length === 0) return `it wrote nothing to stdout within ${timeoutMs / 1000} s${code === "timeout" ? "" : ` (exit ${code})`}${stderr ? `; stderr: ${stderr}` : ""}`;
    const messages: Record<string, unknown>[] = [];
    for (const line of lines) {
      let m: unknown;
      try {
        m = JSON.parse(line);
      } catch {
        return `it wrote a line to stdout that is not JSON-RPC: ${JSON.stringify(line.slice(0, 200))}`;
      }
      if (typeof m !== "object" || m === null || (m as { jsonrpc?: unknown }).jsonrpc !== "2.0") return `it wrote a line to stdout that is not JSON-RPC: ${JSON.stringify(line.slice(0, 200))}`;
      messages.push(m as Record<string, unknown>);
    }
    const first = messages[0]!;
    if (first.id !== 1 || first.result === undefined) return `its first line is not the answer to initialize: ${JSON.stringify(first).slice(0, 300)}`;
    const methods = (first.result as { authMethods?: unknown }).authMethods;
    if (!Array.isArray(methods) || methods.length === 0) return "initialize lists no authMethods (the registry lists only agents a user can authenticate with)";
    const types = methods.map((m) => authType(m as Record<string, unknown>));
    if (!types.some((t) => t === "agent" || t === "terminal")) return `no auth method of type agent or terminal (found: ${types.join(", ")})`;
    if (code === "timeout") return `it did not exit within ${timeoutMs / 1000} s of stdin closing`;
    return undefined;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
