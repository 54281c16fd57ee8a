// Owns the `tendril prompt` / `yopo` mode: flags, stdin prompt, environment and signals → one ACP client
// run. Usage errors exit 2 with one line; the run itself (core/acp-client/client-runner.ts) sets every
// other code. Does not speak ACP or render: core/acp-client does both; this file only wires values and
// the process.
import { closeSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { type ApprovalPolicy, decidePermission, parseApprovalPolicy } from "../../core/acp-client/approve.ts";
import { type AgentSpawn, type McpStdioServer, type ResumeWanted, runPrompt } from "../../core/acp-client/client-runner.ts";
import type { OutputSchema } from "../../core/acp-client/output-schema.ts";
import { createPromptOutput } from "../../core/acp-client/prompt-output.ts";
import { inheritedEnv } from "../../core/child-env.ts";
import * as cl from "../../core/command-line.ts";
import { ConfigError, loadConfig } from "../../core/config.ts";
import { priceOf } from "../../core/llm/prices.ts";
import { LimitError, type Limits, loadLimits } from "../../core/limits.ts";
import { isLogLevel, setLogLevel, setLogScope } from "../../core/log.ts";
import { setKillLimits } from "../../core/process-group.ts";
import { formatBytes } from "../../core/text-bounds.ts";
import { VERSION } from "../../core/version.ts";
import { processEnv } from "../process/environment.ts";
import { installExitPolicy } from "../process/fatal.ts";
import { readFileOrUndefined } from "../process/optional-file.ts";
import { isTerminal, type TextOut, textOut } from "../process/stdio.ts";
import { FLAGS, flagKey, flagValue, parsePlain, type PromptFlags } from "./prompt-flags.ts";
import { type SelfCommand, selfCommand } from "../process/self.ts";
import { signalExitCode, type StopSignal, watchStopSignals } from "../process/stop-signals.ts";

type CommandLineModule = typeof cl;

class UsageError extends Error {}

/**
 * `tendril prompt …` without the command line parser when the flags are plain (one prompt, known
 * flags, known choices): a CI step should not pay for commander. Anything else — help, a mistake —
 * is undefined: the full parser takes it and says what is wrong.
 */
export async function runPromptFast(args: string[]): Promise<number | undefined> {
  const parsed = parsePlain(args);
  const values = parsed?.values as Record<string, string | string[] | undefined> | undefined;
  const plain =
    parsed !== undefined &&
    parsed.positionals.length === 1 &&
    FLAGS.every((f) => !f.choices || values![f.name] === undefined || f.choices.includes(values![f.name] as string));
  if (!plain) return undefined;
  const flags = Object.fromEntries(Object.entries(values!).map(([k, v]) => [flagKey(k), flagValue(k, v)]));
  // Keys are flagKey()s of FLAGS (the one flag table), values parsed or defaults: PromptFlags' shape, which a built record's type cannot say.
  const withDefaults = { ...Object.fromEntries(FLAGS.filter((f) => f.default !== undefined).map((f) => [flagKey(f.name), f.default])), ...flags } as unknown as PromptFlags;
  return runPromptCommand(parsed!.positionals[0]!, withDefaults);
}

export async function runPromptCommand(prompt: string, flags: PromptFlags): Promise<number> {
  installExitPolicy();
  try {
    return await runPromptMode(prompt, flags);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`tendril prompt: ${err.message}\n`);
    return 2;
  }
}

function parseTimeout(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const s = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(s) || s <= 0) {
    throw new UsageError(`--timeout must be a positive number of seconds, got ${JSON.stringify(raw)}`);
  }
  return s;
}

function parseMaxTurns(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`--max-turns must be a whole number of turns, 1 or more, got ${JSON.stringify(raw)}`);
  }
  return n;
}

