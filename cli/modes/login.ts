// Owns `tendril agent login` and `tendril agent logout`: on a terminal, prompts for the provider, an
// optional base URL and the key (not echoed); otherwise reads `--provider`, `--base-url` and the key
// from one stdin line, so scripts and an editor's terminal auth both work. Exit 0 on success, 2 on a
// bad input or credentials file, 130 on Ctrl-C. The file itself is core/credentials.ts's.
import type { Command } from "commander";
import { existsSync, rmSync } from "node:fs";
import { resolvePaths } from "../../core/config.ts";
import { credentialsPath, isKeyedProvider, KEYED_PROVIDERS, removeKey, storeKey } from "../../core/credentials.ts";
import { loadLimits } from "../../core/limits.ts";
import type { ExitBox } from "../process/exit-box.ts";

interface LoginFlags {
  provider?: string;
  baseUrl?: string;
}

class LoginError extends Error {
  override name = "LoginError";
}
class Interrupted extends Error {}

/** Reads stdin up to the first newline (or EOF), at most `max` bytes. */
async function stdinLine(max: number): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    text += chunk.toString("utf8");
    const nl = text.indexOf("\n");
    if (nl >= 0) return text.slice(0, nl);
    if (Buffer.byteLength(text) > max) throw new LoginError(`the key on stdin is over MAX_API_KEY_BYTES (${max} bytes)`);
  }
  return text;
}

/** Typed ahead of the current question (a paste of several lines): read by the next one. */
let typedAhead = "";

/** Asks one question on the terminal; `hidden` reads without echo (raw mode), backspace works. */
function ask(question: string, hidden: boolean, max: number): Promise<string> {
  const stdin = process.stdin;
  // Echo goes off before the question shows: nothing typed in answer to it is ever echoed.
  if (hidden) stdin.setRawMode(true);
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let answer = "";
    let finished = false;
    const done = (err?: Error) => {
      finished = true;
      stdin.off("data", onData);
      if (hidden) stdin.setRawMode(false);
      stdin.pause();
      if (hidden) process.stderr.write("\n"); // the terminal echoed nothing, not even the Enter
      if (err) reject(err);
      else resolve(answer);
    };
    const take = (text: string) => {
      const chars = [...text];
      for (let i = 0; i < chars.length && !finished; i++) {
        const ch = chars[i]!;
        const rest = () => (typedAhead = chars.slice(i + 1).join("").replace(/^\n/, ""));
        if (ch === "\r" || ch === "\n") (rest(), done());
        else if (ch === "\u0003") done(new Interrupted());
        else if (ch === "\u0004") done(answer === "" ? new LoginError("no answer (end of input)") : undefined);
        else {
          if (ch === "\u007f" || ch === "\b") answer = answer.slice(0, -1);
          else if (ch >= " ") answer += ch;
          if (Buffer.byteLength(answer) > max) done(new LoginError(`the answer is over MAX_API_KEY_BYTES (${max} bytes)`));
        }
      }
    };
    const onData = (chunk: Buffer) => take(chunk.toString("utf8"));
    const ahead = typedAhead;
    typedAhead = "";
    take(ahead);
    if (finished) return;
    stdin.on("data", onData);
    stdin.resume();
  });
}

function checkKey(key: string): string {
  const k = key.trim();
  if (k === "") throw new LoginError("no key given (an empty line)");
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(k)) throw new LoginError("the key holds spaces or control characters; paste the key alone");
  return k;
}

function checkBaseUrl(raw: string | undefined): string | undefined {
  const u = raw?.trim();
  if (!u) return undefined;
  if (!/^https?:\/\/[^\s]+$/.test(u)) throw new LoginError(`--base-url must be an http(s) URL, got ${JSON.stringify(u)}`);
  return u;
}

