import { expect, test } from "bun:test";
import { ClientRequests, ConnectionRoutes } from "./acp-wire.ts";

/** A connection's MCP client that answers every request with `{from: name}`. */
function client(name: string): ClientRequests {
  const asked: ClientRequests = new ClientRequests((m) => {
    if ("id" in m) queueMicrotask(() => asked.answered({ id: m.id, result: { from: name } }));
  });
  return asked;
}

test("one connection router for both relays: a provider's request reaches the connection it names, or is -32602 naming whose connections", async () => {
  const routes = new ConnectionRoutes();
  const unserveA = routes.serve("a", client("A"));
  routes.serve("b", client("B"));
  expect(await routes.route({ connectionId: "b", method: "roots/list" }, "on this agent")).toEqual({ result: { from: "B" } });
  unserveA();
  expect(await routes.route({ connectionId: "a", method: "ping" }, "on this agent")).toEqual({ error: { code: -32602, message: 'mcp/message: no open MCP-over-ACP connection "a" on this agent' } });
  expect(await routes.route({ serverId: "s", method: "ping" }, "to a bridged MCP client")).toMatchObject({ error: { code: -32602, message: expect.stringContaining("connectionId") } });
});

test("one connection router: a connection id served again is not dropped when its earlier holder stops", async () => {
  const routes = new ConnectionRoutes();
  const unserveOld = routes.serve("c", client("old"));
  routes.serve("c", client("new"));
  unserveOld();
  expect(await routes.route({ connectionId: "c", method: "ping" }, "on this agent")).toEqual({ result: { from: "new" } });
});

test("one connection router: a provider's notification reaches the listeners of the key it names, and says when none heard it", () => {
  const routes = new ConnectionRoutes();
  const heard: unknown[] = [];
  const unlisten = routes.listen("conn-1", (m) => heard.push(m));
  expect(routes.notify({ connectionId: "conn-1", method: "notifications/tools/list_changed" })).toBe(true);
  expect(routes.notify({ serverId: "srv", method: "notifications/message", params: { level: "info" } })).toBe(false);
  expect(routes.notify({ connectionId: "conn-1" })).toBe(false); // no inner method: nothing to deliver
  unlisten();
  expect(routes.notify({ connectionId: "conn-1", method: "ping" })).toBe(false);
  expect(heard).toEqual([{ jsonrpc: "2.0", method: "notifications/tools/list_changed" }]);
});