function parseBudget(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new UsageError(`--max-budget-usd must be a positive number of US dollars, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** --no-session-persistence: the built-in agent's, for a new session. */
function checkPersistence(flags: PromptFlags): void {
  if (flags.sessionPersistence !== false) return;
  if (flags.agent !== undefined) throw new UsageError("--no-session-persistence applies to the built-in agent only: with --agent, use that agent's own setting");
  if (flags.resume !== undefined || flags.continue) throw new UsageError("--no-session-persistence starts a session that is not saved: it cannot continue one (--resume, --continue)");
}

/**
 * --max-budget-usd with the built-in agent: its model must have a price (built in, or `[prices."MODEL"]`
 * in the config), else no cost is ever reported and the budget cannot be kept. Checked before anything
 * is sent.
 */
async function checkBudgetPriced(model: string | undefined, vars: Record<string, string>): Promise<void> {
  const cfg = await loadConfig({ cwd: process.cwd() }, vars, readFileOrUndefined);
  const id = model ?? cfg.model;
  if (priceOf(id, cfg.prices)) return;
  throw new UsageError(
    `--max-budget-usd cannot be kept: the built-in agent has no price for model ${id}; add [prices.${JSON.stringify(id)}] (input, output, cache_write, cache_read in USD per million tokens) to ${cfg.paths.configFile}`,
  );
}

function nonEmpty(flag: string, raw: string | undefined): string | undefined {
  if (raw !== undefined && raw.trim() === "") throw new UsageError(`--${flag} must not be empty`);
  return raw;
}

/** session/new `_meta`: a string replaces the system prompt, `{append}` adds to it. */
function sessionMeta(flags: PromptFlags): Record<string, unknown> | undefined {
  const replace = nonEmpty("system-prompt", flags.systemPrompt);
  const append = nonEmpty("append-system-prompt", flags.appendSystemPrompt);
  if (replace !== undefined && append !== undefined) throw new UsageError("--system-prompt and --append-system-prompt exclude each other: give one");
  if (replace !== undefined) return { systemPrompt: replace };
  if (append !== undefined) return { systemPrompt: { append } };
  return undefined;
}

/** --resume ID / --continue: one of them, or neither. */
function resumeWanted(flags: PromptFlags): ResumeWanted | undefined {
  const id = nonEmpty("resume", flags.resume);
  if (id !== undefined && flags.continue) throw new UsageError("--resume and --continue exclude each other: give one");
  if (id !== undefined) return { kind: "id", id };
  return flags.continue ? { kind: "newest" } : undefined;
}

/** --output-schema FILE, read and compiled now: a missing file or a bad schema is exit 2 before any agent starts. */
async function outputSchema(raw: string | undefined, limits: Limits): Promise<OutputSchema | undefined> {
  const maxBytes = limits.MAX_PROMPT_BYTES;
  if (raw === undefined) return undefined;
  if (raw === "") throw new UsageError("--output-schema needs a file name");
  let text: string;
  try {
    const path = resolve(raw);
    // The schema is quoted in the prompt: the prompt's bound applies.
    if (statSync(path).size > maxBytes) throw new UsageError(`--output-schema ${raw}: the file is over ${formatBytes(maxBytes)} (TENDRIL_MAX_PROMPT_BYTES)`);
    text = readFileSync(path, "utf8");
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--output-schema ${raw}: cannot read the file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  // The schema validator (~0.6 ms to load) loads only for a run that asks for a schema.
  const { loadOutputSchema, SchemaFileError } = await import("../../core/acp-client/output-schema.ts");
  try {
    return await loadOutputSchema(text, `--output-schema ${raw}`, limits);
  } catch (err) {
    if (err instanceof SchemaFileError) throw new UsageError(err.message);
    throw err;
  }
}

/** -o FILE, created (truncated) now so a bad path is a usage error before the agent starts. */
function openOutputFile(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (raw === "") throw new UsageError("-o needs a file name");
  try {
    return openSync(resolve(raw), "w");
  } catch (err) {
    throw new UsageError(`-o ${raw}: cannot write the file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function workspace(raw: string | undefined): string {
  const dir = resolve(raw ?? process.cwd());
  let ok = false;
  try {
    ok = statSync(dir).isDirectory();
  } catch {
    // reported below
  }
  if (!ok) throw new UsageError(`--cwd must be an existing directory, got ${dir}`);
  return dir;
}

async function readPrompt(arg: string, maxBytes: number): Promise<string> {
  let text = arg;
  if (arg === "-") {
    const parts: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) throw new UsageError(`the prompt on stdin is over ${formatBytes(maxBytes)} (TENDRIL_MAX_PROMPT_BYTES)`);
      parts.push(chunk as Buffer);
    }
    text = Buffer.concat(parts).toString("utf8");
  } else if (Buffer.byteLength(text) > maxBytes) {
    throw new UsageError(`the prompt is over ${formatBytes(maxBytes)} (TENDRIL_MAX_PROMPT_BYTES)`);
  }
  if (text.trim() === "") {
    throw new UsageError(arg === "-" ? "the prompt on stdin is empty" : 'the prompt is empty; pass text or "-" for stdin');
  }
  return text;
}


