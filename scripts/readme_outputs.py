#!/usr/bin/env python3
"""Keeps the command outputs shown in README.md equal to what the binary prints.

    python3 scripts/readme_outputs.py --check  build/gpufabric   # fails with a diff per stale block
    python3 scripts/readme_outputs.py --update build/gpufabric   # rewrites the blocks (`make readme`)

A shown output is a fenced block right after a marker comment naming the command that prints it:

    <!-- readme-output: gpufabric schedule --trace data/traces/examples/training-mix.csv
           --preset dgx-h100 --compare
         mask: \s(\s+\d+\.\d+)$
    -->
    ```
    ...what the command prints...
    ```

The command is split as a POSIX shell would split it (no pipes, no globs, no variables) and run
with the repository root as working directory, `gpufabric` standing for the binary given, the
locale fixed and every GPUFABRIC_* and NCCL_* variable removed, so that the user's environment
cannot change it; a long command may wrap onto the next lines. Options, one per line inside the
comment, after the command:

    lines: 1-21,30-32   keep these lines of the output (1-based, inclusive)
    grep: REGEX         keep the lines that match REGEX (after `lines:`)
    mask: REGEX         text that differs between runs or checkouts (wall-clock times, the hash
                        of data/ that every data edit changes): what REGEX matches,
                        its first group if it has one, is shown and compared as `[varies]`;
                        repeatable
    exit: N             the exit status the command must end with (default 0)
    output: stdout|stderr|both   what is shown (default stdout)
    timeout: SECONDS    (default 240)

Lines left out by `lines:` or `grep:` are shown as one `...` line per gap, so an excerpt says it is
one. Trailing spaces and trailing blank lines are not compared (editors strip them).

Every fenced block in the README must either carry such a marker or name its language
(```sh, ```text, ```yaml, ...): an unmarked, untagged block is an error, so a new output cannot
be added without saying whether it is checked. Standard library only (Debian's python3).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import difflib
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

MARKER = "<!-- readme-output:"
MASKED = "[varies]"
ELIDED = "..."
DEFAULT_TIMEOUT_S = 240.0
SLOW_S = 10.0  # commands slower than this are named in the summary
OPTION = re.compile(r"^([a-z]+):(?:\s|$)")
FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


class ReadmeError(Exception):
    """A README whose markers or blocks cannot be read (exit 2: the README is the bad input)."""


@dataclasses.dataclass
class Block:
    marker_line: int  # 1-based line of the marker comment
    command: str
    argv: list[str]
    lines: list[tuple[int, int]] | None = None
    grep: re.Pattern[str] | None = None
    masks: list[re.Pattern[str]] = dataclasses.field(default_factory=list)
    exit_status: int = 0
    output: str = "stdout"
    timeout_s: float = DEFAULT_TIMEOUT_S
    body_start: int = 0  # 0-based index of the first line inside the fence
    body_end: int = 0  # 0-based index of the closing fence
    indent: str = ""


@dataclasses.dataclass
class Run:
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    error: str | None = None


def parse_ranges(text: str, where: str) -> list[tuple[int, int]]:
    ranges = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m:
            raise ReadmeError(f"{where}: lines: '{part.strip()}' is not N or N-M")
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        if first < 1 or last < first or (ranges and first <= ranges[-1][1]):
            raise ReadmeError(f"{where}: lines: '{text}' must be increasing ranges from line 1")
        ranges.append((first, last))
    return ranges


def compile_regex(text: str, where: str, key: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as e:
        raise ReadmeError(f"{where}: {key}: '{text}' is not a regular expression ({e})") from None


def apply_option(block: Block, key: str, value: str, where: str) -> None:
    if key == "lines":
        block.lines = parse_ranges(value, where)
    elif key == "grep":
        block.grep = compile_regex(value, where, key)
    elif key == "mask":
        block.masks.append(compile_regex(value, where, key))
    elif key == "exit":
        if not value.isdigit():
            raise ReadmeError(f"{where}: exit: '{value}' is not an exit status")
        block.exit_status = int(value)
    elif key == "output":
        if value not in ("stdout", "stderr", "both"):
            raise ReadmeError(f"{where}: output: '{value}' must be stdout, stderr or both")
        block.output = value
    elif key == "timeout":
        try:
            block.timeout_s = float(value)
        except ValueError:
            block.timeout_s = -1.0
        if not 0 < block.timeout_s <= 3600:
            raise ReadmeError(f"{where}: timeout: '{value}' must be seconds in (0, 3600]")
    else:
        raise ReadmeError(f"{where}: unknown option '{key}' (lines, grep, mask, exit, output, timeout)")


def read_marker(lines: list[str], i: int, path: str) -> tuple[Block, int]:
    """Reads the marker comment starting at lines[i]; returns it and the index after '-->'."""
    where = f"{path}:{i + 1}"
    first = lines[i].strip()[len(MARKER):]
    comment = [first]
    j = i
    while "-->" not in comment[-1]:
        j += 1
        if j >= len(lines):
            raise ReadmeError(f"{where}: readme-output comment is never closed with -->")
        comment.append(lines[j].strip())
    comment[-1] = comment[-1].split("-->", 1)[0]
    # The command runs on until the first option line; long commands wrap over several lines.
    n_command = 1
    while n_command < len(comment) and not OPTION.match(comment[n_command]):
        n_command += 1
    command = " ".join(part.strip() for part in comment[:n_command] if part.strip())
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise ReadmeError(f"{where}: cannot split the command '{command}' ({e})") from None
    if not argv or argv[0] != "gpufabric":
        raise ReadmeError(f"{where}: the command must start with 'gpufabric' (the binary), not '{command}'")
    block = Block(marker_line=i + 1, command=command, argv=argv)
    for k, text in enumerate(comment[n_command:], start=i + 1 + n_command):
        if not text.strip():
            continue
        m = OPTION.match(text)
        if not m:
            raise ReadmeError(f"{path}:{k}: expected 'option: value' after the options began, got '{text}'")
        apply_option(block, m.group(1), text[m.end():].strip(), f"{path}:{k}")
    return block, j + 1


def closing_fence(lines: list[str], start: int, fence: str) -> int:
    for k in range(start, len(lines)):
        m = FENCE.match(lines[k])
        if m and m.group("fence")[0] == fence[0] and len(m.group("fence")) >= len(fence) and not m.group("info").strip():
            return k
    return -1


def parse_readme(text: str, path: str) -> list[Block]:
    lines = text.split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith(MARKER):
            block, i = read_marker(lines, i, path)
            m = FENCE.match(lines[i]) if i < len(lines) else None
            if not m:
                raise ReadmeError(f"{path}:{block.marker_line}: a readme-output comment must be followed at once "
                                  "by the fenced block it checks")
            end = closing_fence(lines, i + 1, m.group("fence"))
            if end < 0:
                raise ReadmeError(f"{path}:{i + 1}: fenced block is never closed")
            block.body_start, block.body_end, block.indent = i + 1, end, m.group("indent")
            blocks.append(block)
            i = end + 1
            continue
        m = FENCE.match(lines[i])
        if m:
            if not m.group("info").strip():
                raise ReadmeError(f"{path}:{i + 1}: a fenced block with no language and no readme-output comment: "
                                  "if it shows what a command prints, put '<!-- readme-output: gpufabric ... -->' "
                                  "before it; otherwise name its language (```sh, ```text)")
            end = closing_fence(lines, i + 1, m.group("fence"))
            if end < 0:
                raise ReadmeError(f"{path}:{i + 1}: fenced block is never closed")
            i = end + 1
            continue
        i += 1
    return blocks


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUFABRIC_", "NCCL_", "LC_", "LANG"))}
    env["LC_ALL"] = "C.UTF-8"
    return env


def run_command(argv: list[str], binary: str, root: Path, timeout_s: float) -> Run:
    started = time.monotonic()
    try:
        done = subprocess.run([binary, *argv[1:]], cwd=root, env=child_env(), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return Run(None, "", "", time.monotonic() - started, f"did not finish within {timeout_s:g} s")
    except OSError as e:
        return Run(None, "", "", time.monotonic() - started, f"could not start {binary}: {e.strerror}")
    return Run(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"),
               time.monotonic() - started)


def normalise(text: str) -> list[str]:
    out = [line.rstrip() for line in text.split("\n")]
    while out and not out[-1]:
        out.pop()
    return out


def excerpt(block: Block, lines: list[str]) -> list[str]:
    """The lines `lines:` and `grep:` keep, with one ELIDED line for each gap."""
    keep = list(range(len(lines)))
    if block.lines is not None:
        if block.lines[-1][1] > len(lines):
            raise ValueError(f"lines: asks for line {block.lines[-1][1]} but the output has {len(lines)} lines")
        keep = [n - 1 for first, last in block.lines for n in range(first, last + 1)]
    if block.grep is not None:
        keep = [n for n in keep if block.grep.search(lines[n])]
        if not keep:
            raise ValueError(f"grep: '{block.grep.pattern}' matches no line of the output")
    out = []
    previous = -1
    for n in keep:
        if n != previous + 1:
            out.append(ELIDED)
        out.append(lines[n])
        previous = n
    if keep and keep[-1] != len(lines) - 1:
        out.append(ELIDED)
    return out


def apply_masks(block: Block, lines: list[str], unused: set[str]) -> list[str]:
    def replace(m: re.Match[str]) -> str:
        if m.re.groups == 0 or m.start(1) < 0:
            return MASKED
        return m.string[m.start():m.start(1)] + MASKED + m.string[m.end(1):m.end()]

    out = []
    for line in lines:
        for mask in block.masks:
            line, count = mask.subn(replace, line)
            if count:
                unused.discard(mask.pattern)
        out.append(line.rstrip())
    return out


def render(block: Block, run: Run) -> tuple[list[str] | None, str | None, list[str]]:
    """The block's expected body, or why there is none; and the warnings (masks that match nothing)."""
    if run.error:
        return None, run.error, []
    if run.returncode != block.exit_status:
        status = f"exit status {run.returncode}" if run.returncode >= 0 else f"signal {-run.returncode}"
        stderr = run.stderr.strip() or "(nothing on stderr)"
        return None, f"ended with {status}, not {block.exit_status}:\n{stderr}", []
    text = {"stdout": run.stdout, "stderr": run.stderr, "both": run.stdout + run.stderr}[block.output]
    try:
        lines = excerpt(block, normalise(text))
    except ValueError as e:
        return None, str(e), []
    unused = {m.pattern for m in block.masks}
    lines = apply_masks(block, lines, unused)
    if any(FENCE.match(line) for line in lines):
        return None, "the output holds a line that would close the fenced block", []
    warnings = [f"mask: '{p}' matches nothing in the output; remove it if the varying text is gone" for p in unused]
    return [block.indent + line if line else line for line in lines], None, warnings


