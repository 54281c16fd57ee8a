// Owns a live session's config options as its client sees and changes them: the list session/new, load
// and resume answer, set_mode and set_config_option (checked, applied, recorded, what the client is
// told), which of a saved session's settings still apply, and the sandbox setting's fail-closed notice.
// How each option is shown and checked is config-options.ts's and model-choice.ts's; finding a session
// by id is session-manager.ts's.
import type { SessionConfigOption, SessionUpdate } from "@agentclientprotocol/sdk";
import type { LoadedSession } from "../agent/session-store.ts";
import { THOUGHT_LEVELS, type ThoughtLevel } from "../llm/types.ts";
import { isPermissionMode, modeAtLeastAsStrict, PERMISSION_MODES, type PermissionMode } from "../policy/modes.ts";
import type { Policy } from "../policy/policy.ts";
import { atLeastAsStrict, isSandboxMode, type SandboxMode } from "../sandbox-modes.ts";
import { checkSandboxMode, checkThoughtLevel, MODE_OPTION_ID, modeOption, modeState, SANDBOX_OPTION_ID, sandboxOption, THOUGHT_OPTION_ID, thoughtOption } from "./config-options.ts";
import { AcpError, INVALID_PARAMS } from "./acp-error.ts";
import type { LiveSession } from "./live-session.ts";
import { MODEL_OPTION_ID, type ModelChoices } from "./model-choice.ts";
import { sandboxNotice } from "./notices.ts";
import type { SessionHost } from "./session-host.ts";

export class SessionConfig {
  constructor(
    private readonly host: SessionHost,
    private readonly models: ModelChoices,
    /** Whether `s` is still the live session of its id (a notice for a dropped one is not sent). */
    private readonly isLive: (s: LiveSession) => boolean,
  ) {}

  /**
   * A session's modes and config options, as session/new, load and resume answer: one list, in the
   * order clients show them (mode, model, thought_level where the provider maps it, the dev shell's sandbox).
   */
  async describe(s: { policy: Policy; model: string; thoughtLevel: ThoughtLevel; sandbox?: { mode: SandboxMode } }) {
    const models = await this.models.describe(s.model);
    const configOptions: SessionConfigOption[] = [
      modeOption(s.policy.mode),
      ...models.configOptions,
      ...(this.host.provider.thoughtLevels ? [thoughtOption(s.thoughtLevel)] : []),
      ...(s.sandbox ? [sandboxOption(s.sandbox.mode)] : []),
    ];
    return { modes: modeState(s.policy.mode), configOptions, models: models.models };
  }

  /** A saved session's settings that apply here: its mode when it is known and at least as strict as
   *  the configured one (else the configured one), its model if still offered, its thought level if
   *  known, and its sandbox setting when it confines at least as much as the configured one: a session
   *  never comes back looser than this agent is set (`/mode yolo` does not outlive the session's process). */
  async restored(saved: LoadedSession): Promise<{ mode: PermissionMode; model?: string; thoughtLevel?: ThoughtLevel; sandboxMode?: SandboxMode }> {
    const mode = isPermissionMode(saved.mode) && modeAtLeastAsStrict(saved.mode, this.host.mode) ? saved.mode : this.host.mode;
    const model = saved.model && (await this.models.choices(this.host.model)).includes(saved.model) ? saved.model : undefined;
    const level = saved.options[THOUGHT_OPTION_ID] as ThoughtLevel | undefined;
    const thoughtLevel = level && THOUGHT_LEVELS.includes(level) ? level : undefined;
    const box = saved.options[SANDBOX_OPTION_ID];
    const configured = this.host.sandbox?.mode;
    const sandboxMode = configured && isSandboxMode(box) && atLeastAsStrict(box, configured) ? box : undefined;
    return { mode, model, thoughtLevel, sandboxMode };
  }

  /**
   * session/set_mode and the `mode` config option. Returns what the client is told, whichever path
   * changed it: `current_mode_update` and `config_option_update`.
   */
  async setMode(s: LiveSession, modeId: unknown): Promise<SessionUpdate[]> {
    return (await this.#setMode(s, modeId)).updates;
  }

  async #setMode(s: LiveSession, modeId: unknown): Promise<{ configOptions: SessionConfigOption[]; updates: SessionUpdate[] }> {
    if (!isPermissionMode(modeId)) {
      throw new AcpError(INVALID_PARAMS, `unknown mode: ${JSON.stringify(modeId)} (modes: ${PERMISSION_MODES.join(", ")})`);
    }
    s.policy.setMode(modeId);
    s.recorder?.mode(modeId);
    const { configOptions } = await this.describe(s);
    return {
      configOptions,
      updates: [
        { sessionUpdate: "current_mode_update", currentModeId: modeId },
        { sessionUpdate: "config_option_update", configOptions },
      ],
    };
  }

  /**
   * session/set_config_option (any option offered) and session/set_model: a mode applies to the next
   * tool call, a model to the next LLM request. Answers the config options as they now are, and what
   * the client is told (`config_option_update`, and `current_mode_update` for a mode).
   */
  async setOption(s: LiveSession, configId: string, value: unknown): Promise<{ configOptions: SessionConfigOption[]; updates: SessionUpdate[] }> {
    if (configId === MODE_OPTION_ID) return this.#setMode(s, value);
    const offered = (await this.describe(s)).configOptions.map((o) => o.id);
    const set = offered.includes(configId) ? this.#setters[configId] : undefined;
    if (!set) throw new AcpError(INVALID_PARAMS, `unknown config option ${JSON.stringify(configId)} (options: ${offered.join(", ")})`);
    await set(s, value);
    const { configOptions } = await this.describe(s);
    return { configOptions, updates: [{ sessionUpdate: "config_option_update", configOptions }] };
  }

  /** How each config option but `mode` takes a value (checked: -32602 naming the choices) and records it. */
  readonly #setters: Record<string, (s: LiveSession, value: unknown) => Promise<void>> = {
    [MODEL_OPTION_ID]: async (s, value) => {
      s.model = await this.models.check(value, s.model);
      s.recorder?.model(s.model);
    },
    [THOUGHT_OPTION_ID]: async (s, value) => {
      s.thoughtLevel = checkThoughtLevel(value);
      s.recorder?.option(THOUGHT_OPTION_ID, s.thoughtLevel);
    },
    // Saved with the session; a loaded session gets it back only when it is not looser than the configured one.
    [SANDBOX_OPTION_ID]: async (s, value) => {
      const mode = checkSandboxMode(value);
      if (s.sandbox && s.sandbox.mode !== mode) Object.assign(s.sandbox, { mode, noticed: false }); // the dev server reads this object
      s.recorder?.option(SANDBOX_OPTION_ID, mode);
      this.checkSandbox(s);
    },
  };

  /**
   * Fail closed, said once: when the session's confined sandbox setting cannot work here, a `notice`
   * (to a client that shows them; after the answer that gave it the session) — every command then
   * fails saying why.
   */
  checkSandbox(s: LiveSession): void {
    const sb = s.sandbox;
    if (!sb || sb.noticed || sb.mode === "off" || !s.client?.caps.notices) return;
    const mode = sb.mode;
    void this.host.sandbox!.problem(mode, s.cwd).then((problem) => {
      if (problem === undefined || sb.noticed || sb.mode !== mode) return;
      sb.noticed = true;
      setImmediate(() => {
        if (!this.isLive(s)) return;
        s.client!.notify(s.id, sandboxNotice(mode, problem));
      });
    });
  }
}
