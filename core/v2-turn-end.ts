// Owns recognizing the end of an ACP v2 turn: a v2 prompt is only acknowledged, and its turn ends with
// its session's `state_update` to `idle` (with the stop reason, or the error, and usage). The prompt's
// "answer" in v2: the v2 link, the conductor's router and the proxy library recognize it here; what each
// makes of the stop reason is its own.
import { isObject } from "./wire/jsonrpc.ts";

/** `update` when it ends its session's turn (a `state_update` to `idle`); undefined for any other. */
export function turnEnd(update: unknown): Record<string, unknown> | undefined {
  return isObject(update) && update.sessionUpdate === "state_update" && update.state === "idle" ? update : undefined;
}
