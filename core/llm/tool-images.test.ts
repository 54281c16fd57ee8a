// Images a tool returned reach each provider in the form its API takes.
import { expect, test } from "bun:test";
import type { Message } from "./types.ts";
import { toAnthropicMessages } from "./anthropic.ts";
import { toOpenAiBody } from "./openai.ts";

const history: Message[] = [
  { role: "user", content: [{ type: "text", text: "look" }] },
  { role: "assistant", text: "", toolCalls: [{ id: "c1", name: "t__picture", input: {} }] },
  { role: "tool", results: [{ callId: "c1", content: "a picture", isError: false, images: [{ mimeType: "image/png", data: "AAAA" }] }] },
];

test("anthropic: the image is a block of the tool_result", () => {
  const last = toAnthropicMessages(history).at(-1)!;
  expect(last.content).toEqual([
    {
      type: "tool_result",
      tool_use_id: "c1",
      is_error: false,
      content: [
        { type: "text", text: "a picture" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
      ],
    },
  ]);
});

test("openai: tool messages stay text; the image follows in one user message naming the call", () => {
  const body = toOpenAiBody({ model: "m", system: "", messages: history, tools: [], maxTokens: 10, signal: new AbortController().signal }, true);
  const [tool, user] = body.messages.slice(-2);
  expect(tool).toEqual({ role: "tool", tool_call_id: "c1", content: "a picture" });
  expect(user).toEqual({
    role: "user",
    content: [
      { type: "text", text: "Image returned by tool call c1:" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
    ],
  });
});
