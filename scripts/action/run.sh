#!/usr/bin/env bash
# Owns the GitHub Action's one step (action.yml at the repository root): refuse a fork's pull request
# and an event whose text anyone can write unless the workflow opted in, find or download the release
# binary (checked against SHA256SUMS), run `tendril prompt` with the inputs, write the outputs `result`,
# `structured` and `exit-code`, and the answer, stripped of links and images, to the job summary.
# Inputs arrive as INPUT_* variables and the event as ACTION_* (action.yml sets both); none of them
# reaches the agent, which sees only the workflow's own environment (where its secrets are).
set -uo pipefail

fail() {
  echo "::error title=tendril prompt::$1" >&2
  exit "${2:-1}"
}

# (bash 3.2, macOS's own, has no ${x,,})
truthy() { case "$1" in true | True | TRUE | yes | 1) return 0 ;; *) return 1 ;; esac; }

# --- the event: untrusted text, a fork's pull request ----------------------------------------------
event="${ACTION_EVENT:-${GITHUB_EVENT_NAME:-}}"
head_repo="${ACTION_HEAD_REPO:-}"
base_repo="${ACTION_BASE_REPO:-}"
# A comment, an issue, a discussion, a review or another workflow's run is written by whoever can
# open one, and such a workflow usually feeds that text to the prompt with this workflow's secrets.
case "$event" in
  issue_comment | issues | discussion | discussion_comment | pull_request_review | pull_request_review_comment | workflow_run)
    if ! truthy "${INPUT_ALLOW_UNTRUSTED_EVENTS:-false}"; then
      fail "refusing to run for a $event event: its text comes from whoever can write one, and would reach the agent with this workflow's secrets. Set allow-untrusted-events: true to opt in (and keep that text out of the prompt, or give the job no secrets or write access it must not lose)."
    fi
    ;;
esac

# A pull request whose head repository is not this one (or is gone: a deleted fork) is a fork's.
if [[ "$event" == pull_request* && "$head_repo" != "$base_repo" ]] && ! truthy "${INPUT_ALLOW_FORKS:-false}"; then
  fail "refusing to run for a pull request from the fork ${head_repo:-(deleted)}: its code and prompt would run with this workflow's secrets. Set allow-forks: true to opt in (and run it only on code you trust)."
fi

# --- the binary ---------------------------------------------------------------------------------
platform() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) fail "tendril runs on Linux and macOS runners only, not $(uname -s)" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) fail "no tendril build for the $(uname -m) processor" ;;
  esac
  echo "$os-$arch"
}

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

download() {
  local version="$1" base="$2" name dir
  name="tendril-$version-$(platform).tar.gz"
  dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/tendril-action-$version"
  if [[ -x "$dir/tendril" ]]; then echo "$dir/tendril"; return; fi
  mkdir -p "$dir" || fail "cannot create $dir"
  echo "tendril: downloading $base$name" >&2
  curl -fsSL --retry 3 -o "$dir/$name" "$base$name" || fail "cannot download $base$name"
  curl -fsSL --retry 3 -o "$dir/SHA256SUMS" "${base}SHA256SUMS" || fail "cannot download ${base}SHA256SUMS"
  local want got
  want="$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1 }' "$dir/SHA256SUMS")"
  got="$(sha256 "$dir/$name")"
  [[ -n "$want" ]] || fail "SHA256SUMS at $base lists no $name"
  [[ "$want" == "$got" ]] || fail "$name does not match SHA256SUMS (sha256 $got, expected $want): not unpacked"
  tar -xzf "$dir/$name" -C "$dir" tendril || fail "cannot unpack $name"
  rm -f "$dir/$name"
  echo "$dir/tendril"
}

if [[ -n "${INPUT_TENDRIL:-}" ]]; then
  bin="$INPUT_TENDRIL"
  [[ -x "$bin" ]] || fail "tendril: $bin is not an executable file"