async function login(flags: LoginFlags): Promise<string> {
  const max = loadLimits(process.env).MAX_API_KEY_BYTES;
  const file = credentialsPath(resolvePaths(process.env).configDir);
  const tty = process.stdin.isTTY === true;
  const envProvider = process.env.TENDRIL_PROVIDER;
  let provider = flags.provider;
  let baseUrl = flags.baseUrl;
  let key: string;
  if (tty) {
    const fallback = provider ?? (envProvider && isKeyedProvider(envProvider) ? envProvider : "anthropic");
    if (provider === undefined) provider = (await ask(`Provider (${KEYED_PROVIDERS.join(" or ")}) [${fallback}]: `, false, max)).trim() || fallback;
    if (!isKeyedProvider(provider)) throw new LoginError(`provider must be ${KEYED_PROVIDERS.join(" or ")}, got ${JSON.stringify(provider)}`);
    if (baseUrl === undefined) baseUrl = await ask("Base URL (empty: the provider's own): ", false, max);
    key = await ask(`API key for ${provider} (not shown): `, true, max);
  } else {
    if (provider === undefined) throw new LoginError("--provider is required when stdin is not a terminal (e.g. echo \"$KEY\" | tendril agent login --provider anthropic)");
    key = await stdinLine(max);
  }
  if (!isKeyedProvider(provider)) throw new LoginError(`--provider must be ${KEYED_PROVIDERS.join(" or ")}, got ${JSON.stringify(provider)}`);
  const url = checkBaseUrl(baseUrl);
  storeKey(file, provider, { api_key: checkKey(key), ...(url ? { base_url: url } : {}) });
  const notes = [`stored the ${provider} key in ${file} (mode 0600)`];
  const envVar = provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  if (process.env[envVar]) notes.push(`note: ${envVar} is set and wins over the stored key`);
  if (envProvider && envProvider !== provider) notes.push(`note: TENDRIL_PROVIDER=${envProvider}; the agent uses that provider`);
  return notes.join("\n");
}

async function logout(flags: LoginFlags): Promise<string> {
  const file = credentialsPath(resolvePaths(process.env).configDir);
  if (flags.provider === undefined) {
    // Every key: the file goes, unread, so a file with bad permissions or syntax can be removed too.
    const had = existsSync(file);
    rmSync(file, { force: true });
    return had ? `removed ${file}` : `no stored keys (${file} does not exist)`;
  }
  if (!isKeyedProvider(flags.provider)) throw new LoginError(`--provider must be ${KEYED_PROVIDERS.join(" or ")}, got ${JSON.stringify(flags.provider)}`);
  return removeKey(file, flags.provider) ? `removed the ${flags.provider} key from ${file}` : `no stored ${flags.provider} key in ${file}`;
}

async function run(what: "login" | "logout", flags: LoginFlags): Promise<number> {
  try {
    process.stderr.write(`${await (what === "login" ? login(flags) : logout(flags))}\n`);
    return 0;
  } catch (err) {
    if (err instanceof Interrupted) return 130;
    const e = err as Error;
    if (e.name === "LoginError" || e.name === "CredentialsError") {
      process.stderr.write(`tendril agent ${what}: ${e.message}\n`);
      return 2;
    }
    throw err;
  }
}

export function describeLogin(agent: Command, exit: ExitBox): void {
  agent
    .command("login")
    .description("store an API key in $XDG_CONFIG_HOME/tendril/credentials.toml (mode 0600); prompts on a terminal, else reads the key from stdin")
    .option("--provider <name>", "anthropic | openai (required when stdin is not a terminal)")
    .option("--base-url <url>", "the provider's endpoint, stored with the key")
    // `tendril agent` has --provider too: the value lands on whichever command commander gives it to.
    .action(async (_flags: LoginFlags, cmd: Command) => {
      exit.code = await run("login", cmd.optsWithGlobals<LoginFlags>());
    });
  agent
    .command("logout")
    .description("remove stored keys: one provider's with --provider, else the whole credentials file")
    .option("--provider <name>", "anthropic | openai")
    .action(async (_flags: LoginFlags, cmd: Command) => {
      exit.code = await run("logout", cmd.optsWithGlobals<LoginFlags>());
    });
}
