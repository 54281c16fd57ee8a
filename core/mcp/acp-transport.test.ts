import { expect, test } from "bun:test";
import { AcpMcpRelay, AcpMcpTransport } from "./acp-transport.ts";

test("MCP requests travel as mcp/message; {result}, {error} and outer failures come back as MCP answers", async () => {
  const sent: [string, any][] = [];
  const answers: unknown[] = [{ result: { tools: [] } }, { error: { code: -32602, message: "bad" } }];
  const relay = new AcpMcpRelay();
  relay.bind({
    request: async (method, params) => {
      sent.push([method, params]);
      const a = answers.shift();
      if (a === undefined) throw { code: -33001, message: "server unavailable" };
      return a;
    },
    notify: (method, params) => void sent.push([method, params]),
  });
  const t = new AcpMcpTransport("srv-1", relay);
  const got: any[] = [];
  t.onmessage = (m) => void got.push(m);
  await t.start();
  await t.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  await t.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x" } });
  await t.send({ jsonrpc: "2.0", id: 3, method: "ping" });
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await Bun.sleep(0);
  expect(sent[0]).toEqual(["mcp/message", { serverId: "srv-1", requestId: 1, method: "tools/list", params: null }]);
  expect(sent[3]).toEqual(["mcp/message", { serverId: "srv-1", method: "notifications/initialized", params: null }]);
  expect(got).toEqual([
    { jsonrpc: "2.0", id: 1, result: { tools: [] } },
    { jsonrpc: "2.0", id: 2, error: { code: -32602, message: "bad" } },
    { jsonrpc: "2.0", id: 3, error: { code: -33001, message: "server unavailable", data: undefined } },
  ]);
  // a provider notification reaches the transports of its server only
  relay.deliver({ serverId: "srv-1", requestId: 9, method: "notifications/progress", params: { progress: 1 } });
  relay.deliver({ serverId: "other", method: "notifications/progress" });
  expect(got.at(-1)).toEqual({ jsonrpc: "2.0", method: "notifications/progress", params: { progress: 1 } });
  expect(got).toHaveLength(4);
  await t.close();
  relay.deliver({ serverId: "srv-1", method: "notifications/progress" });
  expect(got).toHaveLength(4);
});
