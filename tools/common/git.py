"""git in a tree: the one helper every tool calls git through.

A failure (with check) is a ToolError that names the command and the tree, with
git's own message and the caller's hint: `git rev-parse HEAD in build/linux failed
(exit 128): fatal: ...`.
"""

from common import rel, run


def git(tree, *args, check=True, env=None, input=None, what=None, hint=None, text=True, locks=True):
    """`git -C tree ARGS`, output captured as text (bytes with text=False: file contents and patches
    copied exactly). what: how the error message names the command (default: its first two words and
    the tree); locks=False: --no-optional-locks (a status must not rewrite the index of a tree someone
    else may be using)."""
    cmd = ["git", "-C", str(tree)] + ([] if locks else ["--no-optional-locks"]) + list(args)
    return run(cmd, env=env, input=input, check=check, hint=hint, text=text,
               what=what or f"git {' '.join(command_words(args))} in {rel(tree)}")


def command_words(args):
    """The subcommand and its first argument, past git's own options (`-c name=value`)."""
    args = list(map(str, args))
    while args and args[0].startswith("-"):
        args = args[2:] if args[0] == "-c" else args[1:]
    return args[:2]
