import { expect, test } from "bun:test";
import { AcpDeclarations } from "./acp-declarations.ts";

const decl = (id: string) => ({ flavour: "acp" as const, name: id, id });

test("a declaration lives while a session holds it; a failed load keeps the session's, a failed new holds none", () => {
  const d = new AcpDeclarations();
  const created = d.track("session/new", { cwd: "/" }, [decl("a")])!;
  expect(d.get("a")).toBeDefined(); // held while the agent starts its bridge, before the answer
  created.answer({ sessionId: "S" });
  d.track("session/load", { sessionId: "S" }, [decl("b")])!.failed();
  expect([d.get("a")?.id, d.get("b")]).toEqual(["a", undefined]);
  d.track("session/new", {}, [decl("c")])!.failed();
  expect(d.get("c")).toBeUndefined();
  // A resume declaring nothing bridged still replaces what the session held.
  d.track("session/resume", { sessionId: "S" }, [])!.answer({});
  expect(d.size).toBe(0);
  // Nothing to track: no hooks, the request passes as it is.
  expect(d.track("session/new", {}, [])).toBeUndefined();
  expect(d.track("session/close", { sessionId: "S" }, [])).toBeUndefined();
});

test("regression: a deleted session held its declarations until a close that never came, and a fork's were never held; delete releases, fork holds for the new session", () => {
  const d = new AcpDeclarations();
  d.track("session/new", { cwd: "/" }, [decl("a")])!.answer({ sessionId: "S" });
  d.track("session/fork", { sessionId: "S", cwd: "/" }, [decl("f")])!.answer({ sessionId: "F" });
  expect([d.get("a")?.id, d.get("f")?.id]).toEqual(["a", "f"]);
  d.track("session/delete", { sessionId: "S" }, [])!.answer({});
  expect([d.get("a"), d.get("f")?.id]).toEqual([undefined, "f"]); // the fork is a session of its own
  d.track("session/delete", { sessionId: "F" }, [])!.answer({});
  expect(d.size).toBe(0);
});
