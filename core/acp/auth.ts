// Owns the agent's side of ACP authentication: the methods `initialize` advertises (`api-key`, an
// `agent` method, always; `login`, a `terminal` method, only for a client that can run it), the
// auth-required answer (-32000) for sessions without a usable key, `authenticate` and `logout`.
// Does not read or write the credentials file itself (core/credentials.ts, through AuthHost).
import type { ProviderName } from "../llm/provider-names.ts";
import { AcpError, INVALID_PARAMS } from "./acp-error.ts";
import { AUTH_REQUIRED } from "../wire/jsonrpc.ts";

/** ACP's auth_required error code (core/wire/jsonrpc.ts holds every code). */
export { AUTH_REQUIRED };

export const API_KEY_METHOD = "api-key";
export const LOGIN_METHOD = "login";
/** What a user runs once to store a key (the terminal method runs the agent with `args`). */
export const LOGIN_COMMAND = "tendril agent login";

export interface AuthHost {
  provider: ProviderName;
  /** The environment variable that holds the provider's key (undefined: none needed). */
  keyVar?: string;
  /** Whether a key (or a keyless endpoint) is usable now; throws an Error naming a bad credentials file. */
  usable(): boolean;
  /** Removes the stored key of the agent's provider; true when there was one. */
  forget(): boolean;
}

export type AdvertisedMethod =
  | { id: string; name: string; description: string }
  | { type: "terminal"; id: string; name: string; description: string; args: string[] };

export class AgentAuth {
  constructor(private readonly host: AuthHost) {}

  /** initialize's authMethods. */
  methods(terminalAuth: boolean): AdvertisedMethod[] {
    const key = this.host.keyVar ? `$${this.host.keyVar}` : "the environment";
    const out: AdvertisedMethod[] = [
      { id: API_KEY_METHOD, name: "API key", description: `Use the ${this.host.provider} API key from ${key} or from ${LOGIN_COMMAND} (credentials.toml)` },
    ];
    if (terminalAuth) {
      out.push({ type: "terminal", id: LOGIN_METHOD, name: "Log in", description: "Enter a provider and API key in a terminal; stored privately for later sessions", args: ["login"] });
    }
    return out;
  }

  /** Throws auth_required naming the methods and the command when no usable key exists. */
  require(terminalAuth: boolean): void {
    const problem = this.#problem();
    if (problem === undefined) return;
    const names = this.methods(terminalAuth).map((m) => `${m.id} (${"type" in m ? m.type : "agent"})`).join(", ");
    throw new AcpError(AUTH_REQUIRED, `Authentication required: ${problem}. Methods: ${names}; or run \`${LOGIN_COMMAND}\` once`, { authMethods: this.methods(terminalAuth).map((m) => m.id) });
  }

  /** authenticate: `api-key` succeeds when a usable key exists; `login` is never passed here. */
  authenticate(methodId: string): Record<string, never> {
    if (methodId === LOGIN_METHOD) {
      throw new AcpError(INVALID_PARAMS, `${LOGIN_METHOD} is a terminal method: run \`${LOGIN_COMMAND}\` (it is never passed to authenticate)`);
    }
    if (methodId !== API_KEY_METHOD) throw new AcpError(INVALID_PARAMS, `unknown auth method ${JSON.stringify(methodId)} (methods: ${API_KEY_METHOD}, ${LOGIN_METHOD})`);
    const problem = this.#problem();
    if (problem !== undefined) throw new AcpError(AUTH_REQUIRED, `${problem}; run \`${LOGIN_COMMAND}\` once (or set the key in the agent's environment), then authenticate again`);
    return {};
  }

  /** logout: the stored key of the agent's provider is removed; an environment key cannot be. */
  logout(): Record<string, never> {
    this.host.forget();
    return {};
  }

  #problem(): string | undefined {
    try {
      if (this.host.usable()) return undefined;
    } catch (err) {
      return (err as Error).message;
    }
    const env = this.host.keyVar ? `${this.host.keyVar} is not set` : "no key is configured";
    return `no API key for ${this.host.provider} (${env} and credentials.toml holds none)`;
  }
}