else
  version="${INPUT_VERSION:-}"
  if [[ -z "$version" ]]; then
    version="$(sed -n 's/^  "version": "\([^"]*\)",*$/\1/p' "${GITHUB_ACTION_PATH:-.}/package.json" 2>/dev/null | head -n1)"
    [[ -n "$version" ]] || fail "cannot tell which tendril version to run: set the version input"
  fi
  base="${INPUT_RELEASE_URL:-}"
  if [[ -z "$base" ]]; then
    repo="${ACTION_REPOSITORY:-}"
    # Inside a composite action github.action_repository can be empty; the action's path names it.
    if [[ -z "$repo" && "${GITHUB_ACTION_PATH:-}" =~ /_actions/([^/]+)/([^/]+)/ ]]; then repo="${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"; fi
    [[ -n "$repo" ]] || fail "cannot tell where the release is: set release-url (or tendril, a binary's path)"
    base="https://github.com/$repo/releases/download/v$version/"
  fi
  [[ "$base" == */ ]] || base="$base/"
  bin="$(download "$version" "$base")" || exit 1
fi

# --- the run ------------------------------------------------------------------------------------
[[ -n "${INPUT_PROMPT:-}" ]] || fail "the prompt input is empty" 2
args=(prompt --output json --approve "${INPUT_APPROVE:-ask-deny}")
[[ -n "${INPUT_AGENT:-}" ]] && args+=(--agent "$INPUT_AGENT")
[[ -n "${INPUT_MODEL:-}" ]] && args+=(--model "$INPUT_MODEL")
[[ -n "${INPUT_OUTPUT_SCHEMA:-}" ]] && args+=(--output-schema "$INPUT_OUTPUT_SCHEMA")
[[ -n "${INPUT_MAX_TURNS:-}" ]] && args+=(--max-turns "$INPUT_MAX_TURNS")
[[ -n "${INPUT_TIMEOUT:-}" ]] && args+=(--timeout "$INPUT_TIMEOUT")
[[ -n "${INPUT_MAX_BUDGET_USD:-}" ]] && args+=(--max-budget-usd "$INPUT_MAX_BUDGET_USD")
[[ -n "${INPUT_SANDBOX:-}" ]] && args+=(--sandbox "$INPUT_SANDBOX")
[[ -n "${INPUT_WORKING_DIRECTORY:-}" ]] && args+=(--cwd "$INPUT_WORKING_DIRECTORY")

work="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/tendril-run.XXXXXX")" || fail "cannot create a temporary folder"
trap 'rm -rf "$work"' EXIT
args+=(-o "$work/answer" -)

# The agent gets the workflow's environment without this action's own variables.
clean=()
for name in $(compgen -e); do
  if [[ "$name" == INPUT_* || "$name" == ACTION_* ]]; then clean+=(-u "$name"); fi
done
# What the agent and its model write (the answer, tool titles, its stderr) may hold `::command::`
# lines; the runner obeys none of them while its commands are stopped under a token no one can guess.
token="tendril-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
echo "::stop-commands::$token"
printf '%s' "$INPUT_PROMPT" | env ${clean[@]+"${clean[@]}"} "$bin" "${args[@]}" >"$work/result"
code=$?
echo "::$token::"

# The answer as the job summary renders it: the model's text with its images, links and link
# definitions reduced to their text and HTML img/a (and other embedding) tags removed, so the page
# loads nothing the model chose and no link hides where it goes. Bare URLs stay visible as written.
summary() {
  if ! command -v perl >/dev/null; then
    echo "(The answer is in the step's log: this runner has no perl to strip links and images from it.)"
    return
  fi
  perl -0777 -pe '
    s{<\s*/?\s*(?:img|image|a|picture|source|video|audio|iframe|object|embed|svg|link|meta|base|form)\b[^>]*>}{}gis;
    1 while s{!\[((?:[^\[\]]|\[[^\]]*\])*)\]\s*(?:\([^)]*\)|\[[^\]]*\])}{$1}gs;
    1 while s{\[((?:[^\[\]]|\[[^\]]*\])*)\]\s*(?:\([^)]*\)|\[[^\]]*\])}{$1}gs;
    s{^[ ]{0,3}\[[^\]]+\]:.*$}{}gm;
    s{<((?:https?|ftp|mailto):[^>\s]*)>}{$1}gi;
  ' "$1"
}

# --- the outputs --------------------------------------------------------------------------------
if [[ -s "$work/answer" ]]; then
  echo "::group::answer"
  echo "::stop-commands::$token"
  cat "$work/answer"
  echo "::$token::"
  echo "::endgroup::"
  if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then summary "$work/answer" >>"$GITHUB_STEP_SUMMARY"; fi
fi
structured=""
[[ -n "${INPUT_OUTPUT_SCHEMA:-}" && $code -eq 0 ]] && structured="$(cat "$work/answer")"
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
  # A delimiter no answer can contain by chance or on purpose.
  delim="TENDRIL_$token"
  {
    echo "result<<$delim"
    cat "$work/result"
    echo "$delim"
    echo "structured<<$delim"
    printf '%s\n' "$structured"
    echo "$delim"
    echo "exit-code=$code"
  } >>"$GITHUB_OUTPUT"
fi
if [[ $code -ne 0 ]] && truthy "${INPUT_FAIL_ON_ERROR:-true}"; then exit "$code"; fi
exit 0