interface Setup {
  limits: Limits;
  timeoutS?: number;
  cwd: string;
  policy: ApprovalPolicy;
  agent: AgentSpawn;
  mcpServers: McpStdioServer[];
  prompt: string;
  maxTurns?: number;
  maxBudgetUsd?: number;
  settings: { model?: string; mode?: string };
  meta?: Record<string, unknown>;
  resume?: ResumeWanted;
  schema?: OutputSchema;
  /** -o FILE's descriptor, open for writing. */
  outFd?: number;
}

function agentSpawn(flag: string | undefined, vars: Record<string, string>, cl: CommandLineModule, selfCmd: SelfCommand): AgentSpawn {
  // The agent runs where `tendril prompt` runs (relative paths in --agent mean what the user typed);
  // the session's workspace is --cwd, sent in session/new.
  if (flag === undefined) return { command: selfCmd.command, args: [...selfCmd.args, "agent"], env: vars, cwd: process.cwd() };
  const cmd = cl.parseCommandLine(flag);
  const env = inheritedEnv(vars, cmd.env);
  const path = cl.resolveCommand(cmd.command, env.PATH ?? "", process.cwd());
  if (!path) throw new UsageError(`agent command not found: ${cmd.command} (--agent runs without a shell; check PATH or give a path)`);
  return { command: path, args: cmd.args, env, cwd: process.cwd() };
}

function mcpServer(spec: string, vars: Record<string, string>, cl: CommandLineModule): McpStdioServer {
  const eq = spec.indexOf("=");
  const name = eq > 0 ? spec.slice(0, eq) : "";
  if (!/^[A-Za-z0-9_-]+$/.test(name)) {
    throw new UsageError(`--mcp must be NAME=CMD with NAME of letters, digits, _ or -, got ${JSON.stringify(spec)}`);
  }
  const cmd = cl.parseCommandLine(spec.slice(eq + 1));
  const path = cl.resolveCommand(cmd.command, cmd.env.PATH ?? vars.PATH ?? "", process.cwd());
  if (!path) throw new UsageError(`--mcp ${name}: command not found: ${cmd.command} (check PATH or give a path)`);
  return { name, command: path, args: cmd.args, env: cmd.env };
}

/** Every flag, file and the prompt checked before anything starts; problems are UsageErrors (exit 2). */
async function resolveSetup(promptArg: string, flags: PromptFlags, vars: Record<string, string>): Promise<Setup> {
  try {
    const limits = loadLimits(vars);
    setKillLimits(limits);
    const timeoutS = parseTimeout(flags.timeout);
    const maxTurns = parseMaxTurns(flags.maxTurns);
    const maxBudgetUsd = parseBudget(flags.maxBudgetUsd);
    checkPersistence(flags);
    const settings = { model: nonEmpty("model", flags.model), mode: nonEmpty("mode", flags.mode) };
    if (maxBudgetUsd !== undefined && flags.agent === undefined) await checkBudgetPriced(settings.model, vars);
    const meta = sessionMeta(flags);
    const resume = resumeWanted(flags);
    const cwd = workspace(flags.cwd);
    const policy = await parseApprovalPolicy(flags.approve, readFileOrUndefined);
    const agent = agentSpawn(flags.agent, vars, cl, selfCommand());
    const mcpServers = (flags.mcp ?? []).map((spec) => mcpServer(spec, vars, cl));
    const schema = await outputSchema(flags.outputSchema, limits);
    const prompt = await readPrompt(promptArg, limits.MAX_PROMPT_BYTES);
    const outFd = openOutputFile(flags.outputFile);
    return { limits, timeoutS, cwd, policy, agent, mcpServers, prompt, maxTurns, maxBudgetUsd, settings, meta, resume, schema, outFd };
  } catch (err) {
    if (err instanceof LimitError || err instanceof ConfigError || err instanceof cl.CommandLineError) {
      throw new UsageError(err.message);
    }
    throw err;
  }
}

async function runPromptMode(promptArg: string, flags: PromptFlags): Promise<number> {
  const vars = processEnv();
  setLogScope("tendril prompt");
  if (vars.TENDRIL_LOG && isLogLevel(vars.TENDRIL_LOG)) setLogLevel(vars.TENDRIL_LOG);
  if (flags.sandbox !== undefined && flags.agent !== undefined) {
    throw new UsageError("--sandbox confines the built-in agent only: with --agent, use that agent's own sandbox setting");
  }
  const setup = await resolveSetup(promptArg, flags, vars);
  try {
    return await runWithSetup(setup, flags, vars);
  } finally {
    if (setup.outFd !== undefined) closeSync(setup.outFd);
  }
}