def run_all(blocks: list[Block], binary: str, root: Path, jobs: int) -> dict[tuple[str, ...], Run]:
    """Runs each distinct command once, `jobs` at a time (the slowest sets the wall time)."""
    commands = {}
    for block in blocks:
        key = tuple(block.argv)
        commands[key] = max(commands.get(key, 0.0), block.timeout_s)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {key: pool.submit(run_command, list(key), binary, root, t) for key, t in commands.items()}
        return {key: f.result() for key, f in futures.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", metavar="BINARY", help="fail with a diff where a block differs from the output")
    mode.add_argument("--update", metavar="BINARY", help="rewrite every block with the output")
    parser.add_argument("--readme", default=None, help="the file (default: README.md at the repository root)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="commands run at once")
    args = parser.parse_args()

    root = Path(__file__).resolve().parent.parent
    readme = Path(args.readme).resolve() if args.readme else root / "README.md"
    binary = os.path.abspath(args.check or args.update)
    if not os.access(binary, os.X_OK):
        print(f"readme_outputs: {binary} is not an executable (build it first)", file=sys.stderr)
        return 2
    try:
        text = readme.read_text(encoding="utf-8")
        blocks = parse_readme(text, str(readme.relative_to(root) if readme.is_relative_to(root) else readme))
    except (OSError, ReadmeError) as e:
        print(f"readme_outputs: {e}", file=sys.stderr)
        return 2

    started = time.monotonic()
    runs = run_all(blocks, binary, root, args.jobs)
    lines = text.split("\n")
    name = readme.name
    failures, notes, replacements = 0, [], []
    for block in blocks:
        run = runs[tuple(block.argv)]
        body, error, warnings = render(block, run)
        notes += [f"{name}:{block.marker_line}: {w}" for w in warnings]
        if run.seconds > SLOW_S:
            notes.append(f"{name}:{block.marker_line}: '{block.command}' took {run.seconds:.1f} s")
        if error is not None:
            failures += 1
            print(f"{name}:{block.marker_line}: '{block.command}': {error}\n", file=sys.stderr)
            continue
        shown = [line.rstrip() for line in lines[block.body_start:block.body_end]]
        if shown != body:
            replacements.append((block, body))
            if args.check:
                diff = difflib.unified_diff(shown, body, f"{name}:{block.body_start + 1} (shown)",
                                            f"{block.command} (printed now)", lineterm="")
                sys.stdout.write("\n".join(diff) + "\n\n")

    for note in notes:
        print(f"readme_outputs: note: {note}", file=sys.stderr)
    elapsed = time.monotonic() - started
    if failures:
        print(f"readme_outputs: {failures} of {len(blocks)} commands failed; {name} left as it was", file=sys.stderr)
        return 1
    if args.check:
        if replacements:
            print(f"readme_outputs: {len(replacements)} of {len(blocks)} blocks differ from what {binary} prints; "
                  "if the new output is right, run `make readme` and check the prose around them", file=sys.stderr)
            return 1
        print(f"readme_outputs: {len(blocks)} blocks match ({elapsed:.1f} s)")
        return 0
    # Bottom up, so that rewriting one block leaves the line numbers of those above it valid.
    for block, body in reversed(replacements):
        lines[block.body_start:block.body_end] = body
    if replacements:
        temporary = readme.with_name(f".{readme.name}.{os.getpid()}.tmp")
        temporary.write_text("\n".join(lines), encoding="utf-8")
        os.replace(temporary, readme)  # never a half-written README
    print(f"readme_outputs: {len(replacements)} of {len(blocks)} blocks rewritten ({elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
