// Unit tests of the todo list and its hooks: rendering, caps, silent-removal flag, _Stop, _PostCompact.
import { expect, test } from "bun:test";
import { TodoList } from "./todo.ts";

const limits = { maxItems: 3, maxItemChars: 20 };

test("replaces the list and renders it; no items just reads it", () => {
  const todo = new TodoList(limits);
  expect(todo.update({}).text).toBe("The todo list is empty.");
  const r = todo.update({ items: [{ text: "write tests", done: true }, { text: "fix bug", done: false }] });
  expect(r.text).toBe("Todo list (1 open, 1 done):\n[x] write tests\n[ ] fix bug");
  expect(todo.update({}).text).toBe(r.text);
  expect(r.structured).toEqual({ items: [{ text: "write tests", done: true }, { text: "fix bug", done: false }] });
});

test("caps are errors that name the limit, and leave the list as it was", () => {
  const todo = new TodoList(limits);
  todo.update({ items: [{ text: "keep", done: false }] });
  const many = todo.update({ items: Array.from({ length: 4 }, (_, i) => ({ text: `t${i}`, done: false })) });
  expect(many.isError).toBe(true);
  expect(many.text).toContain("TODO_ITEMS (3)");
  const long = todo.update({ items: [{ text: "x".repeat(21), done: false }] });
  expect(long.isError).toBe(true);
  expect(long.text).toContain("TODO_ITEM_CHARS (20)");
  expect(todo.update({ items: [{ text: "  ", done: false }] }).isError).toBe(true);
  expect(todo.update({}).text).toContain("[ ] keep");
});

test("open items dropped without being done are flagged; done or completed ones are not", () => {
  const todo = new TodoList(limits);
  todo.update({ items: [{ text: "a", done: false }, { text: "b", done: false }, { text: "c", done: true }] });
  const r = todo.update({ items: [{ text: "a", done: true }] });
  expect(r.text).toContain("1 open item was removed without being marked done:\n[ ] b");
  expect(r.text).not.toContain("[ ] c");
  expect(todo.update({ items: [] }).text).not.toContain("removed without");
});

test("_Stop objects while items are open and is empty otherwise; _PostCompact returns the list", () => {
  const todo = new TodoList(limits);
  expect(todo.stopObjection()).toBe("");
  expect(todo.afterCompaction()).toBe("");
  todo.update({ items: [{ text: "ship it", done: false }, { text: "plan", done: true }] });
  const objection = todo.stopObjection();
  expect(objection).toContain("1 open todo item");
  expect(objection).toContain("[ ] ship it");
  expect(objection).not.toContain("plan");
  expect(todo.afterCompaction()).toContain("[ ] ship it\n[x] plan");
  todo.update({ items: [{ text: "ship it", done: true }, { text: "plan", done: true }] });
  expect(todo.stopObjection()).toBe("");
});