async function runWithSetup(setup: Setup, flags: PromptFlags, vars: Record<string, string>): Promise<number> {
  const [stdout, stderr] = [textOut(1), textOut(2)];
  try {
    return await runWithOutput(setup, flags, vars, stdout, stderr);
  } finally {
    // whatever ends the run, what was written goes out before the process exits
    await Promise.all([stdout.drained(), stderr.drained()]);
  }
}

async function runWithOutput(setup: Setup, flags: PromptFlags, vars: Record<string, string>, stdout: TextOut, stderr: TextOut): Promise<number> {
  const errIsTty = isTerminal(2);
  const output = createPromptOutput(
    flags.output,
    {
      out: (s) => stdout.write(s),
      err: (s) => stderr.write(s),
      errIsTty,
      outIsTty: isTerminal(1),
      color: errIsTty && !vars.NO_COLOR,
    },
    { timeoutS: setup.timeoutS, schema: setup.schema !== undefined },
  );
  // Without --agent, `tendril agent` runs inside this process: one process start per CI step, not two.
  const inProcess = flags.agent === undefined ? await import("../compose/prompt-agent.ts") : undefined;
  let prepared: Awaited<ReturnType<NonNullable<typeof inProcess>["prepareInProcessAgent"]>> | undefined;
  try {
    prepared = await inProcess?.prepareInProcessAgent({ sandbox: flags.sandbox });
  } catch (err) {
    if (inProcess?.isSetupError(err)) throw new UsageError(err.message);
    throw err;
  }
  const interrupt = new AbortController();
  // Kept for the whole run: a second Ctrl-C must not kill this process before the agent's group is dead
  // (the agent leads its own group, so the terminal's signal never reaches it). Shutdown is bounded.
  // SIGHUP (the terminal closed) and SIGTERM take the same way out, each with its own exit code.
  const signals = watchStopSignals();
  let stoppedBy: StopSignal | undefined;
  void signals.stopped.then((sig) => {
    stoppedBy = sig;
    interrupt.abort();
  });
  try {
    const result = await runPrompt({
      agent:
        inProcess && prepared
          ? { ...setup.agent, start: () => inProcess.startInProcessAgent((text) => output.agentStderr(text), prepared, { model: flags.model, persist: flags.sessionPersistence !== false }) }
          : setup.agent,
      cwd: setup.cwd,
      mcpServers: setup.mcpServers,
      prompt: setup.prompt,
      timeoutMs: setup.timeoutS !== undefined ? setup.timeoutS * 1000 : undefined,
      maxTurns: setup.maxTurns,
      maxBudgetUsd: setup.maxBudgetUsd,
      settings: setup.settings,
      sessionMeta: setup.meta,
      resume: setup.resume,
      outputSchema: setup.schema,
      onSchemaRetry: (problems) => output.schemaRetry(problems),
      signal: interrupt.signal,
      maxLineBytes: setup.limits.MAX_LINE_BYTES,
      waits: {
        shutdownMs: setup.limits.SHUTDOWN_DEADLINE_S * 1000,
        cancelMs: setup.limits.CANCEL_WAIT_S * 1000,
        interruptMs: setup.limits.INTERRUPT_WAIT_S * 1000,
      },
      clientVersion: VERSION,
      onUpdate: (u, call) => output.update(u, call),
      decide: (call, options) => {
        const d = decidePermission(setup.policy, call, options, setup.cwd);
        output.permission(call, d.allowed, d.reason);
        return d.answer;
      },
      onStderr: (text) => output.agentStderr(text),
    });
    const code = output.finish(result);
    // -o FILE: the answer's text as the agent gave it, whatever the output format (a failed run keeps
    // what was said before it failed); with --output-schema, the document alone, or nothing.
    if (setup.outFd !== undefined && output.answer !== "") writeSync(setup.outFd, output.answer.endsWith("\n") ? output.answer : `${output.answer}\n`);
    return result.outcome.kind === "interrupted" && stoppedBy !== undefined ? signalExitCode(stoppedBy) : code;
  } finally {
    signals.dispose();
  }
}
