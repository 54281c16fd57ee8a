// Owns recording (TENDRIL_RECORD=FILE): wraps a provider and appends one JSONL line per LLM exchange,
// in the recorded form replay.ts reads, to a private (0600) file. Does not change what the wrapped
// provider emits.
import { appendFileSync, closeSync } from "node:fs";
import { openPrivateFile } from "../private-file.ts";
import { log } from "../log.ts";
import type { LlmEvent, LlmProvider, LlmRequest } from "./types.ts";

export interface RecordedExchange {
  v: 1;
  request: Pick<LlmRequest, "model" | "system" | "messages"> & { tools: { name: string; inputSchema: Record<string, unknown> }[] };
  events: LlmEvent[];
}

export function exchangeLine(req: LlmRequest, events: LlmEvent[]): string {
  const rec: RecordedExchange = {
    v: 1,
    request: {
      model: req.model,
      system: req.system,
      messages: req.messages,
      tools: req.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema })),
    },
    events,
  };
  return JSON.stringify(rec) + "\n";
}

/** Appends one line to a private (0600) file: a recording holds whole conversations. */
export function appendPrivate(file: string, line: string): void {
  const fd = openPrivateFile(file, "a");
  try {
    appendFileSync(fd, line);
  } finally {
    closeSync(fd);
  }
}

/**
 * Appends each exchange to `file` once it ends (one synchronous append per line keeps lines whole and
 * in call order). A consumer that stops reading early is recorded as an aborted exchange.
 */
export function withRecording(inner: LlmProvider, file: string, append: (file: string, line: string) => void = appendPrivate): LlmProvider {
  let warned = false;
  return {
    name: inner.name,
    ...(inner.thoughtLevels ? { thoughtLevels: true } : {}),
    ...(inner.listModels ? { listModels: (signal: AbortSignal) => inner.listModels!(signal) } : {}),
    async *stream(req: LlmRequest): AsyncGenerator<LlmEvent> {
      // The caller's history array grows after the response; record it as it was when asked.
      const asked: LlmRequest = { ...req, messages: structuredClone(req.messages) };
      const events: LlmEvent[] = [];
      try {
        for await (const ev of inner.stream(req)) {
          events.push(ev);
          yield ev;
        }
      } finally {
        const last = events.at(-1)?.type;
        if (last !== "done" && last !== "error") {
          events.push({ type: "error", error: { kind: "aborted", message: "response not read to the end" } });
        }
        try {
          append(file, exchangeLine(asked, events));
        } catch (err) {
          // A broken recording must not break the run; say so once.
          if (!warned) log.warn("cannot write LLM recording", { file, err });
          warned = true;
        }
      }
    },
  };
}
