// Owns what the release reads from the repository before it builds: the version and description in
// package.json, whether the work tree is clean (a release is of a commit), and the commit's time,
// which stamps every archive entry so that one commit gives one archive.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { valid } from "semver";
import { ReleaseError } from "./release-error.ts";
import { runCommand } from "./run-command.ts";

export interface SourceState {
  version: string;
  description: string;
  license: string;
  commit: string;
  /** The commit's committer time (or SOURCE_DATE_EPOCH when set). */
  time: Date;
}

export async function readSourceState(root: string, allowDirty: boolean): Promise<SourceState> {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown; description?: unknown; license?: unknown };
  if (typeof pkg.version !== "string" || valid(pkg.version) === null) throw new ReleaseError(`package.json's version ${JSON.stringify(pkg.version)} is not a semantic version (x.y.z)`);
  if (typeof pkg.license !== "string") throw new ReleaseError("package.json has no license field; the archives and packages carry it");
  const git = (args: string[]) => runCommand("git", args, { cwd: root, timeoutMs: 30_000 });
  const head = await git(["log", "-1", "--format=%H %ct"]);
  const [commit, seconds] = head.stdout.trim().split(" ");
  if (head.code !== 0 || commit === undefined || seconds === undefined) {
    throw new ReleaseError(`${root} is not a git work tree with a commit (git log: ${head.stderr.trim() || head.code}); a release is made from a commit`);
  }
  const status = await git(["status", "--porcelain", "--untracked-files=normal"]);
  if (status.code !== 0) throw new ReleaseError(`git status failed: ${status.stderr.trim()}`);
  const changed = status.stdout.split("\n").filter((l) => l.trim() !== "");
  if (changed.length > 0 && !allowDirty) {
    const shown = changed.slice(0, 5).map((l) => `  ${l}`).join("\n");
    throw new ReleaseError(
      `the work tree has uncommitted changes, so the release would not be the commit ${commit.slice(0, 12)}:\n${shown}${changed.length > 5 ? `\n  … ${changed.length - 5} more` : ""}\n` +
        "  Commit or stash them, or pass --allow-dirty to release the work tree as it is.",
    );
  }
  const epoch = process.env.SOURCE_DATE_EPOCH;
  if (epoch !== undefined && !/^\d+$/.test(epoch)) throw new ReleaseError(`SOURCE_DATE_EPOCH=${epoch} is not a whole number of seconds`);
  return {
    version: pkg.version,
    description: typeof pkg.description === "string" ? pkg.description : "Tendril",
    license: pkg.license,
    commit,
    time: new Date(Number(epoch ?? seconds) * 1000),
  };
}
